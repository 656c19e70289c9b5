import type { ServerInjectResponse } from '@hapi/hapi'
import { expect, test } from 'vitest'
import { authorizeQuery, postLoginForm, testApp } from './test-helpers.ts'

const setCookies = (res: ServerInjectResponse): string[] => {
  const set = res.headers['set-cookie']
  return Array.isArray(set) ? set : set ? [set] : []
}

test('the session cookie is __Host-, Secure, HttpOnly and SameSite=Lax, and carries the session', async () => {
  const app = await testApp()
  try {
    const login = await postLoginForm(app, authorizeQuery(), {
      username: 'alice',
      password: 'wonderland',
    })
    expect(login.statusCode).toBe(303)
    const cookie = setCookies(login).find((c) => c.startsWith('__Host-idp_session=')) ?? ''
    expect(cookie).toMatch(/^__Host-idp_session=[\w-]{43};/)
    expect(cookie).toMatch(/; Secure/)
    expect(cookie).toMatch(/; HttpOnly/)
    expect(cookie).toMatch(/; SameSite=Lax/)
    const again = await app.server.inject({
      url: `/auth/authorize?${authorizeQuery({ prompt: 'none' })}`,
      headers: { cookie: cookie.split(';')[0] ?? '' },
    })
    expect(new URL(again.headers.location ?? 'https://x.invalid').searchParams.has('code')).toBe(
      true,
    )
  } finally {
    await app.stop()
  }
})
