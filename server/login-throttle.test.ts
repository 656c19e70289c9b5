import { createHash, randomBytes } from 'node:crypto'
import type { ServerInjectResponse } from '@hapi/hapi'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import type { App } from './app.ts'
import { loadConfig } from './config.ts'
import { testApp, windowFromNow } from './test-helpers.ts'
import type * as passwords from './users/passwords.ts'
import { verifyPasswordAtCost } from './users/passwords.ts'

// count the password checks (scrypt) the login route makes; the real check still runs
vi.mock('./users/passwords.ts', async (importOriginal) => {
  const real = await importOriginal<typeof passwords>()
  return { ...real, verifyPasswordAtCost: vi.fn(real.verifyPasswordAtCost) }
})

const LIMIT = 3
const cookiesOf = (res: ServerInjectResponse): string[] => {
  const set = res.headers['set-cookie']
  return (Array.isArray(set) ? set : set ? [set] : []).map((c) => c.split(';')[0] ?? '')
}

let app: App
beforeAll(async () => {
  app = await testApp({
    rateLimits: {
      ...loadConfig({}, {}).rateLimits,
      login: windowFromNow(LIMIT, 300),
    },
  })
})
afterAll(async () => {
  await app.stop()
})

/** Opens the login page of a fresh authorization request and posts the form once. */
async function attempt(username: string, password: string) {
  const challenge = createHash('sha256')
    .update(randomBytes(32).toString('base64url'))
    .digest('base64url')
  const query = new URLSearchParams({
    client_id: 'conformance-client',
    redirect_uri: 'https://client.example/callback',
    response_type: 'code',
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })
  const page = await app.server.inject(`/auth/authorize?${query}`)
  const interaction = /name="interaction" value="([^"]+)"/.exec(page.payload)?.[1] ?? ''
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.payload)?.[1] ?? ''
  return app.server.inject({
    method: 'POST',
    url: '/auth/login',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookiesOf(page).join('; '),
      accept: 'application/json',
    },
    payload: new URLSearchParams({ interaction, csrf, username, password }).toString(),
  })
}

describe('login throttling (RFC 6749 §10.10)', () => {
  test('once the failures are used up, an attempt is refused before its password is hashed', async () => {
    const checks = vi.mocked(verifyPasswordAtCost)
    checks.mockClear()
    const statuses: number[] = []
    for (let i = 0; i < LIMIT; i++) statuses.push((await attempt('alice', 'wrong')).statusCode)
    expect(statuses).toEqual([401, 401, 401])
    expect(checks).toHaveBeenCalledTimes(LIMIT)

    // the right password too: throttling that a correct guess lifts would not slow guessing
    const blocked = [await attempt('alice', 'wonderland'), await attempt('alice', 'wrong')]
    for (const res of blocked) {
      expect(res.statusCode).toBe(429)
      expect(JSON.parse(res.payload)).toMatchObject({ error: 'temporarily_unavailable' })
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
    }
    expect(checks).toHaveBeenCalledTimes(LIMIT)

    // another username from the same address is not blocked, and is checked
    expect((await attempt('bob', 'wrong')).statusCode).toBe(401)
    expect(checks).toHaveBeenCalledTimes(LIMIT + 1)
  })
})
