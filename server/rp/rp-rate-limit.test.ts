import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from '../app.ts'
import { loadConfig } from '../config.ts'
import { authorizeQuery, postLoginForm, testApp, windowFromNow } from '../test-helpers.ts'
import { createObservations } from './observations.ts'
import { rpIssuers } from './plugin.ts'

const LIMIT = 3
const RP = '/rp/rp-id_token-sig-rs256'

let app: App
beforeAll(async () => {
  app = await testApp({
    rateLimits: {
      ...loadConfig({}, {}).rateLimits,
      token: windowFromNow(LIMIT, 300),
      introspect: windowFromNow(LIMIT, 300),
      revoke: windowFromNow(LIMIT, 300),
      userinfo: windowFromNow(LIMIT, 300),
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

  // each endpoint that reuses a normal handler: requests alternate between the normal path and the
  // RP issuer's, and the one after LIMIT is refused at both, so both count against one limit
  const shared = [
    ['introspection', '/auth/introspect', 'service-client'],
    ['revocation', '/auth/revoke', 'conformance-client'],
  ] as const
  for (const [name, path, client] of shared)
    test(`${name} requests through an RP issuer count against the same limit as ${path}`, async () => {
      const form = new URLSearchParams({
        token: 'not-a-token',
        client_id: client,
        client_secret: client === 'service-client' ? 'service-secret' : 'conformance-secret',
      }).toString()
      const post = (url: string) =>
        app.server.inject({
          method: 'POST',
          url,
          remoteAddress: '10.7.2.1',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: form,
        })
      const statuses: number[] = []
      for (let i = 0; i < LIMIT; i++)
        statuses.push((await post(i % 2 === 0 ? `${RP}${path}` : path)).statusCode)
      expect(statuses).toEqual(Array.from({ length: LIMIT }, () => 200))
      const over = await post(`${RP}${path}`)
      expect(over.statusCode).toBe(429)
      expect(over.headers['x-ratelimit-limit']).toBe(String(LIMIT))
      expect((await post(path)).statusCode).toBe(429)
    })

  test('user-info through an RP issuer counts against the same limit as /auth/user-info', async () => {
    const get = (url: string) => app.server.inject({ url, remoteAddress: '10.7.3.1' })
    const statuses: number[] = []
    // without a token: 401 (RFC 6750), counted all the same
    for (let i = 0; i < LIMIT; i++)
      statuses.push(
        (await get(i % 2 === 0 ? `${RP}/auth/user-info` : '/auth/user-info')).statusCode,
      )
    expect(statuses).toEqual(Array.from({ length: LIMIT }, () => 401))
    const over = await get(`${RP}/auth/user-info`)
    expect(over.statusCode).toBe(429)
    expect(over.headers['x-ratelimit-limit']).toBe(String(LIMIT))
    expect((await get('/auth/user-info')).statusCode).toBe(429)
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

describe("the RP issuers' state is bounded", () => {
  test('of the sign-ins in progress only the newest are remembered, up to the capacity', async () => {
    // the issuers registered by hand, with a capacity of 2 sign-ins in progress
    const small = await testApp({ rpTests: false })
    try {
      await small.server.register(
        rpIssuers(small.deps, createObservations(), { transactions: 2, taints: 2 }),
      )
      const started: URLSearchParams[] = []
      for (const state of ['first', 'second', 'third']) {
        const res = await small.server.inject(
          `${RP}/auth/authorize?${authorizeQuery({ state }).toString()}`,
        )
        expect(res.statusCode).toBe(302)
        started.push(new URL(res.headers.location as string).searchParams)
      }
      const callbackState = async (query: URLSearchParams | undefined) => {
        if (!query) throw new Error('no sign-in started')
        const login = await postLoginForm(small, query, {
          username: 'alice',
          password: 'wonderland',
        })
        return new URL(login.headers.location as string).searchParams.get('state')
      }
      // the newest is restored to the client's own state; the oldest was forgotten, so its
      // callback keeps the issuer's marker
      expect(await callbackState(started[2])).toBe('third')
      const marker = started[0]?.get('state')
      expect(marker).toMatch(/^rp\./)
      expect(await callbackState(started[0])).toBe(marker)
    } finally {
      await small.stop()
    }
  })
})
