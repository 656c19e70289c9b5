import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { probeLimit, type Probe, type ProbeOutcome } from './checks/rate-limit.ts'
import type { CheckContext } from './harness/check.ts'
import { CheckFailure } from './harness/expect.ts'

// Issue #30: the 429 probe of RATE-05 (and RATE-01/03) against a deployment, on a fake clock: a
// fixed-window limiter whose window rolls over during the count, on a machine whose requests
// are slow, behind a proxy that answers some requests itself (without the X-RateLimit headers).
// A limiter that works is never a failure: a window that began during the count is recognised,
// counted again once when the rateLimitBudget covers it, else inconclusive; the "count starts
// in the next window" wait is bounded and taken only when the window ends too soon.

/** 2023-11-14T22:13:20Z: a whole number of 10-s (and 4-s, 2-s) windows since the epoch. */
const T0 = 1_700_000_000_000

interface Limiter {
  readonly limit: number
  /** Window length, seconds (fixed windows, aligned on the epoch as the reference server's). */
  readonly window: number
  /** Seconds the server's clock is ahead of the harness's. */
  readonly skew?: number
  /** The n-th requests (from 1) a proxy answers itself, 502 without the X-RateLimit headers. */
  readonly proxied?: ReadonlySet<number>
  /** Whether the proxied requests reached the limiter (and were counted) before the proxy failed. */
  readonly proxiedCounted?: boolean
  /** false: past the limit it answers 200 all the same (a limiter that never refuses). */
  readonly refuses?: boolean
}

/** A fixed-window limiter on the fake clock: the answer to the next request. */
function limiterOf(l: Limiter): () => Probe {
  let windowStart = NaN
  let count = 0
  let n = 0
  return () => {
    n++
    const proxied = l.proxied?.has(n) ?? false
    const now = Math.floor(Date.now() / 1000 + (l.skew ?? 0))
    const start = now - (now % l.window)
    if (start !== windowStart) {
      windowStart = start
      count = 0
    }
    if (proxied && l.proxiedCounted === false) return { status: 502, header: () => null }
    count++
    if (proxied) return { status: 502, header: () => null }
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(l.limit),
      'x-ratelimit-remaining': String(Math.max(0, l.limit - count)),
      'x-ratelimit-reset': String(start + l.window),
    }
    const status = count > l.limit && l.refuses !== false ? 429 : 200
    return { status, header: (name) => headers[name] ?? null }
  }
}

interface Run {
  readonly outcome?: ProbeOutcome
  /** The CheckFailure's message: the probe's FAIL. */
  readonly failure?: string
  readonly notes: readonly string[]
  readonly sent: number
  /** Fake milliseconds the probe took. */
  readonly tookMs: number
}

/**
 * probeLimit against `l` at a deployment (no controls), from `startAtMs`; the n-th request
 * takes `latencyMs(n)`, and the limiter answers it half way. `concurrent`: the count sends
 * several requests at a time, as a deployment's API probes do (one after the other otherwise,
 * as the login form's).
 */
async function probe(
  l: Limiter,
  options: {
    latencyMs: (n: number) => number
    budget: number
    startAtMs: number
    concurrent?: boolean
  },
): Promise<Run> {
  vi.setSystemTime(options.startAtMs)
  const answer = limiterOf(l)
  let sent = 0
  const notes: string[] = []
  const ctx = {
    target: { controls: undefined, rateLimitBudget: options.budget },
    note: (m: string) => notes.push(m),
    timeLeftMs: () => 60_000,
    extendTimeout: () => undefined,
  } as unknown as CheckContext
  const send = (): Promise<Probe> =>
    new Promise((resolve) => {
      const half = options.latencyMs(++sent) / 2
      setTimeout(() => {
        const res = answer()
        setTimeout(() => resolve(res), half)
      }, half)
    })
  const concurrent = options.concurrent ?? false
  const settled = probeLimit(ctx, 'public', 'discovery', send, 'leave', concurrent).then(
    (outcome): Pick<Run, 'outcome' | 'failure'> => ({ outcome }),
    (err: unknown) => {
      if (err instanceof CheckFailure) return { failure: err.message }
      throw err
    },
  )
  await vi.runAllTimersAsync()
  return { ...(await settled), notes, sent, tookMs: Date.now() - options.startAtMs }
}

const every = (ms: number) => () => ms

describe('the 429 probe of a deployment, on a fake clock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  test('a window that began next to an answer without the headers is seen: inconclusive, not a failure', async () => {
    // 3 per 10 s; the third request, the first of the next window, answered by a proxy: the
    // fourth shows the same Remaining as the second, with a later Reset
    const run = await probe(
      { limit: 3, window: 10, proxied: new Set([3]) },
      { latencyMs: every(100), budget: 4, startAtMs: T0 + 9_750 },
    )
    expect(run.failure).toBeUndefined()
    expect(run.outcome).toEqual({
      unprobed:
        'discovery: a new rate-limit window began during the probe (X-RateLimit-Remaining 1, X-RateLimit-Reset 1700000020), so a missing 429 proves nothing',
      why: 'new window',
    })
  })

  test('answers a proxy gave without reaching the limiter: inconclusive, not a failure', async () => {
    const run = await probe(
      { limit: 3, window: 600, proxied: new Set([2]), proxiedCounted: false },
      { latencyMs: every(100), budget: 4, startAtMs: T0 },
    )
    expect(run.failure).toBeUndefined()
    expect(run.outcome).toEqual({
      unprobed:
        'discovery: 1 of the answers counted carried no X-RateLimit-Remaining and -Reset, so a window that began among them is not seen: a missing 429 proves nothing',
      why: 'new window',
    })
  })

  test('a slow machine whose count outlasts the window: counted again when the budget covers it', async () => {
    // the first request is quick, so the count looks shorter than the 3 s left in the window;
    // the others take 1.5 s each
    const slow = (n: number) => (n === 1 ? 10 : 1_500)
    const start = T0 + 7_000
    const covered = await probe(
      { limit: 3, window: 10 },
      { latencyMs: slow, budget: 12, startAtMs: start },
    )
    expect(covered.failure).toBeUndefined()
    expect(covered.outcome && 'limited' in covered.outcome).toBe(true)
    expect(covered.notes).toContain(
      'discovery: a new rate-limit window began during the probe; counted again in it',
    )
    expect(covered.sent).toBeLessThanOrEqual(12)
    const short = await probe(
      { limit: 3, window: 10 },
      { latencyMs: slow, budget: 4, startAtMs: start },
    )
    expect(short.failure).toBeUndefined()
    expect(short.outcome).toMatchObject({ why: 'new window' })
  })

  test('a window about to end: the count starts in the next one, after a bounded wait', async () => {
    const run = await probe(
      { limit: 3, window: 10 },
      { latencyMs: every(100), budget: 12, startAtMs: T0 + 9_750 },
    )
    expect(run.outcome && 'limited' in run.outcome && run.outcome.sent).toBe(5)
    expect(run.notes).toContain(
      "discovery: the window's X-RateLimit-Reset was 2 s away, less than the count takes: the count starts in the next window",
    )
    // until the Reset and a second more, and the count
    expect(run.tookMs).toBeLessThan(3_000)
  })

  for (const concurrent of [false, true]) {
    const how = concurrent ? ', 8 at a time' : ''
    test(`a limiter that never refuses still fails, by the count${how}`, async () => {
      const run = await probe(
        { limit: 3, window: 600, refuses: false },
        { latencyMs: every(100), budget: 12, startAtMs: T0, concurrent },
      )
      expect(run.failure).toBe(
        'discovery: no 429 after 4 requests, though X-RateLimit-Limit is 3 (INTERFACE.md §7)',
      )
    })

    test(`a limiter that works is never a failure, and the budget is never overspent${how}`, async () => {
      const wrong: string[] = []
      const seen = new Set<string>()
      for (const limit of [3, 10])
        for (const window of [1, 2, 10])
          for (const latency of [5, 400, 1_600])
            for (const skew of [-2, 0, 1.5])
              for (const budget of [limit + 1, 3 * limit])
                for (const proxied of [new Set<number>(), new Set([3]), new Set([2, 4])])
                  for (const proxiedCounted of [true, false])
                    for (let at = 0; at < window * 1000; at += 500) {
                      const l = { limit, window, skew, proxied, proxiedCounted }
                      const run = await probe(l, {
                        latencyMs: (n) => (n === 1 ? 5 : latency),
                        budget,
                        startAtMs: T0 + at,
                        concurrent,
                      })
                      const what = `${JSON.stringify({ ...l, proxied: [...proxied] })} ${latency} ms, budget ${budget}, +${at} ms`
                      if (run.failure) wrong.push(`${what}: ${run.failure}`)
                      if (run.sent > budget) wrong.push(`${what}: ${run.sent} requests sent`)
                      seen.add(run.outcome && 'limited' in run.outcome ? 'limited' : 'inconclusive')
                    }
      expect(wrong.slice(0, 5)).toEqual([])
      // both ways out were taken: the grid is not all one kind
      expect([...seen].sort()).toEqual(['inconclusive', 'limited'])
    }, 120_000)
  }
})
