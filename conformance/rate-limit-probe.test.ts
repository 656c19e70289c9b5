import { http, HttpResponse } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { GENEROUS_LIMITS, startEmbedded, type Embedded } from './harness/embedded.ts'
import { DISCOVERY } from './harness/requests.ts'
import type { Target } from './harness/target.ts'
import { runChecks } from './runner.ts'
import { relay } from './self-test/sabotage/kit.ts'
import type { CheckResult } from './harness/types.ts'

// Issue #30, item 2: RATE-05 against deployments (the embedded server seen without its controls,
// so nothing lowers a limit for the probe): a limit is exhausted only where X-RateLimit-Limit
// advertises it and the rateLimitBudget covers it; a provider without the headers, a limit
// above the budget and a window that rolls over are skipped or inconclusive, never FAIL; a
// missing 429 where a limit is advertised is a FAIL, whatever was skipped beside it.

const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']

/**
 * Discovery behind a fixed-window limiter of 10 requests per 10 minutes, its window starting
 * again at the `rollAt`-th request (if given); `answers429` false: past the limit it answers 200
 * all the same (Remaining 0, the same Reset). The window is far longer than any probe, so only
 * `rollAt` starts a new one: on a loaded runner an 8-s window also rolled over by itself during
 * the probe, and the verdict then depended on the machine's speed.
 */
function discoveryLimiter(target: Target, options: { rollAt?: number; answers429: boolean }) {
  const LIMIT = 10
  const WINDOW = 600
  const seconds = (): number => Math.floor(Date.now() / 1000)
  let start = seconds()
  let count = 0
  let requests = 0
  return http.get(target.baseUrl + DISCOVERY, async ({ request }) => {
    const real = await relay(target, request)
    requests++
    if (requests === options.rollAt || seconds() >= start + WINDOW) {
      start = seconds()
      count = 0
    }
    count++
    const headers = new Headers(real.headers)
    headers.set('x-ratelimit-limit', String(LIMIT))
    headers.set('x-ratelimit-remaining', String(Math.max(0, LIMIT - count)))
    headers.set('x-ratelimit-reset', String(start + WINDOW))
    if (count > LIMIT && options.answers429)
      return HttpResponse.json(
        { error: 'temporarily_unavailable', error_description: 'too many requests' },
        { status: 429, headers },
      )
    return new HttpResponse(await real.arrayBuffer(), { status: real.status, headers })
  })
}

describe('RATE-05 against a deployment', () => {
  let wideOpen: Embedded
  let small: Embedded
  const mock = setupServer()
  beforeAll(async () => {
    ;[wideOpen, small] = await Promise.all([
      // its limits (100000 per minute) as a production default looks to a budget of 12
      startEmbedded(),
      // every probed group limited to 5 in windows of 4 s; token and login left wide open
      startEmbedded({
        config: {
          rateLimits: {
            ...GENEROUS_LIMITS,
            userinfo: { limit: 5, window: 4 },
            public: { limit: 5, window: 4 },
            introspect: { limit: 5, window: 4 },
            revoke: { limit: 5, window: 4 },
          },
        },
      }),
    ])
    mock.listen({ onUnhandledRequest: 'bypass' })
  }, 60_000)
  afterAll(async () => {
    mock.close()
    await Promise.all([wideOpen.stop(), small.stop()])
  })

  const rate05 = async (embedded: Embedded, rateLimitBudget: number): Promise<CheckResult> => {
    const target: Target = { ...embedded.target, embedded: false, controls: undefined }
    const [result] = await runChecks(
      { ...target, rateLimitBudget },
      { ids: ['RATE-05'], checkTimeoutMs: 60_000 },
    )
    if (!result) throw new Error('no result')
    return result
  }

  test('small advertised limits within the budget: each endpoint answers 429, a pass', async () => {
    mock.resetHandlers()
    const result = await rate05(small, 20)
    expect(result.verdict, result.message).toBe('pass')
    for (const what of [
      'user-info',
      'discovery',
      'JWKS',
      'branding',
      'introspection',
      'revocation',
    ])
      expect(result.notes.some((n) => n.startsWith(`${what}: Retry-After`))).toBe(true)
  }, 120_000)

  test('limits larger than the budget: skipped, naming them, never a failure', async () => {
    mock.resetHandlers()
    const result = await rate05(wideOpen, 12)
    expect(result.verdict).toBe('skip')
    expect(result.message).toMatch(
      /^user-info: X-RateLimit-Limit is 100000, so a 429 takes 100001 requests, more than the rateLimitBudget of 12/,
    )
  }, 120_000)

  test('a provider that sends no X-RateLimit headers: skipped with the reason', async () => {
    mock.resetHandlers(
      http.all(`${wideOpen.target.baseUrl}/*`, ({ request }) =>
        relay(wideOpen.target, request, (h) => {
          for (const name of RATE_HEADERS) h.delete(name)
        }),
      ),
    )
    const result = await rate05(wideOpen, 12)
    expect(result.verdict).toBe('skip')
    expect(result.message).toMatch(/^no API endpoint advertises X-RateLimit-Limit/)
  }, 120_000)

  test('a window that rolls over during the probe: inconclusive, never a failure', async () => {
    mock.resetHandlers(discoveryLimiter(wideOpen.target, { rollAt: 5, answers429: true }))
    const result = await rate05(wideOpen, 12)
    expect(result.verdict).toBe('error')
    expect(result.message).toMatch(
      /discovery: a new rate-limit window began during the probe .*so a missing 429 proves nothing/,
    )
  }, 120_000)

  test('an advertised limit that never answers 429: a failure, the rest skipped', async () => {
    mock.resetHandlers(discoveryLimiter(wideOpen.target, { answers429: false }))
    const result = await rate05(wideOpen, 12)
    expect(result.verdict).toBe('fail')
    expect(result.message).toMatch(
      /^discovery: no 429 after 1[12] requests, though X-RateLimit-Limit is 10/,
    )
    expect(result.more?.at(-1)).toMatch(/^the rest was skipped: /)
  }, 120_000)
})
