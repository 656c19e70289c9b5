import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from '../app.ts'
import { loadConfig } from '../config.ts'
import { authorizeQuery, testApp, windowFromNow } from '../test-helpers.ts'

const LIMIT = 3
const RP = '/rp/rp-id_token-sig-rs256'

let app: App
beforeAll(async () => {
  app = await testApp({
    rateLimits: {
      ...loadConfig({}, {}).rateLimits,
      token: windowFromNow(LIMIT, 300),
      public: windowFromNow(LIMIT, 300),
    },
  })
})
afterAll(async () => {
  await app.stop()
})

const tokenRequest = (path: string, secret: string, remoteAddress: string) =>
  app.server.inject({
    method: 'POST',
    url: path,
    remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: 'service-client',
      client_secret: secret,
    }).toString(),
  })

describe('the RP test issuers are rate limited as the endpoints whose handlers they reuse', () => {
  test('wrong secrets through an RP issuer count against the same limit as /auth/token', async () => {
    const source = '10.7.0.1'
    const statuses: number[] = []
    for (let i = 0; i < LIMIT; i++)
      statuses.push((await tokenRequest(`${RP}/auth/token`, 'wrong', source)).statusCode)
    expect(statuses).toEqual([401, 401, 401])
    const over = await tokenRequest(`${RP}/auth/token`, 'wrong', source)
    expect(over.statusCode).toBe(429)
    expect(over.headers['x-ratelimit-limit']).toBe(String(LIMIT))
    // the failures are the same counter wherever the handler is mounted: the right secret from
    // that source is refused at /auth/token too, before it is checked
    expect((await tokenRequest('/auth/token', 'service-secret', source)).statusCode).toBe(429)
    // another source is not affected
    expect((await tokenRequest(`${RP}/auth/token`, 'wrong', '10.7.0.2')).statusCode).toBe(401)
  })

  test("an RP issuer's discovery document and JWKS carry the public group's limit", async () => {
    const source = '10.7.1.1'
    const statuses: number[] = []
    for (let i = 0; i <= LIMIT; i++) {
      const res = await app.server.inject({
        url: `${RP}/.well-known/openid-configuration`,
        remoteAddress: source,
      })
      expect(res.headers['x-ratelimit-limit']).toBe(String(LIMIT))
      statuses.push(res.statusCode)
    }
    expect(statuses).toEqual([200, 200, 200, 429])
    const jwks = await app.server.inject({
      url: `${RP}/.well-known/jwks.json`,
      remoteAddress: '10.7.1.2',
    })
    expect(jwks.statusCode).toBe(200)
    expect(jwks.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1))
  })

  test('an over-long state is passed on to the normal endpoint to refuse, not kept by the issuer', async () => {
    const state = 's'.repeat(3000)
    const res = await app.server.inject(
      `${RP}/auth/authorize?${authorizeQuery({ state }).toString()}`,
    )
    expect(res.statusCode).toBe(302)
    const to = new URL(res.headers.location as string, 'https://idp.test')
    expect(to.pathname).toBe('/auth/authorize')
    expect(to.searchParams.get('state')).toBe(state)
  })
})
