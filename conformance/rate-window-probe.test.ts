import { http, HttpResponse } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import { TOKEN } from './harness/requests.ts'
import type { Target } from './harness/target.ts'
import { runChecks } from './runner.ts'

// Issue #29, item 10: RATE-02 against a deployment whose fixed window rolls over while the
// probe counts down to the 429. It tells the new window (harness/rate-window.ts, as RATE-01/03
// do) and counts again once when the rateLimitBudget covers it, or is inconclusive; never FAIL.
// The deployment is the embedded server seen without its controls, its token endpoint answered,
// for the probe's random clients, by a fixed-window limiter in msw that starts a new window at
// the probe's fifth request.

const LIMIT = 10
const WINDOW = 8

function limiter(target: Target) {
  const seconds = (): number => Math.floor(Date.now() / 1000)
  let start = seconds()
  let count = 0
  let requests = 0
  const newWindow = (): void => {
    start = seconds()
    count = 0
  }
  return http.post(target.baseUrl + TOKEN, async ({ request }) => {
    const form = new URLSearchParams(await request.clone().text())
    if (!form.get('client_id')?.startsWith('rate-probe')) return undefined
    requests++
    // the rollover under test, and the window's own end by time
    if (requests === 5 || seconds() >= start + WINDOW) newWindow()
    count++
    const headers = {
      'x-ratelimit-limit': String(LIMIT),
      'x-ratelimit-remaining': String(Math.max(0, LIMIT - count)),
      'x-ratelimit-reset': String(start + WINDOW),
      'cache-control': 'no-store',
    }
    if (count > LIMIT)
      return HttpResponse.json(
        { error: 'invalid_client', error_description: 'too many requests' },
        { status: 429, headers: { ...headers, 'retry-after': String(start + WINDOW - seconds()) } },
      )
    return HttpResponse.json(
      { error: 'invalid_client' },
      { status: 401, headers: { ...headers, 'www-authenticate': 'Basic realm="token"' } },
    )
  })
}

describe('RATE-02 when a window begins during the count', () => {
  let embedded: Embedded
  const mock = setupServer()
  beforeAll(async () => {
    embedded = await startEmbedded()
    mock.listen({ onUnhandledRequest: 'bypass' })
  }, 60_000)
  afterAll(async () => {
    mock.close()
    await embedded.stop()
  })

  const rate02 = async (rateLimitBudget: number) => {
    mock.resetHandlers(limiter(embedded.target))
    const target: Target = { ...embedded.target, embedded: false, controls: undefined }
    const [result] = await runChecks(
      { ...target, rateLimitBudget },
      { ids: ['RATE-02'], checkTimeoutMs: 60_000 },
    )
    if (!result) throw new Error('no result')
    return result
  }

  test('counted again in the new window when the budget covers it: a pass', async () => {
    const result = await rate02(40)
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes).toContain(
      'a new rate-limit window began during the count to the 429; counted again in it',
    )
  }, 120_000)

  test('inconclusive when the budget does not cover counting again, never a failure', async () => {
    const result = await rate02(12)
    expect(result.verdict).toBe('error')
    expect(result.message).toMatch(
      /a new rate-limit window began during the count to the 429 .*a missing 429 proves nothing/,
    )
  }, 120_000)
})
