import type { Knex } from 'knex'

/**
 * The batching under group commit: an input that arrives while no statement is in flight
 * (fewer than `inFlight`) is run at once; inputs that arrive while one is in flight wait for it
 * and then run together, at most `max` in one call of `run`. Each caller settles with its own
 * input's outcome from the statement that carried it: resolved once that statement has
 * finished, rejected if it failed. A statement starts only after every input it carries was
 * asked for.
 */
function batched<In, Out>(
  run: (inputs: In[]) => Promise<(input: In) => Out>,
  options: { max: number; inFlight: number },
): (input: In) => Promise<Out> {
  const queue: { input: In; resolve: (out: Out) => void; reject: (err: unknown) => void }[] = []
  let running = 0
  const drain = async (): Promise<void> => {
    running++
    try {
      for (let batch = queue.splice(0, options.max); batch.length > 0;) {
        try {
          const outcome = await run(batch.map((b) => b.input))
          for (const b of batch) b.resolve(outcome(b.input))
        } catch (err) {
          for (const b of batch) b.reject(err)
        }
        batch = queue.splice(0, options.max)
      }
    } finally {
      running--
    }
  }
  return (input) =>
    new Promise<Out>((resolve, reject) => {
      queue.push({ input, resolve, reject })
      if (running < options.inFlight) void drain()
    })
}

/**
 * Group commit for one table's inserts: rows that arrive while a write is in flight go to the
 * database together, as one multi-row INSERT (one statement, so one commit: all of its rows or
 * none). Each caller's promise resolves only once its own row is committed, and rejects when
 * the statement that carried it failed, so no caller ever returns a token whose row is not in
 * the store.
 *
 * Why: on SQLite every statement is a round trip to libuv's thread pool and a commit to the WAL;
 * issuing a token cost about 0.35 ms of CPU for its insert alone, a third of the request
 * (README, Benchmarks).
 */
export function groupInsert<Row>(
  write: (rows: Row[]) => Promise<void>,
  options: { maxRows: number; inFlight: number },
): (row: Row) => Promise<void> {
  return batched(
    async (rows: Row[]) => {
      await write(rows)
      return () => undefined
    },
    { max: options.maxRows, inFlight: options.inFlight },
  )
}

/**
 * The same for lookups by key: reads that arrive while one is in flight go together as one
 * `WHERE key IN (…)` statement, each key asked once. A read always runs in a statement that
 * starts after it was asked for, so it sees every write committed before it, as a statement of
 * its own would.
 */
export function groupLookup<Key, Row>(
  read: (keys: Key[]) => Promise<Map<Key, Row>>,
  options: { maxKeys: number; inFlight: number },
): (key: Key) => Promise<Row | undefined> {
  return batched(
    async (keys: Key[]) => {
      const rows = await read([...new Set(keys)])
      return (key: Key) => rows.get(key)
    },
    { max: options.maxKeys, inFlight: options.inFlight },
  )
}

/** Statements at once: SQLite has one connection, PostgreSQL's pool takes several. */
const inFlight = (knex: Knex): number =>
  (knex.client as { config: { client: unknown } }).config.client === 'sqlite3' ? 1 : 4

/** Grouped inserts into `table` (up to 100 rows a statement). */
export const groupedInsert = (knex: Knex, table: string) =>
  groupInsert<Record<string, unknown>>(
    async (rows) => {
      await knex(table).insert(rows)
    },
    { maxRows: 100, inFlight: inFlight(knex) },
  )

/** Grouped lookups of `table`'s rows by their `id` column (up to 100 ids a statement). */
export const groupedById = <Row extends { id: string }>(knex: Knex, table: string) =>
  groupLookup<string, Row>(
    async (ids) => {
      const rows = (await knex(table).whereIn('id', ids)) as Row[]
      return new Map(rows.map((r) => [r.id, r] as const))
    },
    { maxKeys: 100, inFlight: inFlight(knex) },
  )
