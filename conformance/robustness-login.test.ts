import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { GENEROUS_LIMITS, startEmbedded, type Embedded } from './harness/embedded.ts'
import type { CheckResult } from './harness/types.ts'
import { runChecks } from './runner.ts'

// Issue #30: ROBUST-03 posts each field of the login form alone over-long (256, 1,000 and
// 10,000 characters) and with control characters within a real interaction, counting its
// posts. A target that throttles the run's address before they are all sent leaves them
// unjudged: inconclusive, with a note, never a failure (nor a pass). (Its proof that it fails on a 500 for
// a user name past 255 characters is the self-test's, sabotage/robustness.ts.)

describe('ROBUST-03 within a real interaction', () => {
  let sound: Embedded
  let throttling: Embedded
  let throttlingLater: Embedded
  /** `limit` failed sign-ins per address, then 429 (server/routes/login.ts). */
  const failedSignIns = (limit: number) =>
    startEmbedded({
      config: { rateLimits: { ...GENEROUS_LIMITS, loginaddress: { limit, window: 300 } } },
    })
  beforeAll(async () => {
    ;[sound, throttling, throttlingLater] = await Promise.all([
      startEmbedded(),
      failedSignIns(3),
      // the fields' posts that reach the password check (user name, password, action: 12),
      // and one generated case
      failedSignIns(13),
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([sound.stop(), throttling.stop(), throttlingLater.stop()])
  })

  const robust03 = async (embedded: Embedded): Promise<CheckResult> => {
    const [result] = await runChecks(embedded.target, {
      ids: ['ROBUST-03'],
      checkTimeoutMs: 90_000,
    })
    if (!result) throw new Error('no result')
    return result
  }

  test('the reference server answers every over-long field: a pass, nothing left unjudged', async () => {
    const result = await robust03(sound)
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.filter((n) => n.includes('not judged'))).toEqual([])
  }, 120_000)

  test('an address throttled after three failed sign-ins: inconclusive, naming what was not judged', async () => {
    const result = await robust03(throttling)
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /^inconclusive: the harness could not drive the target: not judged: the login post within an interaction \(not sent: POST \/auth\/login with username malformed .*; POST \/auth\/login with password of 256 characters; .*; the generated cases within an interaction\) \(see the notes\)$/,
    )
    expect(result.notes).toContainEqual(
      expect.stringMatching(
        /^\/auth\/login within an interaction: 17 of 20 over-long or control-character posts not judged: the target refused sign-ins from this address \(HTTP 429 at post 4\): its sign-in budget is used up$/,
      ),
    )
  }, 120_000)

  test('an address throttled during the generated cases: inconclusive about them, never a failure', async () => {
    const result = await robust03(throttlingLater)
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /^inconclusive: the harness could not drive the target: not judged: the login post within an interaction \(not sent: the generated cases within an interaction \(HTTP 429 to a generated case, and those after it\)\) \(see the notes\)$/,
    )
  }, 120_000)

  // issue 30: a main client without a redirectUri leaves authorize and the login post undriven;
  // the catalogue names both as ROBUST-03's subject, so logout alone is no pass
  test('a main client without a redirectUri: inconclusive, naming authorize and the login post', async () => {
    const { main } = sound.target.clients
    const target = {
      ...sound.target,
      clients: { ...sound.target.clients, main: { ...main, redirectUri: undefined } },
    }
    const [result] = await runChecks(target, { ids: ['ROBUST-03'], checkTimeoutMs: 90_000 })
    expect(result?.verdict, result?.message).toBe('error')
    expect(result?.message).toMatch(
      /^inconclusive: the harness could not drive the target: not judged: \/auth\/authorize and the login post \(client \S+ has no redirectUri, so no valid authorization request can be spoilt\) \(see the notes\)$/,
    )
  }, 120_000)
})
