import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { browse, clientOrigins, launchBrowser } from './browser.ts'
import { classify } from './check.ts'
import { expectPageAnswer } from './fuzz/pages.ts'
import { createHttp } from './http.ts'
import { forgetSignInOrigins, idpOrigins, learnSignInOrigins } from './idp-origins.ts'
import { expectLoginPage, followAtIdp } from './pages.ts'
import type { Target } from './target.ts'

// Issue 29, blind round 4, S1: a provider whose authorization endpoint hands the browser to a
// login app on another origin (authorize → 303 /interaction/<uid> → 302 <login app>/u/<uid>).
// Two throwaway local servers: the IdP and its login app, on origins of their own.

const CALLBACK = 'https://client.example/callback'
const UNKNOWN = 'http://127.0.0.1:1/elsewhere'

let idp: Server
let app: Server
let idpBase: string
let appBase: string

const listen = async (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

beforeAll(async () => {
  ;({ server: app, base: appBase } = await listen((req, res) => {
    if (req.method === 'POST' && req.url === '/u/abc')
      res.writeHead(303, { location: `${idpBase}/interaction/abc/complete` }).end()
    else if (req.url?.startsWith('/u/')) {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(
        '<!doctype html><title>Sign in</title><form method="post"><input name="username"><input type="password" name="password"><button>Sign in</button></form>',
      )
    } else res.writeHead(404).end()
  }))
  ;({ server: idp, base: idpBase } = await listen((req, res) => {
    const to = (location: string, status = 302) => res.writeHead(status, { location }).end()
    if (req.url === '/authorize') to('/interaction/abc', 303)
    else if (req.url === '/interaction/abc') to(`${appBase}/u/abc`)
    else if (req.url === '/interaction/abc/complete') to(`${CALLBACK}?code=the-code&state=s`)
    else if (req.url === '/to-client') to(`${CALLBACK}?error=invalid_request`)
    else if (req.url === '/to-unknown') to(UNKNOWN)
    // an error redirect to the URI the request named (an open redirect)
    else if (req.url?.startsWith('/bounce?'))
      to(new URL(req.url, idpBase).searchParams.get('redirect_uri') ?? '/')
    else res.writeHead(404).end()
  }))
}, 30_000)

afterAll(async () => {
  await Promise.all([
    new Promise((resolve) => idp.close(resolve)),
    new Promise((resolve) => app.close(resolve)),
  ])
})

const ctx = (extra: Partial<Target> = {}) => {
  const target = {
    baseUrl: idpBase,
    clients: { main: { id: 'c', secret: 's', redirectUri: CALLBACK } },
    ...extra,
  } as unknown as Target
  return { target, http: createHttp(target) }
}

const get = (c: ReturnType<typeof ctx>, path: string) =>
  c.http.request(`${idpBase}${path}`, { headers: { accept: 'text/html' } })

/** What `followAtIdp` threw, classified as the check runner does. */
const thrownBy = async (following: Promise<unknown>) => {
  const err = await following.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (err === undefined) throw new Error('nothing was thrown')
  return { kind: classify(err).kind, message: (err as Error).message }
}

describe("the IdP's origins (followAtIdp)", () => {
  test('a login app on an origin nobody named, before any sign-in taught it (--no-preflight) and without idpOrigins, is not judged: inconclusive, saying to declare it', async () => {
    const c = ctx()
    expect(await thrownBy(followAtIdp(c, await get(c, '/authorize'), 'login'))).toEqual({
      kind: 'harness',
      message: expect.stringMatching(
        /^login: redirected to http:\/\/127\.0\.0\.1:\d+\/u\/abc, an origin neither known as the IdP's nor named by the request: .*declared with idpOrigins in the target configuration/,
      ) as string,
    })
    // with idpOrigins declared, the message says to add the origin there
    const declared = ctx({ idpOrigins: ['https://other.example'] })
    expect(
      (await thrownBy(followAtIdp(declared, await get(declared, '/to-unknown'), 'login'))).message,
    ).toMatch(/elsewhere, an origin neither known .* is added to idpOrigins/)
  })

  test('a redirect off the IdP to the origin the request named fails (an open redirect)', async () => {
    const c = ctx()
    const path = `/bounce?redirect_uri=${encodeURIComponent(UNKNOWN)}&state=s`
    expect(await thrownBy(followAtIdp(c, await get(c, path), 'bad request'))).toEqual({
      kind: 'failure',
      message: expect.stringMatching(
        /^bad request: redirected off the IdP to http:\/\/127\.0\.0\.1:1\/elsewhere/,
      ) as string,
    })
  })

  test('a login app named in idpOrigins is at the IdP, and its form is the login page', async () => {
    const c = ctx({ idpOrigins: [appBase] })
    const page = await followAtIdp(c, await get(c, '/authorize'), 'login')
    expect(page.url).toBe(`${appBase}/u/abc`)
    expect(page.status).toBe(200)
    const login = await expectLoginPage(
      { ...c, newBrowserContext: () => Promise.reject(new Error('no browser needed')) },
      await get(c, '/authorize'),
      'login',
    )
    expect(login.url).toBe(`${appBase}/u/abc`)
  })

  test("an origin of the discovery document's endpoints is at the IdP", async () => {
    const c = ctx()
    const urls = { authorization_endpoint: `${appBase}/authorize` }
    const withEndpoints = {
      ...c,
      target: { ...c.target, endpoints: { urls, fallbacks: {} } } as unknown as Target,
    }
    const page = await followAtIdp(withEndpoints, await get(c, '/authorize'), 'login')
    expect(page.url).toBe(`${appBase}/u/abc`)
  })

  test("an origin the suite's own sign-in went through to a code is at the IdP; one that ended without a code is not learned", async () => {
    const c = ctx()
    try {
      learnSignInOrigins(c.target, [idpBase, appBase], `${CALLBACK}?error=access_denied`, [])
      expect(idpOrigins(c.target).has(appBase)).toBe(false)
      learnSignInOrigins(c.target, [idpBase, appBase], undefined, [])
      expect(idpOrigins(c.target).has(appBase)).toBe(false)
      // a client's origin is never the IdP's, whatever the browser passed through
      learnSignInOrigins(c.target, [appBase], `${CALLBACK}?code=x`, [appBase])
      expect(idpOrigins(c.target).has(appBase)).toBe(false)
      learnSignInOrigins(c.target, [idpBase, appBase], `${CALLBACK}?code=x&state=s`, [
        'https://client.example',
      ])
      expect(idpOrigins(c.target).has(appBase)).toBe(true)
      const page = await followAtIdp(c, await get(c, '/authorize'), 'login')
      expect(page.url).toBe(`${appBase}/u/abc`)
      // any other origin is still not the IdP's: not judged
      expect(await thrownBy(followAtIdp(c, await get(c, '/to-unknown'), 'login'))).toMatchObject({
        kind: 'harness',
      })
    } finally {
      forgetSignInOrigins(c.target)
    }
  })

  test("a client URI is refused even on an origin named as the IdP's", async () => {
    const c = ctx({ idpOrigins: ['https://client.example', appBase] })
    await expect(followAtIdp(c, await get(c, '/to-client'), 'bad request')).rejects.toThrow(
      /redirected to the client URI https:\/\/client\.example\/callback/,
    )
  })
})

describe("ROBUST-03's page answers (expectPageAnswer) with the IdP's origins", () => {
  test('a redirect to the login app is followed at the IdP; one to an unknown origin fails', async () => {
    const c = ctx({ idpOrigins: [appBase] })
    const origins = idpOrigins(c.target)
    expect(
      await expectPageAnswer(c.http, await get(c, '/authorize'), origins, undefined, true),
    ).toBe(undefined)
    await expect(
      expectPageAnswer(c.http, await get(c, '/authorize'), idpBase, undefined, true),
    ).rejects.toThrow(/redirected the browser to http:\/\/127\.0\.0\.1:\d+\/u\/abc/)
    await expect(
      expectPageAnswer(c.http, await get(c, '/to-unknown'), origins, undefined, true),
    ).rejects.toThrow(/redirected the browser to http:\/\/127\.0\.0\.1:1\/elsewhere/)
  })
})

describe('the origins a browser sign-in went through (browse)', () => {
  test('the login app the IdP sent the browser to is learned once the sign-in reaches the client with a code', async () => {
    const c = ctx({ users: { primary: { username: 'jdoe', password: 'pw' } } })
    const browser = await launchBrowser({ baseUrl: 'https://127.0.0.1', ca: undefined })
    try {
      const context = await browser.newContext()
      const outcome = await browse(context, c.target, `${idpBase}/authorize`, c.http, {
        user: { username: 'jdoe', password: 'pw' },
      })
      await context.close()
      expect(outcome.callback).toBe(`${CALLBACK}?code=the-code&state=s`)
      // the client's origin is left out
      expect(outcome.origins).toEqual([idpBase, appBase])
      learnSignInOrigins(c.target, outcome.origins ?? [], outcome.callback, clientOrigins(c.target))
      expect([...idpOrigins(c.target)].sort()).toEqual([appBase, idpBase].sort())
    } finally {
      forgetSignInOrigins(c.target)
      await browser.close()
    }
  }, 60_000)
})
