import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import knexFactory, { type Knex } from 'knex'
import * as initial from './migrations/0001-initial.ts'

interface Migration {
  up(knex: Knex): Promise<void>
  down(knex: Knex): Promise<void>
}

/** The migrations as a static, ordered, type-checked list (STYLE.md §2.3). */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [['0001-initial', initial]]

const migrationSource: Knex.MigrationSource<readonly [string, Migration]> = {
  getMigrations: () => Promise.resolve([...MIGRATIONS]),
  getMigrationName: ([name]) => name,
  getMigration: ([, migration]) => Promise.resolve(migration),
}

/**
 * Opens the database named by `databaseUrl` (`sqlite::memory:`, `sqlite:PATH`, `postgres://…`);
 * for PostgreSQL, `schema` keeps the tables in their own schema.
 */
export function openDatabase(databaseUrl: string, schema?: string): Knex {
  if (databaseUrl.startsWith('sqlite:')) {
    const filename = databaseUrl.slice('sqlite:'.length)
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true })
    return knexFactory({
      client: 'sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      // One connection: an in-memory database exists per connection, and SQLite serialises
      // writers anyway. WAL lets readers of the file proceed during a write.
      pool: {
        min: 1,
        max: 1,
        afterCreate: (
          conn: { run: (sql: string, cb: (err: Error | null) => void) => void },
          done: (err: Error | null) => void,
        ) => {
          // WAL with synchronous=NORMAL: a commit is in the OS before the response, so a
          // killed process (kill -9) loses nothing; only a power cut can lose the last commits.
          // FULL's fsync per commit capped token issuance at the disk's flush rate.
          const pragmas =
            filename === ':memory:'
              ? ['PRAGMA foreign_keys = ON']
              : [
                  'PRAGMA journal_mode = WAL',
                  'PRAGMA synchronous = NORMAL',
                  'PRAGMA foreign_keys = ON',
                ]
          const next = (i: number): void => {
            const sql = pragmas[i]
            if (sql === undefined) return done(null)
            conn.run(sql, (err) => (err ? done(err) : next(i + 1)))
          }
          next(0)
        },
      },
    })
  }
  return knexFactory({
    client: 'pg',
    connection: databaseUrl,
    pool: { min: 0, max: 10 },
    // a lost database must turn into 503s within seconds, not after knex's default minute
    acquireConnectionTimeout: 5000,
    ...(schema ? { searchPath: [schema] } : {}),
    log: {
      // a refused connection is the store's own event (storage-unavailable, 503s, and at start
      // the retry that names DATABASE_URL): knex's stack trace per attempt only buries it
      warn: (message: unknown) => {
        if (!String(message).startsWith('Acquire connection error')) console.warn(message)
      },
    },
  })
}

interface PgConnection {
  query(sql: string, values?: unknown[]): Promise<unknown>
}

/**
 * Brings the schema up to date (creating the PostgreSQL schema first when one is named). On
 * PostgreSQL, processes starting together on an empty database take turns through an advisory
 * lock held on a connection of its own: `create schema if not exists` and knex's creation of
 * its migrations table both fail when two sessions race them.
 */
export async function migrate(knex: Knex, schema?: string): Promise<void> {
  const run = async (): Promise<void> => {
    // the identifier is validated by the config schema; knex quotes it
    if (schema) await knex.raw('create schema if not exists ??', [schema])
    await knex.migrate.latest({ migrationSource, ...(schema ? { schemaName: schema } : {}) })
  }
  if ((knex.client as { config: { client: unknown } }).config.client !== 'pg') return run()
  const client = knex.client as {
    acquireConnection(): Promise<PgConnection>
    releaseConnection(connection: PgConnection): Promise<void>
  }
  const key = `idp-migrate:${schema ?? ''}`
  const connection = await client.acquireConnection()
  try {
    await connection.query('select pg_advisory_lock(hashtext($1))', [key])
    try {
      await run()
    } finally {
      await connection.query('select pg_advisory_unlock(hashtext($1))', [key])
    }
  } finally {
    await client.releaseConnection(connection)
  }
}
