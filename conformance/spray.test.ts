import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Config } from '../server/config.ts'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import type { Target } from './harness/target.ts'
import { runChecks } from './runner.ts'
import { sprayingUncounted } from './self-test/broken-sign-in.ts'

// Issue #29, item 10: SEC-02 against a deployment sizes its spray from what the server says,
// not from a fixed 100 that the reference server's own default (100 failed sign-ins per
// address, refused at the 101st) never reaches. The reference server is seen here as a
// deployment: no controls (its limits stay as configured), a rateLimitBudget from the config.

const GENEROUS = { limit: 100_000, window: 60 }
const limits = (loginaddress: number): Config['rateLimits'] => {
  const now = Math.floor(Date.now() / 1000)
  return {
    token: GENEROUS,
    introspect: GENEROUS,
    revoke: GENEROUS,
    userinfo: GENEROUS,
    // the reference server's defaults for sign-ins; each window starts with the test, so a
    // spray never straddles two
    login: { limit: 10, window: 300, origin: now },
    loginaddress: { limit: loginaddress, window: 300, origin: now },
    public: GENEROUS,
  }
}

const asDeployment = (target: Target, rateLimitBudget: number): Target => ({
  ...target,
  embedded: false,
  controls: undefined,
  rateLimitBudget,
})

const sec02 = async (target: Target) => {
  // the default --check-timeout: the check extends it by the time its first sign-ins took
  const [result] = await runChecks(target, { ids: ['SEC-02'] })
  if (!result) throw new Error('no result')
  return result
}

describe('SEC-02 against a deployment', () => {
  let throttled: Embedded
  let unthrottled: Embedded
  beforeAll(async () => {
    // the reference server's default address limit, which the fixed spray of 100 never tripped
    throttled = await startEmbedded({ config: { rateLimits: limits(100) } })
    unthrottled = await startEmbedded({
      config: { rateLimits: limits(100) },
      wrapStore: sprayingUncounted,
    })
  }, 60_000)
  afterAll(async () => {
    await throttled.stop()
    await unthrottled.stop()
  })

  test("the reference server's defaults: the 101st user name is refused within the budget, a pass", async () => {
    const result = await sec02(asDeployment(throttled.target, 400))
    expect(result.verdict, result.message).toBe('pass')
    // sprayed from several pages at once: the 429 is the 101st answer, or comes before answers
    // still in flight
    const at = result.notes
      .map((n) => /^spraying was refused with 429 at the (\d+)th user name$/.exec(n)?.[1])
      .find(Boolean)
    expect(Number(at)).toBeGreaterThan(90)
    expect(Number(at)).toBeLessThanOrEqual(101)
  }, 300_000)

  test('a server that never throttles spraying still fails, once the budget is enough to tell', async () => {
    const result = await sec02(asDeployment(unthrottled.target, 100))
    expect(result.verdict).toBe('fail')
    expect(result.message).toMatch(
      /^password spraying is not throttled: 100 failed sign-ins with one password and 100 different user names/,
    )
  }, 300_000)

  test('a budget too small to tell is a skip, not a pass', async () => {
    const result = await sec02(asDeployment(unthrottled.target, 5))
    expect(result.verdict).toBe('skip')
    expect(result.message).toMatch(/no 429 within the rateLimitBudget of 5 sign-ins/)
  }, 300_000)
})
