import { CookieJar } from 'tough-cookie'
import { describe, expect, test } from 'vitest'
import { readApproveForm, readLoginForm, signInByFormPost } from './form-sign-in.ts'
import type { Http, HttpResponse, RequestOptions } from './http.ts'

const IDP = 'https://idp.test'
const CLIENT = 'https://client.test'
const user = { username: 'alice', password: 'pw' }

const LOGIN_PAGE = `<!doctype html><html><body>
<form method="post" action="/login?x=1">
  <input type="hidden" name="csrf" value="t0k&amp;en">
  <input type="hidden" value="nameless">
  <input name="username" autocomplete="username">
  <input type="password" name="password">
  <button type="submit" name="cancel" value="cancel">Cancel</button>
  <button type="submit" name="go" value="1">Sign in</button>
</form></body></html>`

describe('readApproveForm', () => {
  test('reads a one-button form as a browser submits it: hidden and checked fields, the named submit, its own action', () => {
    const page = `<html><body><p>App would like to access your profile</p>
<form id=f method=get action="/consent?old=1"><input type=hidden name=uid value="u&amp;1">
<input type=checkbox name=scope value=profile checked><input type=checkbox name=scope value=email>
</form><button form=f name=ok value=yes>Allow access</button>
<a href="/abort">Cancel</a></body></html>`
    expect(readApproveForm(page, `${IDP}/i/u1`)).toEqual({
      action: `${IDP}/consent?old=1`,
      method: 'GET',
      fields: [
        ['uid', 'u&1'],
        ['scope', 'profile'],
        ['ok', 'yes'],
      ],
      label: 'consent (built-in: "Allow access")',
    })
  })

  test('a control that is hidden or disabled is not pressed; "Not now" is never an approval', () => {
    expect(
      readApproveForm('<form method=post><button hidden>Continue</button></form>', IDP),
    ).toBeUndefined()
    expect(
      readApproveForm('<form method=post><button>Not now, continue later</button></form>', IDP),
    ).toBeUndefined()
    expect(
      readApproveForm(
        '<form method=post><input type=submit value="Continue"></form><script type="application/ld+json">{}</script>',
        `${IDP}/p`,
      ),
    ).toMatchObject({ action: `${IDP}/p`, method: 'POST', fields: [] })
  })
})

describe('readLoginForm', () => {
  test('reads action, hidden fields, credential fields and the submit control as a browser would', () => {
    expect(readLoginForm(LOGIN_PAGE, `${IDP}/authorize?client_id=c`)).toEqual({
      action: `${IDP}/login?x=1`,
      hidden: [['csrf', 't0k&en']],
      usernameField: 'username',
      passwordField: 'password',
      submit: [['go', '1']],
    })
  })

  test('a form without action posts to the page itself; <base> moves a relative action', () => {
    const bare = '<form method=post><input type=email name=e><input type=password name=p></form>'
    expect(readLoginForm(bare, `${IDP}/u/login?s=1`)?.action).toBe(`${IDP}/u/login?s=1`)
    const based = `<base href="${IDP}/i/"><form action="next"><input name=login><input type=password name=p></form>`
    expect(readLoginForm(based, `${IDP}/a`)).toMatchObject({
      action: `${IDP}/i/next`,
      usernameField: 'login',
      submit: [],
    })
  })

  test('no password form, or unnamed credential fields: no form to post', () => {
    expect(readLoginForm('<form><input name=q></form>', IDP)).toBeUndefined()
    expect(readLoginForm('<form><input type=password></form>', IDP)).toBeUndefined()
  })
})

/** A fake IdP: authorize → login page (sets a pre-login cookie) → post → resume → client. */
function fakeIdp(options: { sessionLives?: boolean; refuse?: boolean } = {}) {
  const sent: { url: string; method: string; cookie?: string; form?: unknown; origin?: string }[] =
    []
  const http: Http = {
    exchanges: [],
    record: () => undefined,
    request(url: string, init: RequestOptions = {}): Promise<HttpResponse> {
      const method = init.method ?? 'GET'
      sent.push({
        url,
        method,
        cookie: init.headers?.cookie,
        form: init.form,
        origin: init.headers?.origin,
      })
      const answer = (status: number, headers: Record<string, string>, text = '') =>
        Promise.resolve({ status, headers: new Headers(headers), text, json: undefined, url })
      const path = new URL(url).pathname
      if (path === '/authorize')
        return options.sessionLives && init.headers?.cookie?.includes('sid=')
          ? answer(302, { location: `${CLIENT}/cb?code=fromsession` })
          : answer(302, { location: '/login', 'set-cookie': 'pre=1; Path=/; Secure; HttpOnly' })
      if (path === '/login' && method === 'GET') return answer(200, {}, LOGIN_PAGE)
      if (path === '/login' && method === 'POST')
        return options.refuse
          ? answer(200, {}, LOGIN_PAGE)
          : answer(303, { location: '/resume', 'set-cookie': 'sid=new; Path=/; Secure; HttpOnly' })
      if (path === '/resume') return answer(302, { location: `${CLIENT}/cb?code=abc&state=s` })
      return answer(404, {})
    },
    get: () => Promise.reject(new Error('unused')),
    postForm: () => Promise.reject(new Error('unused')),
  }
  return { http, sent }
}

describe('signInByFormPost', () => {
  test('posts the credentials with the cookies and the Origin a browser would send, and follows to the client', async () => {
    const { http, sent } = fakeIdp()
    const result = await signInByFormPost(http, `${IDP}/authorize?x=1`, user, [CLIENT])
    expect(result.kind).toBe('signed-in')
    if (result.kind !== 'signed-in') return
    expect(result.callback).toBe(`${CLIENT}/cb?code=abc&state=s`)
    const post = sent.find((s) => s.method === 'POST')
    expect(post).toMatchObject({
      url: `${IDP}/login?x=1`,
      cookie: 'pre=1',
      origin: IDP,
      form: { csrf: 't0k&en', go: '1', username: 'alice', password: 'pw' },
    })
    // the client URI is never fetched
    expect(sent.some((s) => s.url.startsWith(CLIENT))).toBe(false)
    expect(await result.jar.getCookieString(`${IDP}/`)).toContain('sid=new')
  })

  test('a session that still lives in the given cookies reaches the client with no login form: not a sign-in', async () => {
    const { http } = fakeIdp({ sessionLives: true })
    const jar = new CookieJar()
    await jar.setCookie('sid=old; Path=/; Secure', `${IDP}/`)
    const result = await signInByFormPost(http, `${IDP}/authorize`, user, [CLIENT], jar)
    expect(result.kind).toBe('not-signed-in')
    if (result.kind === 'not-signed-in') expect(result.why).toMatch(/without a login page/)
  })

  test('a post that ends at the IdP (refused, or a step the form post cannot take) is not a sign-in', async () => {
    const { http } = fakeIdp({ refuse: true })
    const result = await signInByFormPost(http, `${IDP}/authorize`, user, [CLIENT])
    expect(result.kind).toBe('not-signed-in')
    if (result.kind === 'not-signed-in') expect(result.why).toMatch(/ended at the IdP/)
  })
})
