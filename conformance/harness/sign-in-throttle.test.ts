import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext } from '@playwright/test'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { browse, launchBrowser } from './browser.ts'
import { CheckFailure } from './expect.ts'
import { codeOf, type AuthorizeResult } from './flows.ts'
import { createHttp } from './http.ts'
import { retryAfterMs, SignInThrottle, throttleIn } from './throttle.ts'
import type { Target } from './target.ts'

// Issue 29 (blind round 6d, S2): a provider's login throttle (10 failed sign-ins a minute per
// address, then 429 Retry-After) that the suite's own failed sign-ins tripped. A later check's
// sign-in by a page script's fetch() met the 429, the page stayed on its login form, and the
// suite read "the IdP showed its login page again": FAIL at MUST for the authorization checks.
// A throttled sign-in judges nothing; the run waits out what the IdP named and retries once.

const CALLBACK = 'https://client.example/callback'

/** A login page a script renders, which signs in with a JSON fetch() (no form post). */
const SPA = `<!doctype html><html><head><title>Sign in</title></head><body><div id="app"></div><script>
  document.getElementById('app').innerHTML = '<label>User <input name="username"></label><label>Password <input type="password" name="password"></label><button id="go">Sign in</button><p id="msg"></p>'
  document.getElementById('go').onclick = async () => {
    const res = await fetch('/api/login', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: document.querySelector('[name=username]').value, password: document.querySelector('[name=password]').value }) })
    const body = await res.json()
    if (res.ok) location.href = body.next
    else document.getElementById('msg').textContent = body.error_description
  }
</script></body></html>`

/** How the provider answers sign-ins: throttled (`retryAfter`) while `throttledUntil` lasts. */
const provider = { throttledUntil: 0, retryAfter: '2', posts: 0 }

function serve(req: IncomingMessage, res: ServerResponse): void {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (req.method === 'GET' && path === '/authorize') {
      res.writeHead(302, { location: '/signin' })
      return res.end()
    }
    if (req.method === 'GET' && path === '/signin') {
      res.writeHead(200, { 'content-type': 'text/html' })
      return res.end(SPA)
    }
    if (req.method === 'POST' && path === '/api/login') {
      provider.posts++
      if (Date.now() < provider.throttledUntil) {
        res.writeHead(429, {
          'content-type': 'application/json',
          'retry-after': provider.retryAfter,
        })
        return res.end(
          JSON.stringify({
            error: 'too_many_requests',
            error_description: 'too many failed sign-ins from this address; try again in a minute',
          }),
        )
      }
      const { username, password } = JSON.parse(body) as Record<string, string>
      const ok = username === 'alice' && password === 'secret'
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
      return res.end(
        JSON.stringify(
          ok
            ? { next: `${CALLBACK}?code=the-code&state=s` }
            : { error: 'invalid_credentials', error_description: 'wrong user name or password' },
        ),
      )
    }
    res.writeHead(404)
    res.end()
    return undefined
  })
}

const target: Pick<Target, 'clients' | 'login' | 'interactions'> = {
  clients: { main: { id: 'c', redirectUri: CALLBACK } } as unknown as Target['clients'],
  login: undefined,
  interactions: undefined,
}
const alice = { username: 'alice', password: 'secret' }

describe('retryAfterMs', () => {
  test('reads delay-seconds and an HTTP-date (RFC 9110 §10.2.3), nothing else', () => {
    const now = Date.parse('2026-11-28T12:00:00Z')
    expect(retryAfterMs('60', now)).toBe(60_000)
    expect(retryAfterMs('Sat, 28 Nov 2026 12:00:30 GMT', now)).toBe(30_000)
    expect(retryAfterMs('soon', now)).toBeUndefined()
    expect(retryAfterMs(undefined, now)).toBeUndefined()
  })
})

describe('a sign-in by a page script that the IdP throttles (429)', () => {
  let server: Server
  let browser: Browser
  let base = ''
  const contexts: BrowserContext[] = []
  const newContext = async (throttle: SignInThrottle): Promise<BrowserContext> => {
    const context = await browser.newContext()
    contexts.push(context)
    throttleIn(context, throttle)
    return context
  }
  beforeAll(async () => {
    server = createServer(serve)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    browser = await launchBrowser({ baseUrl: 'https://127.0.0.1', ca: undefined })
  }, 60_000)
  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close().catch(() => undefined)
  })
  afterAll(async () => {
    await browser.close()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  test('past the check’s time it is inconclusive, saying why, never a failure', async () => {
    provider.throttledUntil = Date.now() + 60_000
    provider.retryAfter = '60'
    provider.posts = 0
    const throttle = new SignInThrottle()
    throttle.failedSignIn()
    const context = await newContext(throttle)
    const outcome = await browse(
      context,
      target,
      `${base}/authorize`,
      createHttp({ baseUrl: base, ca: undefined }),
      {
        user: alice,
        timeLeftMs: () => 20_000,
      },
    )
    expect(outcome.callback).toBeUndefined()
    expect(provider.posts).toBe(1)
    // the run learned it: later sign-ins wait for the minute the IdP named
    expect(throttle.remainingMs()).toBeGreaterThan(50_000)
    const result = {
      via: 'browser',
      callback: undefined,
      outcome,
      redirectUri: CALLBACK,
      url: `${base}/authorize`,
    } as unknown as AuthorizeResult
    let thrown: unknown
    try {
      codeOf(result)
    } catch (err) {
      thrown = err
    }
    // an Error, not a CheckFailure: the check is inconclusive (ERROR), not failed
    expect(thrown).toBeInstanceOf(Error)
    expect(thrown).not.toBeInstanceOf(CheckFailure)
    const message = (thrown as Error).message
    expect(message).toMatch(
      /credential request .*\/api\/login.* answered HTTP 429 \(Retry-After: 60\)/,
    )
    expect(message).toMatch(/after the suite's own 1 failed sign-in of this run/)
    expect(message).toMatch(/a throttled sign-in judges nothing$/)
    expect(message).not.toMatch(/login page again/)

    // a later sign-in of the run whose time does not cover the wait does not send credentials
    const later = await browse(
      await newContext(throttle),
      target,
      `${base}/authorize`,
      createHttp({ baseUrl: base, ca: undefined }),
      {
        user: alice,
        timeLeftMs: () => 20_000,
      },
    )
    expect(later.callback).toBeUndefined()
    expect(later.throttled?.message).toMatch(/remaining time does not cover the wait/)
    expect(provider.posts).toBe(1)
  }, 60_000)

  test('after a 429 with Retry-After: 2 it waits, signs in again once, and reaches the client', async () => {
    provider.throttledUntil = Date.now() + 1500
    provider.retryAfter = '2'
    provider.posts = 0
    const throttle = new SignInThrottle()
    const outcome = await browse(
      await newContext(throttle),
      target,
      `${base}/authorize`,
      createHttp({ baseUrl: base, ca: undefined }),
      {
        user: alice,
        timeLeftMs: () => 30_000,
      },
    )
    expect(outcome.callback).toBe(`${CALLBACK}?code=the-code&state=s`)
    expect(outcome.throttled).toBeUndefined()
    expect(provider.posts).toBe(2)
    expect(outcome.throttleWaits?.join('\n')).toMatch(
      /answered HTTP 429 \(Retry-After: 2\): waited 2 s \(the IdP throttled sign-ins .*\) and signed in again/,
    )
  }, 60_000)

  test('a later sign-in of the run waits out the throttle before it sends the credentials', async () => {
    provider.throttledUntil = Date.now() + 1500
    provider.retryAfter = '2'
    provider.posts = 0
    const throttle = new SignInThrottle()
    throttle.note(429, '2')
    const outcome = await browse(
      await newContext(throttle),
      target,
      `${base}/authorize`,
      createHttp({ baseUrl: base, ca: undefined }),
      {
        user: alice,
        timeLeftMs: () => 30_000,
      },
    )
    expect(outcome.callback).toBe(`${CALLBACK}?code=the-code&state=s`)
    // no credentials sent into the throttle
    expect(provider.posts).toBe(1)
    expect(outcome.throttleWaits?.join('\n')).toMatch(/waited \d s for the run's sign-in throttle/)
  }, 60_000)
})
