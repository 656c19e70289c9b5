import { CookieJar } from 'tough-cookie'
import { describe, expect, test } from 'vitest'
import type { Http, HttpResponse, RequestOptions } from './http.ts'
import { SharedSessions } from './session.ts'

const IDP = 'https://idp.test'
const CLIENT = 'https://client.test'
const LOGIN = /<input\b[^>]*\btype\s*=\s*["']?password\b/i
const user = { username: 'alice', password: 'pw' }

/** A fake client answering from a table of URL → response; records the Cookie headers sent. */
function fakeHttp(
  answer: (
    url: string,
    cookie: string | undefined,
  ) => { status: number; headers?: Record<string, string>; text?: string },
): Http & { cookies: (string | undefined)[] } {
  const cookies: (string | undefined)[] = []
  const http = {
    exchanges: [],
    cookies,
    record: () => undefined,
    request(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
      const cookie = options.headers?.cookie
      cookies.push(cookie)
      const a = answer(url, cookie)
      const res: HttpResponse = {
        status: a.status,
        headers: new Headers(a.headers ?? {}),
        text: a.text ?? '',
        json: undefined,
        url,
      }
      return Promise.resolve(res)
    },
    get: () => Promise.reject(new Error('unused')),
    postForm: () => Promise.reject(new Error('unused')),
  }
  return http
}

async function signedInJar(): Promise<CookieJar> {
  const jar = new CookieJar()
  await jar.setCookie('sid=abc; Path=/; Secure; HttpOnly', `${IDP}/`)
  return jar
}

describe('SharedSessions.replay', () => {
  test('follows the IdP redirects with the session cookie and stops at the client URI', async () => {
    const sessions = new SharedSessions()
    const http = fakeHttp((url): { status: number; headers: Record<string, string> } =>
      url.startsWith(`${IDP}/auth/authorize`)
        ? { status: 302, headers: { location: '/auth/resume', 'set-cookie': 'step=1; Path=/' } }
        : { status: 303, headers: { location: `${CLIENT}/cb?code=c1&state=s` } },
    )
    const out = await sessions.replay(
      http,
      await signedInJar(),
      `${IDP}/auth/authorize?x=1`,
      [CLIENT],
      LOGIN,
    )
    expect(out).toEqual({ kind: 'callback', callback: `${CLIENT}/cb?code=c1&state=s` })
    expect(http.cookies[0]).toBe('sid=abc')
    // a cookie set during the replay is sent on the next hop, but never kept in the shared jar
    expect(http.cookies[1]).toBe('sid=abc; step=1')
    expect(sessions.counters.sessionReplays).toBe(1)
  })

  test('a login form means the session is gone; a session never honoured turns reuse off', async () => {
    const notices: string[] = []
    const sessions = new SharedSessions(undefined, (why) => notices.push(why))
    const http = fakeHttp(() => ({ status: 200, text: '<form><input type="password"></form>' }))
    const done = sessions.claim(user)
    expect(done).toBeDefined()
    expect(sessions.claim(user)).toBeUndefined()
    const jar = await signedInJar()
    // establish the session from a (fake) browser context's cookies
    await done?.({
      cookies: () =>
        Promise.resolve([
          {
            name: 'sid',
            value: 'abc',
            domain: 'idp.test',
            path: '/',
            secure: true,
            httpOnly: true,
          },
        ]),
    } as never)
    const current = await sessions.current(user)
    expect(current).toBeDefined()
    const out = await sessions.replay(http, jar, `${IDP}/auth/authorize`, [CLIENT], LOGIN)
    expect(out).toEqual({ kind: 'login' })
    sessions.forget(user, current as CookieJar)
    expect(notices).toHaveLength(1)
    expect(sessions.current(user)).toBeUndefined()
  })

  test('an answer that is neither a redirect nor the login form is left to the browser', async () => {
    const sessions = new SharedSessions()
    const http = fakeHttp(() => ({ status: 400, text: '<p>invalid_request</p>' }))
    const out = await sessions.replay(http, await signedInJar(), `${IDP}/a`, [CLIENT], LOGIN)
    expect(out.kind).toBe('other')
  })
})
