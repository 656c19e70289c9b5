import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { check } from './harness/check.ts'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import type { CheckResult } from './harness/types.ts'
import { runChecks } from './runner.ts'
import { chromiumUnder } from './test-support.ts'

// Issue #29, item 6: a run never dies. The checks here are the test's own, run by the runner in
// place of the registered ones for their IDs (RunOptions.checks); the other IDs run the suite's.

/**
 * Runs `body` with vitest's own process-level listeners set aside: the errors these tests let
 * escape on purpose are the run's guard's to catch, and vitest would report them as the test
 * file's errors. Every other listener is put back afterwards.
 */
async function withoutVitestListeners<T>(body: () => Promise<T>): Promise<T> {
  const rejections = process.listeners('unhandledRejection')
  const exceptions = process.listeners('uncaughtException')
  process.removeAllListeners('unhandledRejection')
  process.removeAllListeners('uncaughtException')
  try {
    return await body()
  } finally {
    process.removeAllListeners('unhandledRejection')
    process.removeAllListeners('uncaughtException')
    for (const listener of rejections) process.on('unhandledRejection', listener)
    for (const listener of exceptions) process.on('uncaughtException', listener)
  }
}

/** A promise that settles when `signal` aborts, or after `ms` (bounded either way). */
const until = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve()
    })
  })

const verdicts = (results: readonly CheckResult[]) => results.map((r) => [r.id, r.verdict])

describe('a run never dies', () => {
  let embedded: Embedded
  beforeAll(async () => {
    embedded = await startEmbedded()
  }, 60_000)
  afterAll(async () => {
    await embedded.stop()
  })

  test('an unawaited rejection or an exception thrown from a timer ends its own check as ERROR; the others are unaffected', async () => {
    const notices: string[] = []
    let listenersAfter = -1
    const results = await withoutVitestListeners(async () => {
      const run = await runChecks(embedded.target, {
        ids: ['DISC-01', 'DISC-02', 'DISC-03', 'DISC-04'],
        checkTimeoutMs: 30_000,
        onNotice: (m) => notices.push(m),
        checks: {
          // a rejection that escapes only once its check has passed (while the next one runs):
          // the run's to note, not the check's, and not the next check's
          'DISC-01': check(() => {
            setTimeout(() => void Promise.reject(new Error('test: after the check ended')), 10)
            return Promise.resolve()
          }),
          // a rejection nobody awaits, then a wait the check would otherwise finish
          'DISC-02': check(async () => {
            void Promise.reject(new Error('test: nobody awaited this'))
            await until(20_000)
          }),
          // an exception thrown where no await can catch it
          'DISC-03': check(async () => {
            setTimeout(() => {
              throw new Error('test: thrown from a timer')
            }, 10)
            await until(20_000)
          }),
        },
      })
      listenersAfter =
        process.listenerCount('unhandledRejection') + process.listenerCount('uncaughtException')
      return run
    })
    // DISC-04 is the suite's own check
    expect(verdicts(results)).toEqual([
      ['DISC-01', 'pass'],
      ['DISC-02', 'error'],
      ['DISC-03', 'error'],
      ['DISC-04', 'pass'],
    ])
    expect(results[1]?.message).toMatch(/escaped the check's awaits.*test: nobody awaited this/)
    expect(results[2]?.message).toMatch(/escaped the check's awaits.*test: thrown from a timer/)
    expect(notices).toEqual([
      expect.stringMatching(
        /^an error escaped check DISC-01 after it had ended .*test: after the check ended/,
      ),
    ])
    // the guard is installed for the run only
    expect(listenersAfter).toBe(0)
  }, 120_000)

  test('a stopped run ends the check in flight and the rest as not run, and keeps what finished', async () => {
    const stop = new AbortController()
    const results = await runChecks(embedded.target, {
      ids: ['DISC-01', 'DISC-02', 'DISC-03'],
      checkTimeoutMs: 60_000,
      stop: stop.signal,
      checks: {
        // stops the run once it is running, then waits (bounded) as a long check would
        'DISC-02': check(async () => {
          stop.abort('test: interrupted by SIGTERM')
          await until(30_000)
        }),
      },
    })
    expect(verdicts(results)).toEqual([
      ['DISC-01', 'pass'],
      ['DISC-02', 'notrun'],
      ['DISC-03', 'notrun'],
    ])
    expect(results[1]?.message).toBe('not run: test: interrupted by SIGTERM')
    expect(results[1]?.durationMs).toBeLessThan(20_000)
  }, 120_000)

  test('a browser killed mid-run fails the check that drove it as ERROR; a later check gets a new browser', async () => {
    const results = await runChecks(embedded.target, {
      ids: ['DISC-01', 'DISC-02', 'DISC-03'],
      checkTimeoutMs: 60_000,
      checks: {
        'DISC-01': check(async (ctx) => {
          const context = await ctx.newBrowserContext()
          const page = await context.newPage()
          await page.goto(`${ctx.target.baseUrl}/.well-known/openid-configuration`)
          const pids = chromiumUnder(process.pid)
          expect(pids.length).toBeGreaterThan(1)
          for (const pid of pids) process.kill(pid, 'SIGKILL')
          // the browser's end is seen (bounded), so the next step meets a dead browser
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 10_000)
            context.browser()?.once('disconnected', () => {
              clearTimeout(timer)
              resolve()
            })
          })
          // what a check does next with the dead browser
          await page.goto(`${ctx.target.baseUrl}/.well-known/jwks.json`, { timeout: 10_000 })
        }),
        'DISC-02': check(async (ctx) => {
          const context = await ctx.newBrowserContext()
          const page = await context.newPage()
          const res = await page.goto(`${ctx.target.baseUrl}/.well-known/openid-configuration`)
          expect(res?.status()).toBe(200)
        }),
      },
    })
    expect(verdicts(results)).toEqual([
      ['DISC-01', 'error'],
      ['DISC-02', 'pass'],
      ['DISC-03', 'pass'],
    ])
    expect(results[0]?.message).toMatch(/^inconclusive: the harness could not drive the target/)
  }, 120_000)
})
