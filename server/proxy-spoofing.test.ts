import type { ServerInjectResponse } from '@hapi/hapi'
import { afterEach, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { loadConfig, type Config } from './config.ts'
import { authorizeQuery, testApp, windowFromNow } from './test-helpers.ts'

// Behind TRUST_PROXY the client address is the first untrusted X-Forwarded-For hop from the
// right (proxy-addr): what a client writes on the left of the header must not give it a fresh
// rate-limit or login-throttle counter.

const LIMIT = 3
const PROXY = '10.0.0.1'
const CLIENT = '203.0.113.7'
const spoofed = (): string => `198.51.100.${String(Math.floor(Math.random() * 250) + 1)}`

let app: App | undefined
afterEach(async () => {
  await app?.stop()
  app = undefined
})

const limits = (): Config['rateLimits'] => ({
  ...loadConfig({}, {}).rateLimits,
  public: windowFromNow(LIMIT, 300),
  login: windowFromNow(LIMIT, 300),
})

const viaProxy = (forwardedFor: string, remoteAddress = PROXY) => ({
  remoteAddress,
  headers: { 'x-forwarded-for': forwardedFor, 'x-forwarded-proto': 'https' },
})

const cookiesOf = (res: ServerInjectResponse): string[] => {
  const set = res.headers['set-cookie']
  return (Array.isArray(set) ? set : set ? [set] : []).map((c) => c.split(';')[0] ?? '')
}

async function signIn(server: App['server'], forwardedFor: string, password: string) {
  const query = authorizeQuery()
  const via = viaProxy(forwardedFor)
  const page = await server.inject({ url: `/auth/authorize?${query}`, ...via })
  const interaction = /name="interaction" value="([^"]+)"/.exec(page.payload)?.[1] ?? ''
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.payload)?.[1] ?? ''
  return server.inject({
    method: 'POST',
    url: '/auth/login',
    remoteAddress: via.remoteAddress,
    headers: {
      ...via.headers,
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookiesOf(page).join('; '),
      accept: 'application/json',
    },
    payload: new URLSearchParams({ interaction, csrf, username: 'alice', password }).toString(),
  })
}

describe('TRUST_PROXY: the client address is the first untrusted hop from the right', () => {
  test('a spoofed X-Forwarded-For entry per request does not reset the API rate limit (hop count)', async () => {
    app = await testApp({ trustProxy: 1, rateLimits: limits() })
    const statuses: number[] = []
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await app.server.inject({
        url: '/.well-known/openid-configuration',
        ...viaProxy(`${spoofed()}, ${CLIENT}`),
      })
      statuses.push(res.statusCode)
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429])
    // another real client behind the same proxy has its own counter
    const other = await app.server.inject({
      url: '/.well-known/openid-configuration',
      ...viaProxy(`${CLIENT}, 203.0.113.99`),
    })
    expect(other.statusCode).toBe(200)
  })

  test('with a CIDR list, hops inside it are skipped and the spoofed left is never reached', async () => {
    app = await testApp({ trustProxy: ['10.0.0.0/8'], rateLimits: limits() })
    const statuses: number[] = []
    for (let i = 0; i < LIMIT + 1; i++) {
      const res = await app.server.inject({
        url: '/.well-known/jwks.json',
        ...viaProxy(`${spoofed()}, ${CLIENT}, 10.0.0.2`),
      })
      statuses.push(res.statusCode)
    }
    expect(statuses).toEqual([200, 200, 200, 429])
    // a peer outside the list is the client itself: its X-Forwarded-For is not read at all
    const direct = await app.server.inject({
      url: '/.well-known/jwks.json',
      ...viaProxy(CLIENT, '192.0.2.50'),
    })
    expect(direct.statusCode).toBe(200)
  })

  test('a spoofed X-Forwarded-For entry per attempt does not reset the login throttle', async () => {
    app = await testApp({ trustProxy: 1, rateLimits: limits() })
    const statuses: number[] = []
    for (let i = 0; i < LIMIT + 1; i++)
      statuses.push((await signIn(app.server, `${spoofed()}, ${CLIENT}`, 'wrong')).statusCode)
    expect(statuses).toEqual([401, 401, 401, 429])
    // the right password from the same client is still refused, whatever it writes on the left
    const right = await signIn(app.server, `${spoofed()}, ${CLIENT}`, 'wonderland')
    expect(right.statusCode).toBe(429)
    // while a different client behind the proxy can still sign in
    const other = await signIn(app.server, `${CLIENT}, 203.0.113.99`, 'wonderland')
    expect(other.statusCode).toBe(303)
  })

  test('TRUST_PROXY parses as a hop count, true as one hop, or an address/CIDR list', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1)
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      'loopback',
    ])
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/99' })).toThrow(/trustProxy/)
    expect(() => loadConfig({ TRUST_PROXY: 'proxy.example' })).toThrow(/trustProxy/)
  })

  test('X-Forwarded-Proto is read at the trusted hop: a client-written https on the left does not pass a plain-HTTP request', async () => {
    app = await testApp({ trustProxy: 1 })
    const discovery = (proto: string, forwardedFor = CLIENT) =>
      app?.server.inject({
        url: '/.well-known/openid-configuration',
        remoteAddress: PROXY,
        headers: { 'x-forwarded-for': forwardedFor, 'x-forwarded-proto': proto },
      })
    // the proxy appended http: the client came over plain HTTP whatever it wrote before
    expect((await discovery('https, http'))?.statusCode).toBe(400)
    expect((await discovery('http'))?.statusCode).toBe(400)
    // the proxy appended https: a client-written http on the left changes nothing
    expect((await discovery('http, https'))?.statusCode).toBe(200)
    expect((await discovery('HTTPS'))?.statusCode).toBe(200)
  })

  test('with two trusted hops, the scheme is the one the outer proxy wrote', async () => {
    app = await testApp({ trustProxy: 2 })
    const discovery = (proto: string) =>
      app?.server.inject({
        url: '/.well-known/openid-configuration',
        remoteAddress: PROXY,
        headers: { 'x-forwarded-for': `${CLIENT}, 10.0.0.2`, 'x-forwarded-proto': proto },
      })
    expect((await discovery('http, https'))?.statusCode).toBe(400)
    expect((await discovery('https, https'))?.statusCode).toBe(200)
    expect((await discovery('http, https, https'))?.statusCode).toBe(200)
  })
})
