import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import { browserEarly, registeredChecks, runChecks, shuffledOrder } from './runner.ts'

// SEC-01 is exclusive (it lowers the token endpoint's limit) and needs no browser; DISC-01 is not
const ids = ['DISC-01', 'SEC-01', 'DISC-02'] as const
const TWIN_NOTE = /^ran on a twin of the embedded server/

describe('runChecks: the exclusive checks on a twin of the embedded server', () => {
  let embedded: Embedded
  beforeAll(async () => {
    embedded = await startEmbedded()
  }, 60_000)
  afterAll(async () => {
    await embedded.stop()
  })

  test('beside the rest, on the twin, which is stopped afterwards; results in the order asked', async () => {
    const twins: Embedded[] = []
    let stopped = 0
    const results = await runChecks(embedded.target, {
      ids: [...ids],
      concurrency: 2,
      twin: async () => {
        const twin = await embedded.twin()
        twins.push(twin)
        return {
          target: twin.target,
          stop: async () => {
            stopped++
            await twin.stop()
          },
        }
      },
    })
    expect(results.map((r) => [r.id, r.verdict])).toEqual([
      ['DISC-01', 'pass'],
      ['SEC-01', 'pass'],
      ['DISC-02', 'pass'],
    ])
    expect(twins).toHaveLength(1)
    expect(twins[0]?.target.baseUrl).not.toBe(embedded.target.baseUrl)
    expect(stopped).toBe(1)
    const sec01 = results.find((r) => r.id === 'SEC-01')
    expect(sec01?.notes.some((n) => TWIN_NOTE.test(n))).toBe(true)
    // its requests went to the twin, not the target
    expect(sec01?.exchanges.every((e) => e.url.startsWith(twins[0]?.target.baseUrl ?? '?'))).toBe(
      true,
    )
    expect(results.find((r) => r.id === 'DISC-01')?.notes.some((n) => TWIN_NOTE.test(n))).toBe(
      false,
    )
  }, 60_000)

  test('a twin that does not start is told, and the exclusive check runs alone on the target', async () => {
    const notices: string[] = []
    const results = await runChecks(embedded.target, {
      ids: [...ids],
      concurrency: 2,
      onNotice: (m) => notices.push(m),
      twin: () => Promise.reject(new Error('no port left')),
    })
    expect(notices).toEqual([
      'the exclusive checks run alone on the target: its twin did not start (no port left)',
    ])
    const sec01 = results.find((r) => r.id === 'SEC-01')
    expect(sec01?.verdict).toBe('pass')
    expect(sec01?.notes.some((n) => TWIN_NOTE.test(n))).toBe(false)
  }, 60_000)

  test('--parallel 1 starts no twin: one check at a time means one target', async () => {
    let asked = 0
    const results = await runChecks(embedded.target, {
      ids: [...ids],
      concurrency: 1,
      twin: () => {
        asked++
        return embedded.twin()
      },
    })
    expect(asked).toBe(0)
    expect(results.map((r) => r.verdict)).toEqual(['pass', 'pass', 'pass'])
  }, 60_000)
})

describe('browserEarly', () => {
  test('the checks that drive the browser start one in two from the first, every check once', () => {
    const ids = ['DISC-01', 'DISC-02', 'DISC-03', 'LOGIN-01', 'LOGOUT-01', 'JWKS-01'] as const
    expect(browserEarly([...ids])).toEqual([
      'LOGIN-01',
      'DISC-01',
      'LOGOUT-01',
      'DISC-02',
      'DISC-03',
      'JWKS-01',
    ])
  })
})

describe('shuffledOrder', () => {
  const ids = registeredChecks()
  test('a permutation of the checks, the same for the same seed, another for another seed', () => {
    const a = shuffledOrder(ids, 29)
    expect([...a].sort()).toEqual([...ids].sort())
    expect(shuffledOrder(ids, 29)).toEqual(a)
    expect(a).not.toEqual(ids)
    expect(shuffledOrder(ids, 30)).not.toEqual(a)
    // the whole 32-bit range is a seed, and the input is not changed
    expect([...shuffledOrder(ids, 0xffffffff)].sort()).toEqual([...ids].sort())
    expect(ids).toEqual(registeredChecks())
  })
})
