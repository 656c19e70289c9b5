import { describe, expect, test } from 'vitest'
import { groupInsert, groupLookup } from './group-commit.ts'

/** A promise settled from outside, to hold a write in flight. */
function deferred<T>() {
  let resolve!: (value: T) => void
  let reject!: (err: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** A write whose calls are recorded and held until the test releases them, in order. */
function heldWrites() {
  const calls: { rows: string[]; done: ReturnType<typeof deferred<undefined>> }[] = []
  const write = (rows: string[]) => {
    const done = deferred<undefined>()
    calls.push({ rows, done })
    return done.promise
  }
  return { calls, write }
}

const settled = async <T>(p: Promise<T>) => {
  let state = 'pending'
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  )
  await new Promise((r) => setTimeout(r, 0))
  return state
}

describe('group commit of inserts', () => {
  test('a row with nothing in flight is written at once, alone', async () => {
    const { calls, write } = heldWrites()
    const insert = groupInsert(write, { maxRows: 10, inFlight: 1 })
    const a = insert('a')
    expect(calls.map((c) => c.rows)).toEqual([['a']])
    calls[0]?.done.resolve(undefined)
    await a
  })

  test('rows that arrive during a write go together in the next statement', async () => {
    const { calls, write } = heldWrites()
    const insert = groupInsert(write, { maxRows: 10, inFlight: 1 })
    const a = insert('a')
    const rest = ['b', 'c', 'd'].map((r) => insert(r))
    expect(calls).toHaveLength(1)
    calls[0]?.done.resolve(undefined)
    await a
    await new Promise((r) => setTimeout(r, 0))
    expect(calls.map((c) => c.rows)).toEqual([['a'], ['b', 'c', 'd']])
    // none of b, c, d is reported written before its statement is
    expect(await settled(Promise.all(rest))).toBe('pending')
    calls[1]?.done.resolve(undefined)
    await Promise.all(rest)
  })

  test('a failed statement fails exactly its own rows; the next batch still goes', async () => {
    const { calls, write } = heldWrites()
    const insert = groupInsert(write, { maxRows: 10, inFlight: 1 })
    const a = insert('a')
    const b = insert('b')
    const c = insert('c')
    calls[0]?.done.resolve(undefined)
    await a
    await new Promise((r) => setTimeout(r, 0))
    const d = insert('d')
    calls[1]?.done.reject(new Error('database is gone'))
    await expect(b).rejects.toThrow('database is gone')
    await expect(c).rejects.toThrow('database is gone')
    await new Promise((r) => setTimeout(r, 0))
    expect(calls.map((x) => x.rows)).toEqual([['a'], ['b', 'c'], ['d']])
    calls[2]?.done.resolve(undefined)
    await d
  })

  test('batches hold at most maxRows, and up to inFlight statements run at once', async () => {
    const { calls, write } = heldWrites()
    const insert = groupInsert(write, { maxRows: 2, inFlight: 2 })
    const all = ['a', 'b', 'c', 'd', 'e', 'f'].map((r) => insert(r))
    // a and b each found a free writer; the others wait for one
    expect(calls.map((c) => c.rows)).toEqual([['a'], ['b']])
    calls[0]?.done.resolve(undefined)
    await new Promise((r) => setTimeout(r, 0))
    expect(calls.map((c) => c.rows)).toEqual([['a'], ['b'], ['c', 'd']])
    for (let i = 1; i < 4; i++) {
      calls[i]?.done.resolve(undefined)
      await new Promise((r) => setTimeout(r, 0))
    }
    expect(calls.map((c) => c.rows)).toEqual([['a'], ['b'], ['c', 'd'], ['e', 'f']])
    await Promise.all(all)
  })
})

describe('grouped lookups', () => {
  test('lookups during a read go together, once per key, and each gets its own row', async () => {
    const reads: string[][] = []
    const first = deferred<Map<string, string>>()
    const lookup = groupLookup<string, string>(
      (keys) => {
        reads.push(keys)
        return reads.length === 1
          ? first.promise
          : Promise.resolve(
              new Map(keys.filter((k) => k !== 'missing').map((k) => [k, `row-${k}`])),
            )
      },
      { maxKeys: 10, inFlight: 1 },
    )
    const a = lookup('a')
    const later = [lookup('b'), lookup('missing'), lookup('b')]
    first.resolve(new Map([['a', 'row-a']]))
    expect(await a).toBe('row-a')
    expect(await Promise.all(later)).toEqual(['row-b', undefined, 'row-b'])
    expect(reads).toEqual([['a'], ['b', 'missing']])
  })

  test('a failed read rejects its callers only', async () => {
    let fail = true
    const lookup = groupLookup<string, string>(
      (keys) =>
        fail
          ? Promise.reject(new Error('database is gone'))
          : Promise.resolve(new Map(keys.map((k) => [k, k]))),
      { maxKeys: 10, inFlight: 1 },
    )
    await expect(lookup('a')).rejects.toThrow('database is gone')
    fail = false
    expect(await lookup('a')).toBe('a')
  })
})
