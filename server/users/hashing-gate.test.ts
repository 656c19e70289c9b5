import { afterEach, describe, expect, test, vi } from 'vitest'
import { createHashingGate, defaultHashConcurrency, HashingBusy, HOLD_CAP } from './hashing-gate.ts'

/** A task that runs until released, recording how many ran at once. */
function controlled() {
  const state = { running: 0, most: 0 }
  const releases: (() => void)[] = []
  const task = () => {
    state.running++
    state.most = Math.max(state.most, state.running)
    return new Promise<void>((resolve) =>
      releases.push(() => {
        state.running--
        resolve()
      }),
    )
  }
  /** Releases the tasks running now, then lets the gate start the next ones. */
  const releaseAll = async () => {
    for (const release of releases.splice(0)) release()
    for (let i = 0; i < 5; i++) await Promise.resolve()
  }
  return { state, task, releaseAll }
}

describe('the password hashing gate', () => {
  test('never runs more hashes at once than its permits, and runs every queued one', async () => {
    const gate = createHashingGate({ concurrency: 2, queue: 10 })
    const { state, task, releaseAll } = controlled()
    const all = Promise.all(Array.from({ length: 7 }, () => gate.run(task)))
    for (let round = 0; round < 4; round++) {
      await releaseAll()
      expect(state.running).toBeLessThanOrEqual(2)
    }
    await all
    expect(state.most).toBe(2)
    expect(gate.load).toEqual({ running: 0, waiting: 0 })
  })

  test('beyond its queue a hash is refused at once with 503 temporarily_unavailable and Retry-After', async () => {
    const gate = createHashingGate({ concurrency: 1, queue: 1 })
    const { task, releaseAll } = controlled()
    const first = gate.run(task)
    const second = gate.run(task)
    const refused = await gate.run(task).catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(HashingBusy)
    const busy = refused as HashingBusy
    expect(busy.status).toBe(503)
    expect(busy.toJSON()).toMatchObject({ error: 'temporarily_unavailable' })
    expect(Number(busy.headers['Retry-After'])).toBeGreaterThan(0)
    expect(gate.load).toEqual({ running: 1, waiting: 1 })
    await releaseAll()
    await releaseAll()
    await Promise.all([first, second])
  })

  test('says it is full exactly when run would refuse any task', async () => {
    const gate = createHashingGate({ concurrency: 1, queue: 1 })
    const { task, releaseAll } = controlled()
    expect(gate.full).toBe(false)
    const first = gate.run(task)
    // the permit is taken, the queue still has room
    expect(gate.full).toBe(false)
    const second = gate.run(task)
    expect(gate.full).toBe(true)
    await expect(gate.run(task)).rejects.toBeInstanceOf(HashingBusy)
    await releaseAll()
    expect(gate.full).toBe(false)
    await releaseAll()
    await Promise.all([first, second])

    // without a queue, full as soon as no permit is left
    const unqueued = createHashingGate({ concurrency: 1, queue: 0 })
    const held = unqueued.run(task)
    expect(unqueued.full).toBe(true)
    await expect(unqueued.run(task)).rejects.toBeInstanceOf(HashingBusy)
    await releaseAll()
    await held
    expect(unqueued.full).toBe(false)
  })

  test('a padded verification (weight 2) waits for both permits and is not overtaken', async () => {
    const gate = createHashingGate({ concurrency: 2, queue: 10 })
    const order: string[] = []
    const { task, releaseAll } = controlled()
    const named = (name: string) => () => {
      order.push(name)
      return task()
    }
    const a = gate.run(named('a'))
    const heavy = gate.run(named('heavy'), 2)
    const b = gate.run(named('b'))
    expect(order).toEqual(['a'])
    await releaseAll()
    expect(order).toEqual(['a', 'heavy'])
    await releaseAll()
    expect(order).toEqual(['a', 'heavy', 'b'])
    await releaseAll()
    await Promise.all([a, heavy, b])
  })

  test('a hash that throws gives its permit back', async () => {
    const gate = createHashingGate({ concurrency: 1, queue: 0 })
    await expect(gate.run(() => Promise.reject(new Error('scrypt failed')))).rejects.toThrow(
      'scrypt failed',
    )
    await expect(gate.run(() => Promise.resolve('ok'))).resolves.toBe('ok')
  })

  test('by default half of libuv pool hashes, at least one', () => {
    expect(defaultHashConcurrency({})).toBe(2)
    expect(defaultHashConcurrency({ UV_THREADPOOL_SIZE: '16' })).toBe(8)
    expect(defaultHashConcurrency({ UV_THREADPOOL_SIZE: '1' })).toBe(1)
  })
})

describe('holding a refused sign-in (issue 33)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  /** Starts a hold and reports whether it has ended, without waiting for it. */
  function track(promise: Promise<void>) {
    const state = { ended: false }
    void promise.then(() => (state.ended = true))
    return state
  }

  test('a refusal is held for busyHold on a timer, then released', async () => {
    vi.useFakeTimers()
    const gate = createHashingGate({ concurrency: 1, queue: 0, busyHold: 1000 })
    const hold = track(gate.holdRefusal(new AbortController().signal))
    expect(gate.held).toBe(1)
    await vi.advanceTimersByTimeAsync(999)
    expect(hold.ended).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(hold.ended).toBe(true)
    expect(gate.held).toBe(0)
    // nothing left behind: no timer keeps running after the hold
    expect(vi.getTimerCount()).toBe(0)
  })

  test('a closed connection ends its hold at once and clears its timer', async () => {
    vi.useFakeTimers()
    const gate = createHashingGate({ concurrency: 1, queue: 0, busyHold: 30_000 })
    const closed = new AbortController()
    const hold = track(gate.holdRefusal(closed.signal))
    await vi.advanceTimersByTimeAsync(10)
    expect(hold.ended).toBe(false)
    closed.abort()
    await vi.advanceTimersByTimeAsync(0)
    expect(hold.ended).toBe(true)
    expect(gate.held).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
    // an already closed connection is not held at all
    const again = track(gate.holdRefusal(closed.signal))
    await vi.advanceTimersByTimeAsync(0)
    expect(again.ended).toBe(true)
  })

  test(`at most HOLD_CAP (${HOLD_CAP}) refusals are held; the next ones are answered at once`, async () => {
    vi.useFakeTimers()
    const gate = createHashingGate({ concurrency: 1, queue: 0, busyHold: 1000 })
    const signal = new AbortController().signal
    const held = Array.from({ length: HOLD_CAP }, () => track(gate.holdRefusal(signal)))
    expect(gate.held).toBe(HOLD_CAP)
    const beyond = track(gate.holdRefusal(signal))
    await vi.advanceTimersByTimeAsync(0)
    expect(beyond.ended).toBe(true)
    expect(held.some((h) => h.ended)).toBe(false)
    await vi.advanceTimersByTimeAsync(1000)
    expect(held.every((h) => h.ended)).toBe(true)
    expect(gate.held).toBe(0)
  })

  test('with busyHold 0 (the default) a refusal is answered at once', async () => {
    vi.useFakeTimers()
    const gate = createHashingGate({ concurrency: 1, queue: 0 })
    const hold = track(gate.holdRefusal(new AbortController().signal))
    await vi.advanceTimersByTimeAsync(0)
    expect(hold.ended).toBe(true)
    expect(vi.getTimerCount()).toBe(0)
  })
})
