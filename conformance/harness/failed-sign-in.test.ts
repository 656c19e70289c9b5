import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext } from '@playwright/test'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { launchBrowser } from './browser.ts'
import { bodyCarries, failedSignIn, onFirstLoginPage } from './failed-sign-in.ts'
import type { LoginConfig, TargetUser } from './target.ts'

// A failed sign-in against small pages shaped like real logins: an identifier-first login (the
// e-mail page, then the password page), a script login with a one-time code after the password,
// and the usual one-page form. After a refusal the attempt ends with the provider's answer,
// never with a step that only follows a success timing out.

const wrong: TargetUser = { username: 'alice@example.com', password: 'wrong pass&"word' }

const html = (body: string): string =>
  `<!doctype html><html><head><title>Sign in</title></head><body>${body}</body></html>`

const ID_PAGE = html(
  `<form method="post" action="/id"><input type="email" name="user"><button id="next">Next</button></form>`,
)
const PW_PAGE = (error: string): string =>
  html(
    `${error}<form method="post" action="/pw"><input type="password" name="pw"><button id="signin">Sign in</button></form>`,
  )
const SPA_PAGE = html(`<div id="app"></div><script>
  document.getElementById('app').innerHTML = '<input name="name"><input type="password" name="pw"><button id="go">Sign in</button><p id="msg"></p>'
  document.getElementById('go').onclick = async () => {
    const res = await fetch('/api/authn', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: document.querySelector('[name=name]').value, password: document.querySelector('[name=pw]').value }) })
    if (res.status === 401) document.getElementById('msg').textContent = 'Wrong password'
    else document.getElementById('app').innerHTML = '<input id="otp"><button id="verify">Verify</button>'
  }
</script>`)
const FORM_PAGE = (error: string): string =>
  html(
    `${error}<form method="post" action="/login"><input name="username"><input type="password" name="password"><button type="submit">Sign in</button></form>`,
  )

// issue 29: the usual form in a frame (a hosted login widget), one level or two levels down
const FRAMED_PAGE = html(`<h1>Sign in to continue</h1><iframe src="/widget"></iframe>`)
const DEEP_PAGE = html(`<h1>Sign in to continue</h1><iframe src="/outer"></iframe>`)
const OUTER_PAGE = html(`<iframe src="/widget"></iframe>`)
const WIDGET_PAGE = (error: string): string =>
  html(
    `${error}<form method="post" action="/widget-login"><input name="username"><input type="password" name="password"><button type="submit">Sign in</button></form>`,
  )

function serve(req: IncomingMessage, res: ServerResponse): void {
  const send = (status: number, body: string, type = 'text/html'): void => {
    res.writeHead(status, { 'content-type': type })
    res.end(body)
  }
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (req.method === 'GET' && path === '/id') return send(200, ID_PAGE)
    // the identifier step refuses names it does not know, and stays on its page
    if (req.method === 'POST' && path === '/id') {
      if (new URLSearchParams(body).get('user') === 'nobody@example.com')
        return send(200, html(`<p>No such account</p>${ID_PAGE}`))
      res.writeHead(303, { location: '/pw' })
      return res.end()
    }
    if (req.method === 'GET' && path === '/pw') return send(200, PW_PAGE(''))
    if (req.method === 'POST' && path === '/pw')
      return send(200, PW_PAGE('<p>Your password is incorrect.</p>'))
    if (req.method === 'GET' && path === '/spa') return send(200, SPA_PAGE)
    if (req.method === 'POST' && path === '/api/authn')
      return send(401, JSON.stringify({ error: 'invalid_credentials' }), 'application/json')
    if (req.method === 'GET' && path === '/framed') return send(200, FRAMED_PAGE)
    if (req.method === 'GET' && path === '/deep') return send(200, DEEP_PAGE)
    if (req.method === 'GET' && path === '/outer') return send(200, OUTER_PAGE)
    if (req.method === 'GET' && path === '/widget') return send(200, WIDGET_PAGE(''))
    // the refusal comes after a while (a password hash): the page it leads to is waited for
    if (req.method === 'POST' && path === '/widget-login') {
      setTimeout(() => send(200, WIDGET_PAGE('<p>Wrong user name or password.</p>')), 300)
      return
    }
    if (req.method === 'GET' && path === '/login') return send(200, FORM_PAGE(''))
    if (req.method === 'POST' && path === '/login')
      return send(200, FORM_PAGE('<p>Wrong user name or password.</p>'))
    send(404, 'not found', 'text/plain')
  })
}

const identifierFirst = (stepTimeoutMs: number): LoginConfig => ({
  steps: [
    { fill: 'input[name=user]', value: '{username}' },
    { click: '#next' },
    { waitFor: 'input[name=pw]' },
    { fill: 'input[name=pw]', value: '{password}' },
    { click: '#signin' },
  ],
  stepTimeoutMs,
})

describe('bodyCarries', () => {
  test('finds a secret sent verbatim, URL-encoded, form-encoded or in JSON, and no other', () => {
    const secret = 'a b&"c'
    expect(bodyCarries(new URLSearchParams({ pw: secret }).toString(), secret)).toBe(true)
    expect(bodyCarries(`pw=${encodeURIComponent(secret)}`, secret)).toBe(true)
    expect(bodyCarries(JSON.stringify({ password: secret }), secret)).toBe(true)
    expect(bodyCarries('user=alice%40example.com', secret)).toBe(false)
    expect(bodyCarries(null, secret)).toBe(false)
  })
})

describe('failedSignIn', () => {
  let server: Server
  let browser: Browser
  let base = ''
  let context: BrowserContext
  beforeAll(async () => {
    server = createServer(serve)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    browser = await launchBrowser({ baseUrl: 'https://127.0.0.1', ca: undefined })
    context = await browser.newContext()
  }, 60_000)
  afterAll(async () => {
    await context.close()
    await browser.close()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  test('an identifier-first login ends with the answer to the password page, left on that page', async () => {
    const page = await context.newPage()
    await page.goto(`${base}/id`)
    const attempt = await failedSignIn(page, wrong, identifierFirst(10_000), 20_000)
    expect(attempt.carriedPassword).toBe(true)
    expect(new URL(attempt.response.url()).pathname).toBe('/pw')
    expect(attempt.response.status()).toBe(200)
    expect(await page.locator('text=Your password is incorrect.').count()).toBe(1)
    // the next attempt cannot begin here: the browser is on the password page, not step 1's
    expect(await onFirstLoginPage(page, identifierFirst(10_000))).toBe(false)
    expect((await attempt.end()).closed).toBe(false)
    await page.close()
  }, 60_000)

  test('a code step after a refused password is not waited for: the refusal ends the attempt', async () => {
    const page = await context.newPage()
    await page.goto(`${base}/spa`)
    const login: LoginConfig = {
      steps: [
        { fill: 'input[name=name]', value: '{username}' },
        { fill: 'input[name=pw]', value: '{password}' },
        { click: '#go' },
        { waitFor: '#otp' },
        { fill: '#otp', value: '314159' },
        { click: '#verify' },
      ],
      stepTimeoutMs: 30_000,
    }
    const started = performance.now()
    const attempt = await failedSignIn(page, wrong, login, 40_000)
    expect(attempt.carriedPassword).toBe(true)
    expect(attempt.response.status()).toBe(401)
    expect(attempt.response.request().isNavigationRequest()).toBe(false)
    // the code step still waits for its page: ending the attempt stops it
    expect((await attempt.end()).closed).toBe(true)
    expect(page.isClosed()).toBe(true)
    expect(performance.now() - started).toBeLessThan(20_000)
  }, 60_000)

  test('a user name refused at its own step ends the attempt with that answer, the password never sent', async () => {
    const page = await context.newPage()
    await page.goto(`${base}/id`)
    const attempt = await failedSignIn(
      page,
      { username: 'nobody@example.com', password: 'Wr0ng-Pass' },
      identifierFirst(1500),
      20_000,
    )
    expect(attempt.carriedPassword).toBe(false)
    expect(new URL(attempt.response.url()).pathname).toBe('/id')
    expect(await onFirstLoginPage(page, identifierFirst(1500))).toBe(true)
    await attempt.end()
    await page.close()
  }, 60_000)

  test("a user name the browser's own validation will not send: the attempt could not be driven", async () => {
    const page = await context.newPage()
    await page.goto(`${base}/id`)
    await expect(
      failedSignIn(
        page,
        { username: '"><svg onload=1>', password: 'x' },
        identifierFirst(1500),
        20_000,
      ),
    ).rejects.toThrow(/could not be sent: login step 3: wait for input\[name=pw\] failed/)
    await page.close()
  }, 60_000)

  test.each(['/framed', '/deep'])(
    'the usual form in a frame (%s): the answer to its post, the refusal shown in the frame, the form there for the next (issue 29)',
    async (path) => {
      const page = await context.newPage()
      // a form looked for on the top page only would wait this long for its fields
      page.setDefaultTimeout(3000)
      await page.goto(`${base}${path}`)
      const attempt = await failedSignIn(page, wrong, undefined, 10_000)
      expect(attempt.carriedPassword).toBe(true)
      expect(new URL(attempt.response.url()).pathname).toBe('/widget-login')
      expect(attempt.response.request().isNavigationRequest()).toBe(true)
      // the frame's answer had loaded when the attempt resolved: the refusal, as a user sees it
      const widget = page.frames().find((f) => new URL(f.url()).pathname === '/widget-login')
      expect(await widget?.locator('text=Wrong user name or password.').count()).toBe(1)
      expect(await onFirstLoginPage(page, undefined)).toBe(true)
      expect((await attempt.end()).closed).toBe(false)
      await page.close()
    },
    60_000,
  )

  test('configured steps naming the frame: the refusal in the frame, and their first step there for the next', async () => {
    const page = await context.newPage()
    page.setDefaultTimeout(3000)
    await page.goto(`${base}/framed`)
    const login: LoginConfig = {
      steps: [
        { fill: 'input[name=username]', value: '{username}', frame: 'iframe' },
        { fill: 'input[type=password]', value: '{password}', frame: 'iframe' },
        { click: 'button[type=submit]', frame: 'iframe' },
      ],
      stepTimeoutMs: 3000,
    }
    const attempt = await failedSignIn(page, wrong, login, 10_000)
    expect(attempt.carriedPassword).toBe(true)
    expect(new URL(attempt.response.url()).pathname).toBe('/widget-login')
    // the first step's field is looked for in the frame the step names, as the step does
    expect(await onFirstLoginPage(page, login)).toBe(true)
    await attempt.end()
    await page.close()
  }, 60_000)

  test("the usual form in a frame of another origin: typed into only when it is one of the IdP's", async () => {
    const page = await context.newPage()
    page.setDefaultTimeout(3000)
    // the widget framed from localhost while the page is at 127.0.0.1
    const other = base.replace('127.0.0.1', 'localhost')
    await page.goto(`${base}/framed`)
    await page.setContent(
      `<!doctype html><title>Sign in</title><iframe src="${other}/widget"></iframe>`,
    )
    await page.frames()[1]?.waitForLoadState('load')
    await expect(failedSignIn(page, wrong, undefined, 5000)).rejects.toThrow(/could not be sent/)
    expect(await onFirstLoginPage(page, undefined)).toBe(false)
    await page.setContent(
      `<!doctype html><title>Sign in</title><iframe src="${other}/widget"></iframe>`,
    )
    await page.frames()[1]?.waitForLoadState('load')
    const idp = new Set([new URL(other).origin])
    expect(await onFirstLoginPage(page, undefined, idp)).toBe(true)
    const attempt = await failedSignIn(page, wrong, undefined, 10_000, idp)
    expect(attempt.carriedPassword).toBe(true)
    expect(attempt.response.url()).toBe(`${other}/widget-login`)
    await attempt.end()
    await page.close()
  }, 60_000)

  test('the usual one-page form: the answer to its post, and the form shown again for the next', async () => {
    const page = await context.newPage()
    await page.goto(`${base}/login`)
    const attempt = await failedSignIn(page, wrong, undefined, 20_000)
    expect(attempt.carriedPassword).toBe(true)
    expect(attempt.response.request().method()).toBe('POST')
    expect(await page.locator('text=Wrong user name or password.').count()).toBe(1)
    expect(await onFirstLoginPage(page, undefined)).toBe(true)
    expect((await attempt.end()).closed).toBe(false)
    await page.close()
  }, 60_000)
})
