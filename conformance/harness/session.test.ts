import { CookieJar } from 'tough-cookie'
import { describe, expect, test } from 'vitest'
import type { Http, HttpResponse, RequestOptions } from './http.ts'
import { MAX_ANSWERS, SharedSessions } from './session.ts'

const IDP = 'https://idp.test'
const CLIENT = 'https://client.test'
const LOGIN = /<input\b[^>]*\btype\s*=\s*["']?password\b/i
const user = { username: 'alice', password: 'pw' }
const LOGIN_PAGE = '<form><input type="password"></form>'

type Answer = { status: number; headers?: Record<string, string>; text?: string }

/** A fake client answering from a table of URL → response; records the Cookie headers sent. */
function fakeHttp(
  answer: (
    url: string,
    cookie: string | undefined,
    sent: { method: string; form: RequestOptions['form']; origin: string | undefined },
  ) => { status: number; headers?: Record<string, string>; text?: string },
): Http & { cookies: (string | undefined)[]; urls: string[] } {
  const cookies: (string | undefined)[] = []
  const urls: string[] = []
  const http = {
    exchanges: [],
    cookies,
    urls,
    record: () => undefined,
    request(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
      const cookie = options.headers?.cookie
      cookies.push(cookie)
      urls.push(url)
      const a = answer(url, cookie, {
        method: options.method ?? 'GET',
        form: options.form,
        origin: options.headers?.origin,
      })
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
    expect(out).toEqual({
      kind: 'callback',
      callback: `${CLIENT}/cb?code=c1&state=s`,
      answered: [],
    })
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
    await sessions.forget(user, current as CookieJar)
    expect(notices).toHaveLength(1)
    expect(sessions.current(user)).toBeUndefined()
  })

  test("follows the IdP's redirects through its other origins (a login app), answering a consent page there with that page's Origin; without them, hands over", async () => {
    const APP = 'https://login.idp.test'
    const answer = (url: string, _: unknown, sent: { method: string; origin?: string }) => {
      if (url.startsWith(`${IDP}/auth/authorize`))
        return { status: 302, headers: { location: `${APP}/u/1` } }
      if (url === `${APP}/u/1` && sent.method === 'GET')
        return {
          status: 200,
          text: `<title>Authorize</title><p>Example App wants to access your profile</p><form method="post" action="/u/1"><button>Allow</button></form>`,
        }
      if (url === `${APP}/u/1` && sent.origin === APP)
        return { status: 303, headers: { location: `${IDP}/auth/resume` } }
      if (url === `${IDP}/auth/resume`)
        return { status: 303, headers: { location: `${CLIENT}/cb?code=c1&state=s` } }
      return { status: 400, text: 'no' }
    }
    const url = `${IDP}/auth/authorize?x=1`
    const known = await new SharedSessions().replay(
      fakeHttp(answer),
      await signedInJar(),
      url,
      [CLIENT],
      LOGIN,
      [],
      new Set([IDP, APP]),
    )
    expect(known).toEqual({
      kind: 'callback',
      callback: `${CLIENT}/cb?code=c1&state=s`,
      answered: ['consent (built-in: "Allow")'],
    })
    // the base URL's origin only: the login app is not followed (the browser goes on)
    const unknown = await new SharedSessions().replay(
      fakeHttp(answer),
      await signedInJar(),
      url,
      [CLIENT],
      LOGIN,
    )
    expect(unknown.kind).toBe('other')
    expect(unknown.kind === 'other' ? unknown.why : '').toMatch(
      /redirected to https:\/\/login\.idp\.test, not one of the IdP's origins/,
    )
  })

  test('an answer that is neither a redirect nor the login form is left to the browser', async () => {
    const sessions = new SharedSessions()
    const http = fakeHttp(() => ({ status: 400, text: '<p>invalid_request</p>' }))
    const out = await sessions.replay(http, await signedInJar(), `${IDP}/a`, [CLIENT], LOGIN)
    expect(out.kind).toBe('other')
  })

  /** The interstitial of examples/oidc-provider's pages: Continue, a link, a Cancel form. */
  const CONTINUE_PAGE = `<!doctype html><html><head><title>Continue</title></head><body>
<h1>Welcome back</h1><p>You are signed in as <strong>alice</strong>.</p>
<form method="post" action="/interaction/u1/continue"><input type="hidden" name="xsrf" value="t1">
<button type="submit">Continue</button></form>
<p><a href="/interaction/u1?switch=1">Use another account</a></p>
<form method="post" action="/interaction/u1/abort"><button type="submit" value="cancel">Cancel</button></form>
</body></html>`
  const CONSENT_PAGE = `<!doctype html><html><body><h1>Allow app to access your account?</h1>
<form method="post" action="/interaction/u1/confirm"><button type="submit" name="decision" value="allow">Allow</button></form>
<form method="post" action="/interaction/u1/abort"><button type="submit">Deny</button></form></body></html>`

  test('answers a "continue" interstitial and a consent page as the browser would, then reaches the client', async () => {
    const sessions = new SharedSessions()
    const posts: { url: string; form: unknown; origin: string | undefined }[] = []
    const http = fakeHttp((url, _cookie, sent): Answer => {
      if (sent.method === 'POST') posts.push({ url, form: sent.form, origin: sent.origin })
      if (url.startsWith(`${IDP}/auth`))
        return { status: 303, headers: { location: '/interaction/u1' } }
      if (url === `${IDP}/interaction/u1` && posts.length === 0)
        return { status: 200, text: CONTINUE_PAGE }
      if (url === `${IDP}/interaction/u1/continue`)
        return {
          status: 303,
          headers: { location: '/interaction/u1', 'set-cookie': 'i=2; Path=/' },
        }
      if (url === `${IDP}/interaction/u1` && posts.length === 1)
        return { status: 200, text: CONSENT_PAGE }
      if (url === `${IDP}/interaction/u1/confirm`)
        return { status: 303, headers: { location: `${CLIENT}/cb?code=c2` } }
      return { status: 500 }
    })
    const out = await sessions.replay(http, await signedInJar(), `${IDP}/auth?x=1`, [CLIENT], LOGIN)
    expect(out).toEqual({
      kind: 'callback',
      callback: `${CLIENT}/cb?code=c2`,
      // named as the browser names them: a page with a refusing control reads as consent
      answered: ['consent (built-in: "Continue")', 'consent (built-in: "Allow")'],
    })
    // the hidden field and the named submit go with the post, with the IdP's Origin
    expect(posts).toEqual([
      { url: `${IDP}/interaction/u1/continue`, form: { xsrf: ['t1'] }, origin: IDP },
      { url: `${IDP}/interaction/u1/confirm`, form: { decision: ['allow'] }, origin: IDP },
    ])
    // a cookie the IdP set while answering goes with the next hop
    expect(http.cookies.at(-1)).toBe('sid=abc; i=2')
    // the cancel and deny forms were never sent
    expect(http.urls.some((u) => u.endsWith('/abort'))).toBe(false)
    expect(sessions.counters.sessionReplays).toBe(1)
  })

  test.each([
    [
      'a script-rendered page (no form in its HTML)',
      '<html><body><div id=app></div><script src="/app.js"></script></body></html>',
    ],
    [
      'a page whose scripts may change its form',
      `${CONTINUE_PAGE}<script>document.forms[0].action = '/elsewhere'</script>`,
    ],
    [
      'a logout confirmation',
      '<form method=post action=/logout><button name=logout value=yes>Yes, sign me out</button></form>',
    ],
    [
      'a form with two submit controls',
      '<form method=post action=/c><button name=d value=y>Allow</button><button name=d value=n>Deny</button></form>',
    ],
    [
      'a form with a field to fill',
      '<form method=post action=/c><input name=otp><button>Continue</button></form>',
    ],
    [
      'a form whose only button refuses',
      '<form method=post action=/c><button>Cancel</button></form>',
    ],
    [
      'two forms that would each approve',
      '<form method=post action=/a><button>Continue</button></form><form method=post action=/b><button>Allow</button></form>',
    ],
    [
      'a form that posts to another origin',
      '<form method=post action="https://evil.test/c"><button>Continue</button></form>',
    ],
  ])('leaves %s to the browser, posting nothing', async (_what, page) => {
    const sessions = new SharedSessions()
    const methods: string[] = []
    const http = fakeHttp((_url, _cookie, sent) => {
      methods.push(sent.method)
      return { status: 200, text: page }
    })
    const out = await sessions.replay(http, await signedInJar(), `${IDP}/a`, [CLIENT], LOGIN)
    expect(out.kind).toBe('other')
    expect(methods).toEqual(['GET'])
  })

  test('a page the configured interactions may describe is left to the browser', async () => {
    const sessions = new SharedSessions()
    const http = fakeHttp(() => ({ status: 200, text: CONTINUE_PAGE }))
    const out = await sessions.replay(http, await signedInJar(), `${IDP}/a`, [CLIENT], LOGIN, [
      { name: 'continue', url: '/a$', steps: [] },
    ])
    expect(out.kind).toBe('other')
    expect(http.urls).toHaveLength(1)
    // one configured for another page leaves this one to the built-in answer
    await sessions.replay(http, await signedInJar(), `${IDP}/a`, [CLIENT], LOGIN, [
      { name: 'mfa', url: '/mfa$', steps: [] },
    ])
    expect(http.urls.length).toBeGreaterThan(2)
  })

  // an account chooser of the shape issue 29's blind run met: one form whose only submit
  // continues as the session's user, and a link to use another account
  const CHOOSER_PAGE = `<!doctype html><html><head><title>Choose an account</title></head><body>
<h1>Choose an account</h1>
<form method="post" action="/u/u1/choose"><button type="submit" id="continue-as">Continue as Alice</button>
<small>alice@example.test</small></form>
<p><a href="/u/u1?switch=1" id="use-another">Use another account</a></p></body></html>`

  test('with interactions configured, a page whose one approving submit is all it offers is still answered (issue 29, fault 3)', async () => {
    const chooser = [
      { name: 'chooser', kind: 'account' as const, detect: '#continue-as', steps: [] },
    ]
    const sessions = new SharedSessions()
    const posted: string[] = []
    const http = fakeHttp((url, _cookie, sent): Answer => {
      if (sent.method === 'POST') {
        posted.push(url)
        return { status: 303, headers: { location: `${CLIENT}/cb?code=c3` } }
      }
      return { status: 200, text: CHOOSER_PAGE }
    })
    const out = await sessions.replay(
      http,
      await signedInJar(),
      `${IDP}/a`,
      [CLIENT],
      LOGIN,
      chooser,
    )
    expect(out).toEqual({
      kind: 'callback',
      callback: `${CLIENT}/cb?code=c3`,
      answered: ['continue (built-in: "Continue as Alice")'],
    })
    expect(posted).toEqual([`${IDP}/u/u1/choose`])
    // anything else a configured step could press or choose there is the browser's: a
    // checkbox, or a second submit (a form of its own that refuses)
    for (const more of [
      '<input type="checkbox" name="remember" id="remember">',
      '<form method="post" action="/u/u1/abort"><button>Cancel</button></form>',
    ]) {
      const methods: string[] = []
      const page = CHOOSER_PAGE.replace('</body>', `${more}</body>`)
      const other = fakeHttp((_url, _cookie, sent): Answer => {
        methods.push(sent.method)
        return sent.method === 'POST'
          ? { status: 303, headers: { location: `${CLIENT}/cb?code=c4` } }
          : { status: 200, text: page }
      })
      const left = await sessions.replay(
        other,
        await signedInJar(),
        `${IDP}/a`,
        [CLIENT],
        LOGIN,
        chooser,
      )
      expect(left.kind).toBe('other')
      expect(methods).toEqual(['GET'])
      // without configuration the same page is the built-in answer's, as the browser's is
      const plain = await sessions.replay(other, await signedInJar(), `${IDP}/a`, [CLIENT], LOGIN)
      expect(plain.kind).toBe('callback')
    }
  })

  test('answers at most MAX_ANSWERS pages, then leaves the next one to the browser', async () => {
    const sessions = new SharedSessions()
    const http = fakeHttp((url, _cookie, sent) =>
      sent.method === 'POST'
        ? { status: 303, headers: { location: '/interaction/u1' } }
        : { status: 200, text: CONTINUE_PAGE.replace('/interaction/u1/continue', url) },
    )
    const out = await sessions.replay(http, await signedInJar(), `${IDP}/a`, [CLIENT], LOGIN)
    expect(out.kind === 'other' ? out.why : '').toMatch(/yet another page/)
    expect(http.urls.filter((_, i) => i % 2 === 1)).toHaveLength(MAX_ANSWERS)
    expect(sessions.counters.sessionReplays).toBe(0)
  })

  test('a session the IdP gives a new identifier when the interstitial is answered lives on in the new cookie, one replay at a time', async () => {
    const sessions = new SharedSessions()
    // like node-oidc-provider: answering an interaction rotates the session id, the old is gone
    let live = 'abc'
    let n = 0
    const http = fakeHttp((url, cookie, sent): Answer => {
      const sid = /sid=(\w+)/.exec(cookie ?? '')?.[1]
      if (url.startsWith(`${IDP}/auth`))
        return sid === live
          ? { status: 303, headers: { location: '/interaction/u1' } }
          : { status: 200, text: LOGIN_PAGE }
      if (url === `${IDP}/interaction/u1` && sent.method === 'GET')
        return { status: 200, text: CONTINUE_PAGE }
      if (url === `${IDP}/interaction/u1/continue` && sid === live) {
        live = `r${++n}`
        return {
          status: 303,
          headers: { location: `${CLIENT}/cb?code=${live}`, 'set-cookie': `sid=${live}; Path=/` },
        }
      }
      return { status: 400 }
    })
    const jar = await signedInJar()
    const outs = await Promise.all(
      [1, 2, 3].map(() => sessions.replay(http, jar, `${IDP}/auth?x=1`, [CLIENT], LOGIN)),
    )
    expect(outs.map((o) => o.kind)).toEqual(['callback', 'callback', 'callback'])
    expect(sessions.counters.sessionReplays).toBe(3)
    // the jar the caller holds is unchanged: the newest cookies are the session's, not the jar's
    expect(await jar.getCookieString(`${IDP}/`)).toBe('sid=abc')
  })
})

describe('SharedSessions.hold', () => {
  test('a browser holding the session keeps its replays waiting; the cookies it ends with are the session from then on', async () => {
    const sessions = new SharedSessions()
    const http = fakeHttp((_url, cookie): Answer => {
      const sid = /sid=(\w+)/.exec(cookie ?? '')?.[1]
      // only the identifier the browser was given last is live (the provider rotated it)
      return sid === 'rotated'
        ? { status: 303, headers: { location: `${CLIENT}/cb?code=c1` } }
        : { status: 200, text: LOGIN_PAGE }
    })
    const jar = await signedInJar()
    const held = await sessions.hold(jar)
    expect(await held?.jar.getCookieString(`${IDP}/`)).toBe('sid=abc')
    // a replay and a second hold started now wait for the release
    const replay = sessions.replay(http, jar, `${IDP}/auth?x=1`, [CLIENT], LOGIN)
    const second = sessions.hold(jar)
    await new Promise((resolve) => setImmediate(resolve))
    expect(http.urls).toEqual([])
    const rotated = new CookieJar()
    await rotated.setCookie('sid=rotated; Path=/; Secure; HttpOnly', `${IDP}/`)
    held?.release(rotated)
    // a second release is ignored
    held?.release()
    expect((await replay).kind).toBe('callback')
    expect(http.cookies).toEqual(['sid=rotated'])
    const next = await second
    expect(await next?.jar.getCookieString(`${IDP}/`)).toBe('sid=rotated')
    next?.release()
    expect(await sessions.newest(jar).getCookieString(`${IDP}/`)).toBe('sid=rotated')
  })
})
