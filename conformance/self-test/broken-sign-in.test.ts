import type { ServerInjectResponse } from '@hapi/hapi'
import { describe, expect, test } from 'vitest'
import type { App } from '../../server/app.ts'
import { wrappedStores } from './wrapped-stores.ts'
import { authorizeQuery, postLoginForm, testApp } from '../../server/test-helpers.ts'
import type { Extend } from './broken-server.ts'
import {
  sessionCookieRenamed,
  sessionCookieWith,
  signInsUncounted,
  sprayingUncounted,
  weakSessionIds,
} from './broken-sign-in.ts'

// The broken session cookies (SEC-06, SEC-07, LOGIN-05) each break one property of the cookie
// and nothing else: the session still works, so the check fails by that property alone.

const setCookies = (res: ServerInjectResponse): string[] => {
  const set = res.headers['set-cookie']
  return Array.isArray(set) ? set : set ? [set] : []
}

/** Signs alice in; returns the session cookie as set, and whether prompt=none then gets a code. */
async function signIn(app: App): Promise<{ cookie: string; replayed: boolean }> {
  const login = await postLoginForm(app, authorizeQuery(), {
    username: 'alice',
    password: 'wonderland',
  })
  expect(login.statusCode).toBe(303)
  const cookie = setCookies(login).find((c) => /^(__Host-)?idp_session=[^;]/.test(c)) ?? ''
  const again = await app.server.inject({
    url: `/auth/authorize?${authorizeQuery({ prompt: 'none' })}`,
    headers: { cookie: cookie.split(';')[0] ?? '' },
  })
  const replayed = new URL(again.headers.location ?? 'https://x.invalid').searchParams.has('code')
  return { cookie, replayed }
}

async function signInWith(extend: Extend): Promise<{ cookie: string; replayed: boolean }> {
  const app = await testApp()
  try {
    await extend(app)
    return await signIn(app)
  } finally {
    await app.stop()
  }
}

describe('broken session cookies', () => {
  test.each([
    [
      'renamed without Secure',
      sessionCookieRenamed('idp_session', { isSecure: false }),
      /^idp_session=[\w-]{43};/,
      (c: string) => !/; Secure/.test(c) && /; HttpOnly/.test(c),
    ],
    [
      'without HttpOnly',
      sessionCookieWith({ isHttpOnly: false }),
      /^__Host-idp_session=[\w-]{43};/,
      (c: string) => !/; HttpOnly/.test(c) && /; Secure/.test(c),
    ],
    [
      'SameSite=None',
      sessionCookieWith({ isSameSite: 'None' }),
      /^__Host-idp_session=[\w-]{43};/,
      (c: string) => /; SameSite=None/.test(c) && /; HttpOnly/.test(c),
    ],
    [
      'weak identifiers',
      weakSessionIds,
      /^__Host-idp_session=session-[0-9a-f]{8}0{27};/,
      (c: string) => /; Secure/.test(c) && /; HttpOnly/.test(c),
    ],
  ] as const)(
    '%s breaks only that, and the session still works',
    async (_, extend, name, broken) => {
      const { cookie, replayed } = await signInWith(extend)
      expect(cookie).toMatch(name)
      expect(broken(cookie), cookie).toBe(true)
      expect(replayed).toBe(true)
    },
  )
})

const wrapped = wrappedStores()

test('the unthrottled stores never count the login counters, and count the others', async () => {
  const all = await wrapped(signInsUncounted)
  const spraying = await wrapped(sprayingUncounted)
  for (let i = 0; i < 3; i++) {
    expect(await all.rateLimits.hit('login:1.2.3.4:u:failures', 0, 60)).toBe(1)
    expect(await all.rateLimits.hit('loginaddress:1.2.3.4:failures', 0, 60)).toBe(1)
    expect(await spraying.rateLimits.hit('loginaddress:1.2.3.4:failures', 0, 60)).toBe(1)
    await spraying.rateLimits.hit('login:1.2.3.4:u:failures', 0, 60)
    await all.rateLimits.hit('token:client:app', 0, 60)
  }
  expect(await all.rateLimits.count('login:1.2.3.4:u:failures', 0)).toBe(0)
  expect(await spraying.rateLimits.count('loginaddress:1.2.3.4:failures', 0)).toBe(0)
  expect(await spraying.rateLimits.count('login:1.2.3.4:u:failures', 0)).toBe(3)
  expect(await all.rateLimits.count('token:client:app', 0)).toBe(3)
})
