import type { ServerInjectResponse } from '@hapi/hapi'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { loadConfig } from './config.ts'
import { SOURCE_FAILURES_FACTOR } from './plugins/rate-limit.ts'
import { authorizeQuery, testApp, windowFromNow } from './test-helpers.ts'

const LIMIT = 3

let app: App
beforeAll(async () => {
  app = await testApp({
    rateLimits: {
      ...loadConfig({}, {}).rateLimits,
      token: windowFromNow(LIMIT, 300),
      loginaddress: windowFromNow(LIMIT, 300),
    },
  })
})
afterAll(async () => {
  await app.stop()
})

/** A client_credentials request from `remoteAddress`, by service-client unless `clientId` says. */
const tokenRequest = (secret: string, remoteAddress: string, clientId = 'service-client') =>
  app.server.inject({
    method: 'POST',
    url: '/auth/token',
    remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
    }).toString(),
  })
const tokenRequestAs = (clientId: string, remoteAddress: string) =>
  tokenRequest('wrong', remoteAddress, clientId)

describe('failed client authentication (RFC 6819 §5.1.4.2.3)', () => {
  test('a source trying secrets across many client_ids is limited in all', async () => {
    const source = '10.9.2.1'
    const statuses: number[] = []
    for (let i = 0; i <= LIMIT * SOURCE_FAILURES_FACTOR; i++)
      statuses.push((await tokenRequestAs(`guess-${i}`, source)).statusCode)
    expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true)
    expect(statuses.at(-1)).toBe(429)
    expect((await tokenRequestAs('guess-new', source)).statusCode).toBe(429)
    expect((await tokenRequestAs('guess-new', '10.9.2.2')).statusCode).toBe(401)
  })

  test('is limited by its source: wrong secrets from one address do not lock the client out', async () => {
    const attacker = '10.9.0.1'
    const statuses: number[] = []
    for (let i = 0; i <= LIMIT; i++)
      statuses.push((await tokenRequest('wrong', attacker)).statusCode)
    expect(statuses).toEqual([401, 401, 401, 429])
    // refused before its secret is checked: the right secret from that address is refused too
    expect((await tokenRequest('service-secret', attacker)).statusCode).toBe(429)
    // the real client, from its own address, is not charged for the attacker's failures
    const real = await tokenRequest('service-secret', '10.9.0.2')
    expect(real.statusCode).toBe(200)
    expect(real.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1))
  })
})

const cookiesOf = (res: ServerInjectResponse): string[] => {
  const set = res.headers['set-cookie']
  return (Array.isArray(set) ? set : set ? [set] : []).map((c) => c.split(';')[0] ?? '')
}

/** Opens the login page of a fresh authorization request and posts the form once. */
async function signIn(username: string, password: string, remoteAddress: string) {
  const query = authorizeQuery()
  const page = await app.server.inject({ url: `/auth/authorize?${query}`, remoteAddress })
  const interaction = /name="interaction" value="([^"]+)"/.exec(page.payload)?.[1] ?? ''
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.payload)?.[1] ?? ''
  return app.server.inject({
    method: 'POST',
    url: '/auth/login',
    remoteAddress,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookiesOf(page).join('; '),
      accept: 'application/json',
    },
    payload: new URLSearchParams({ interaction, csrf, username, password }).toString(),
  })
}

describe('password spraying (RFC 6749 §10.10)', () => {
  test('one password against many usernames from one address is throttled', async () => {
    const statuses: number[] = []
    for (let i = 0; i <= LIMIT; i++)
      statuses.push((await signIn(`user-${i}`, 'Spring2026!', '10.9.1.1')).statusCode)
    expect(statuses).toEqual([401, 401, 401, 429])
    // another address is not affected
    expect((await signIn('alice', 'wonderland', '10.9.1.2')).statusCode).toBe(303)
  })
})
