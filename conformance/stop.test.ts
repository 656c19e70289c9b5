import { afterEach, describe, expect, test } from 'vitest'
import { runStop, type RunStop } from './stop.ts'

// Issue #29: a step before the checks (the embedded server's start, the preflight) is not
// waited for once the run is stopped, so the reports are written at once.

const stops: RunStop[] = []
const newStop = (): RunStop => {
  const stop = runStop({
    graceMs: 1_000,
    incompleteCode: 4,
    signalCodes: { SIGTERM: 143 },
    tell: () => undefined,
  })
  stops.push(stop)
  return stop
}
afterEach(() => {
  for (const stop of stops.splice(0)) stop.dispose()
})

/** A promise settled only when the test says so. */
function deferred<T>(): {
  promise: Promise<T>
  resolve: (v: T) => void
  reject: (e: unknown) => void
} {
  let resolve: (v: T) => void = () => undefined
  let reject: (e: unknown) => void = () => undefined
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

describe('RunStop.until', () => {
  test("gives the work's value while the run goes on, and throws its error", async () => {
    const stop = newStop()
    expect(await stop.until(Promise.resolve(42))).toEqual({ value: 42 })
    await expect(stop.until(Promise.reject(new Error('start failed')))).rejects.toThrow(
      'start failed',
    )
    expect(stop.stopped).toBeUndefined()
  })

  test('gives undefined as soon as the run is stopped, without waiting for the work', async () => {
    const stop = newStop()
    const work = deferred<number>()
    const waiting = stop.until(work.promise)
    stop.halt('interrupted by SIGTERM', 143)
    expect(await waiting).toBeUndefined()
    work.resolve(1)
  })

  test('a run already stopped does not wait at all, and what it leaves behind may fail', async () => {
    const stop = newStop()
    stop.halt("the run's time limit of 1 s was reached (--run-timeout)", 4)
    const work = deferred<number>()
    expect(await stop.until(work.promise)).toBeUndefined()
    // the work left behind fails later: that is nobody's unhandled rejection
    let unhandled: unknown
    const onUnhandled = (reason: unknown): void => {
      unhandled = reason
    }
    process.on('unhandledRejection', onUnhandled)
    try {
      work.reject(new Error('the server came up broken after the stop'))
      // two turns of the event loop: an unhandled rejection is reported within them
      await new Promise((resolve) => setImmediate(resolve))
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
    expect(unhandled).toBeUndefined()
    expect(stop.stopped).toEqual({
      why: "the run's time limit of 1 s was reached (--run-timeout)",
      code: 4,
    })
  })
})
