import { describe, expect, test } from 'vitest'
import { countTo429, outsideWindow, type CountedAnswer } from './rate-count.ts'

// Issue #29, done-when 3: a deployment's probe is sent several requests at a time so that it
// fits in a window on a loaded machine. Out-of-order answers within one window are no new
// window; a counter that starts again is one; a limit that never answers 429 is still found
// missing (never a pass); and every request is awaited before the count returns.

/** A fixed-window limiter whose answers come back in a shuffled order (each after a delay). */
function limiter(options: {
  limit: number
  /** the server's count starts again at this request (a new window, the same Reset) */
  rollAt?: number
  /** the new window's Reset is later (a new window by the clock) */
  laterReset?: boolean
  answers429?: boolean
  /** the counter never counts (Remaining stays) */
  stuck?: boolean
}) {
  let count = 0
  let requests = 0
  let reset = 1000
  let inFlight = 0
  let most = 0
  let settled = 0
  const send = async (): Promise<CountedAnswer> => {
    requests++
    if (requests === options.rollAt) {
      count = 0
      if (options.laterReset) reset += 60
    }
    if (!options.stuck) count++
    const status = count > options.limit && options.answers429 !== false ? 429 : 401
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(options.limit),
      'x-ratelimit-remaining': String(Math.max(0, options.limit - Math.max(count, 1))),
      'x-ratelimit-reset': String(reset),
    }
    inFlight++
    most = Math.max(most, inFlight)
    // answers arrive out of order: later requests may overtake earlier ones
    await new Promise((resolve) => setTimeout(resolve, ((requests * 7) % 5) * 3))
    inFlight--
    settled++
    return { status, header: (name) => headers[name] ?? null }
  }
  return {
    send,
    stats: () => ({ requests, most, settled, inFlight }),
  }
}

describe('outsideWindow', () => {
  const start = { remaining: 9, reset: 1000 }
  test('an answer overtaken by later ones (Remaining above the lowest, within the bound) is the same window', () => {
    // sent after 2 answers had arrived: counted after them, so Remaining at most 6
    expect(outsideWindow(start, 3, 2, { remaining: 6, reset: 1000 })).toBe(false)
  })
  test('Remaining above what the count allows is a new window', () => {
    expect(outsideWindow(start, 5, 3, { remaining: 9, reset: 1000 })).toBe(true)
  })
  test('a counter that never counts down (the same Remaining and Reset) is no new window', () => {
    expect(outsideWindow(start, 9, 5, { remaining: 9, reset: 1000 })).toBe(false)
  })
  test('the same Remaining with a later Reset is a new window', () => {
    expect(outsideWindow(start, 9, 5, { remaining: 9, reset: 1060 })).toBe(true)
  })
  test('no headers: no new window', () => {
    expect(outsideWindow(start, 9, 5, { remaining: NaN, reset: NaN })).toBe(false)
  })
})

describe('countTo429 with requests in flight at once', () => {
  const run = async (
    server: ReturnType<typeof limiter>,
    more: { needed: number; budget?: number; restarts?: number },
  ) => {
    const start = await server.send()
    const outcome = await countTo429({
      send: server.send,
      start,
      needed: more.needed,
      concurrency: 4,
      budget: more.budget ?? 100,
      restarts: more.restarts ?? 0,
    })
    // every request the count sent has been answered before it returned
    expect(server.stats().inFlight).toBe(0)
    expect(server.stats().settled).toBe(server.stats().requests)
    expect(server.stats().most).toBeLessThanOrEqual(4)
    return outcome
  }

  test('a limit of 10 answers 429 at the 11th: limited, within the count', async () => {
    const server = limiter({ limit: 10 })
    const outcome = await run(server, { needed: 11 })
    expect('limited' in outcome && outcome.limited.status).toBe(429)
    expect(server.stats().most).toBeGreaterThan(1)
  })

  test('an advertised limit that never answers 429: unlimited after one window of answers', async () => {
    const server = limiter({ limit: 10, answers429: false })
    const outcome = await run(server, { needed: 11 })
    expect(outcome).toEqual({ unlimited: true, sent: 10 })
  })

  test('a counter that never counts and never answers 429: unlimited, not a new window', async () => {
    const server = limiter({ limit: 10, answers429: false, stuck: true })
    const outcome = await run(server, { needed: 11 })
    expect('unlimited' in outcome).toBe(true)
  })

  test('a window that starts again (same Reset) with no budget to count again: rolled over', async () => {
    const server = limiter({ limit: 10, answers429: false, rollAt: 6 })
    const outcome = await run(server, { needed: 11, budget: 11 })
    expect('rolledOver' in outcome).toBe(true)
  })

  test('a window that starts again (later Reset), the budget covering it: counted again, then 429', async () => {
    const server = limiter({ limit: 10, rollAt: 6, laterReset: true })
    const restarts: number[] = []
    const start = await server.send()
    const outcome = await countTo429({
      send: server.send,
      start,
      needed: 11,
      concurrency: 4,
      budget: 40,
      restarts: 2,
      onRestart: (w) => restarts.push(w.reset),
    })
    expect('limited' in outcome).toBe(true)
    expect(restarts).toEqual([1060])
  })

  test('a window that starts again without a 429 after: unlimited only after a whole new window', async () => {
    const server = limiter({ limit: 10, answers429: false, rollAt: 6 })
    const outcome = await run(server, { needed: 11, budget: 40, restarts: 1 })
    expect('unlimited' in outcome).toBe(true)
    // 5 before the new window, its first answer and 10 more after it (some in flight at the turn)
    expect(server.stats().requests).toBeGreaterThanOrEqual(16)
  })

  test('a request that fails ends the count with its error, after the others settled', async () => {
    let n = 0
    const server = limiter({ limit: 10 })
    const failing = async (): Promise<CountedAnswer> => {
      if (++n === 3) throw new Error('connection reset')
      return server.send()
    }
    const start = await server.send()
    await expect(
      countTo429({ send: failing, start, needed: 11, concurrency: 4, budget: 50, restarts: 0 }),
    ).rejects.toThrow('connection reset')
    expect(server.stats().inFlight).toBe(0)
  })
})

describe('countTo429 with answers without the X-RateLimit headers (a proxy answering itself)', () => {
  /** Answers in the order given, each after its delay (ms); `null` headers: a proxy's 502. */
  function scripted(
    answers: ReadonlyArray<{ w: [number, number] | null; status?: number; ms?: number }>,
  ) {
    let n = 0
    return async (): Promise<CountedAnswer> => {
      const a = answers[n++]
      if (!a) throw new Error(`the script has no answer ${n}`)
      await new Promise((resolve) => setTimeout(resolve, a.ms ?? 1))
      const headers: Record<string, string> = a.w
        ? { 'x-ratelimit-remaining': String(a.w[0]), 'x-ratelimit-reset': String(a.w[1]) }
        : {}
      return { status: a.status ?? (a.w ? 401 : 502), header: (name) => headers[name] ?? null }
    }
  }
  const startOf = (remaining: number, reset: number): CountedAnswer => ({
    status: 401,
    header: (name) =>
      ({ 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(reset) })[name] ??
      null,
  })

  test('a count with an answer without the headers, where they are read: no verdict', async () => {
    // a limit of 3 that never refuses, one of its answers a proxy's 502 (not counted by it)
    const send = scripted([{ w: [1, 1000] }, { w: null }, { w: [0, 1000] }])
    const outcome = await countTo429({
      send,
      start: startOf(2, 1000),
      needed: 4,
      concurrency: 4,
      budget: 10,
      restarts: 0,
    })
    expect(outcome).toEqual({ headerless: 1, sent: 3 })
  })

  test('the same count where the headers are not read (no advertised limit): unlimited', async () => {
    const send = scripted([{ w: [1, 1000] }, { w: null }, { w: [0, 1000] }])
    const outcome = await countTo429({
      send,
      start: startOf(2, 1000),
      needed: 4,
      concurrency: 1,
      budget: 10,
      restarts: 0,
      readsWindow: false,
    })
    expect(outcome).toEqual({ unlimited: true, sent: 3 })
  })

  test('a later Reset past an answer without the headers is a new window, even with Remaining low', async () => {
    // other clients spent most of the new window (Remaining 3, within what the count allows):
    // only the later Reset across the 502 tells it is a new window
    const restarts: number[] = []
    const send = scripted([
      { w: [8, 1000] },
      { w: [7, 1000] },
      { w: null },
      { w: [3, 1060] },
      { w: [2, 1060] },
      { w: [1, 1060] },
      { w: [0, 1060] },
      { w: [0, 1060], status: 429 },
    ])
    const outcome = await countTo429({
      send,
      start: startOf(9, 1000),
      needed: 11,
      concurrency: 1,
      budget: 40,
      restarts: 1,
      onRestart: (w) => restarts.push(w.reset),
    })
    expect(restarts).toEqual([1060])
    expect('limited' in outcome && outcome.sent).toBe(8)
  })

  test('a 429 that arrives after the count ended (a request still in flight) is the outcome', async () => {
    // the first answer is a new window: the count starts again while the second request is in
    // flight; the new window's count ends before that request is answered 429
    const send = scripted([
      { w: [2, 1060] },
      { w: [0, 1000], status: 429, ms: 60 },
      { w: [1, 1060] },
      { w: [0, 1060] },
    ])
    const outcome = await countTo429({
      send,
      start: startOf(1, 1000),
      needed: 3,
      concurrency: 4,
      budget: 10,
      restarts: 1,
    })
    expect('limited' in outcome && outcome.limited.status).toBe(429)
  })
})
