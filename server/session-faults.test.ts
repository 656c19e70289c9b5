import type { ServerInjectResponse } from '@hapi/hapi'
import { describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import type { Fault } from './deps.ts'
import { authorizeQuery, postLoginForm, testApp } from './test-helpers.ts'

// The self-test's faults of the session cookie (SEC-06, SEC-07, LOGIN-05) each break one
// property of it and nothing else: the session still works.

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

async function withFault<T>(fault: Fault | undefined, fn: (app: App) => Promise<T>): Promise<T> {
  const app = await testApp({}, fault ? { faults: [fault] } : {})
  try {
    return await fn(app)
  } finally {
    await app.stop()
  }
}

describe('session cookie faults', () => {
  test('without a fault the cookie is __Host-, Secure, HttpOnly and SameSite=Lax', async () => {
    const { cookie, replayed } = await withFault(undefined, signIn)
    expect(cookie).toMatch(/^__Host-idp_session=[\w-]{43};/)
    expect(cookie).toMatch(/; Secure/)
    expect(cookie).toMatch(/; HttpOnly/)
    expect(cookie).toMatch(/; SameSite=Lax/)
    expect(replayed).toBe(true)
  })

  test.each([
    ['session-cookie-not-secure', /^idp_session=[\w-]{43};/, (c: string) => !/; Secure/.test(c)],
    ['session-cookie-not-httponly', /^__Host-idp_session=/, (c: string) => !/; HttpOnly/.test(c)],
    [
      'session-cookie-samesite-none',
      /^__Host-idp_session=/,
      (c: string) => /SameSite=None/.test(c),
    ],
    [
      'weak-session-ids',
      /^__Host-idp_session=session-[0-9a-f]{8}0{27};/,
      (c: string) => /; Secure/.test(c),
    ],
  ] as const)('%s breaks only that, and the session still works', async (fault, name, broken) => {
    const { cookie, replayed } = await withFault(fault, signIn)
    expect(cookie).toMatch(name)
    expect(broken(cookie), cookie).toBe(true)
    expect(replayed).toBe(true)
  })
})
