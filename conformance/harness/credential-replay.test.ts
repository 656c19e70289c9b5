import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext } from '@playwright/test'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { launchBrowser } from './browser.ts'
import type { CheckContext } from './check.ts'
import {
  expectSignsIn,
  type Follow,
  followToClient,
  type SignInRequest,
} from './credential-replay.ts'
import { ControlFailure } from './expect.ts'
import { cookiesToJudge, type IdpCookies } from './idp-cookies.ts'
import type { AuthorizeResult } from './flows.ts'
import { createHttp, type Http, type HttpResponse, type RequestOptions } from './http.ts'
import type { Target, TargetUser } from './target.ts'

// The replayed sign-in (LOGIN-03/05/07's positive control) on providers that show a page after
// the credential request which the HTTP follow leaves to the browser (issue 29, blind round 2,
// E: "Stay signed in?"): the follow hands it to the browser's interaction loop and reaches
// the client, or names the page it could not get past (inconclusive, never a failure).

const CALLBACK = 'https://client.example/callback'
const user: TargetUser = { username: 'alice', password: 'wonderland' }

const html = (title: string, body: string): string =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`

/** A yes/no page: two submits, so the HTTP follow (one approving submit only) leaves it. */
const STAY = html(
  'Stay signed in?',
  `<h1>Stay signed in?</h1><form method="post" action="/stay"><button name="stay" value="yes">Yes</button> <button name="stay" value="no">No</button></form>`,
)

/** After the sign-in, where each provider shape sends the browser. */
const AFTER: Record<string, string> = {
  '/login-stay': '/stay',
  '/login-consent': '/consent',
  '/login-puzzle': '/puzzle',
}

function serve(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? '/', 'http://x').pathname
  const signedIn = /(^|;\s*)sid=alice(;|$)/.test(req.headers.cookie ?? '')
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    const form = new URLSearchParams(body)
    if (req.method === 'POST' && (path in AFTER || path === '/login-direct')) {
      if (form.get('u') !== user.username || form.get('p') !== user.password) {
        res.writeHead(401, { 'content-type': 'text/html' }).end(html('Sign in', 'wrong'))
        return
      }
      const cookie = 'sid=alice; Path=/; HttpOnly; SameSite=Lax'
      // the yes/no page as the credential post's own answer: no address a GET would show it at
      if (path === '/login-direct')
        res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': cookie }).end(STAY)
      else res.writeHead(303, { location: AFTER[path], 'set-cookie': cookie }).end()
      return
    }
    if (!signedIn) {
      res.writeHead(400, { 'content-type': 'text/html' }).end(html('Error', 'no session'))
      return
    }
    if (path === '/stay' && req.method === 'GET')
      res.writeHead(200, { 'content-type': 'text/html' }).end(STAY)
    else if (path === '/stay' && form.get('stay') === 'yes')
      res.writeHead(303, { location: `${CALLBACK}?code=stayed` }).end()
    else if (path === '/consent')
      // a consent page rendered by script: no form in the served HTML
      res.writeHead(200, { 'content-type': 'text/html' }).end(
        html(
          'Authorize',
          `<div id="app"></div><script>setTimeout(() => {
  document.getElementById('app').innerHTML = '<p>Example App wants to access your account</p><button id="deny">Deny</button> <button id="allow">Allow</button>'
  document.cookie = 'ui_pref=compact; path=/'
  document.getElementById('allow').addEventListener('click', () => (location.href = '/consented'))
}, 200)</script>`,
        ),
      )
    else if (path === '/consented')
      // the session cookie set only now, past the page the browser answered (blind round 6c)
      res
        .writeHead(303, {
          location: `${CALLBACK}?code=consented`,
          'set-cookie': 'idp_session=s1; Path=/; HttpOnly',
        })
        .end()
    else if (path === '/puzzle')
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          html(
            'Pick a colour',
            '<form><select><option>red</option></select><button>Go</button></form>',
          ),
        )
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
  })
}

describe('the replayed sign-in goes on in the browser past pages the HTTP follow leaves to it', () => {
  let server: Server
  let base: string
  let browser: Browser
  const contexts: BrowserContext[] = []
  let target: Target

  beforeAll(async () => {
    server = createServer(serve)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    target = {
      baseUrl: base,
      clients: { main: { id: 'c', secret: 's', redirectUri: CALLBACK } },
      users: { primary: user },
    } as unknown as Target
    browser = await launchBrowser({ baseUrl: 'https://127.0.0.1', ca: undefined })
  }, 60_000)
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close().catch(() => undefined)))
    await browser.close()
    await new Promise((resolve) => server.close(resolve))
  })

  const newContext = async (): Promise<BrowserContext> => {
    const context = await browser.newContext()
    contexts.push(context)
    return context
  }
  /** A check's context with what the replay uses, and the notes it leaves. */
  const checkContext = (notes: string[]): CheckContext =>
    ({
      target,
      http: createHttp(target),
      note: (m: string) => notes.push(m),
      newBrowserContext: newContext,
    }) as unknown as CheckContext
  /** The credential request as captured from a login page that posts the form to `path`. */
  const captured = async (path: string): Promise<SignInRequest> => ({
    via: 'form',
    action: `${base}${path}`,
    method: 'POST',
    encoding: 'form',
    fields: {},
    usernameField: 'u',
    passwordField: 'p',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    cookie: '',
    declaredSameSite: new Set(),
    context: await newContext(),
    auth: {} as AuthorizeResult,
  })

  for (const [path, shape, code] of [
    ['/login-stay', 'a "Stay signed in?" yes/no page after the redirect', 'stayed'],
    ['/login-direct', 'a "Stay signed in?" yes/no page as the post\'s own answer', 'stayed'],
    ['/login-consent', 'a consent page rendered by script', 'consented'],
  ] as const)
    test(`${shape}: answered in the browser, the control reaches the client`, async () => {
      const notes: string[] = []
      await expectSignsIn(checkContext(notes), await captured(path), user, CALLBACK, 'control')
      expect(notes.join('\n')).toMatch(
        /which the HTTP follow leaves to the browser: went on there, answering (continue|consent) \(built-in: "(Yes|Allow)"\)/,
      )
      // and the client URL is the one the IdP sent, with its code
      const ctx = checkContext([])
      const form = await captured(path)
      const res = await ctx.http.request(form.action, {
        method: 'POST',
        body: `u=${user.username}&p=${user.password}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      const reached = await followToClient(ctx, form, res, CALLBACK, [], { browserAs: user })
      expect(reached?.searchParams.get('code')).toBe(code)
    }, 90_000)

  test('the cookies the IdP sets where the browser goes on are collected: its Set-Cookie lines, and a script cookie as the browser holds it (LOGIN-05, blind round 6c)', async () => {
    const ctx = checkContext([])
    const form = await captured('/login-consent')
    const res = await ctx.http.request(form.action, {
      method: 'POST',
      body: `u=${user.username}&p=${user.password}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    const browserCookies: IdpCookies = { lines: [], held: [] }
    const reached = await followToClient(ctx, form, res, CALLBACK, [], {
      browserAs: user,
      browserCookies,
    })
    expect(reached?.searchParams.get('code')).toBe('consented')
    expect(browserCookies.lines).toEqual(['idp_session=s1; Path=/; HttpOnly'])
    expect(browserCookies.held.map((c) => c.name).sort()).toEqual(['idp_session', 'sid', 'ui_pref'])
    // judged: the line where there is one (no SameSite, which the browser shows as Lax), the
    // browser's view for the script's cookie
    const judged = cookiesToJudge(
      [...res.headers.getSetCookie(), ...browserCookies.lines],
      browserCookies.held,
    )
    expect(judged.fromBrowser).toEqual(['ui_pref'])
    expect(judged.lines).toContain('ui_pref=[held]; Path=/; SameSite=Lax')
    expect(judged.lines).toContain('idp_session=s1; Path=/; HttpOnly')
    expect(judged.lines.filter((l) => l.startsWith('idp_session='))).toHaveLength(1)
    expect(judged.lines.filter((l) => l.startsWith('sid='))).toEqual([
      'sid=alice; Path=/; HttpOnly; SameSite=Lax',
    ])
  }, 60_000)

  test('without the hand-over (a forged or failed sign-in), the HTTP follow stops there, naming it', async () => {
    const ctx = checkContext([])
    const form = await captured('/login-stay')
    const res = await ctx.http.request(form.action, {
      method: 'POST',
      body: `u=${user.username}&p=${user.password}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    const follow: Follow = {}
    expect(await followToClient(ctx, form, res, CALLBACK, [], follow)).toBeUndefined()
    // where it stopped, and that the stop is no refusal (a page, not a 4xx or an error page)
    expect({
      stoppedAt: follow.stoppedAt,
      refused: follow.refused,
      unbuilt: follow.unbuilt,
    }).toEqual({
      stoppedAt: `HTTP 200 at ${base}/stay`,
      refused: false,
      unbuilt: undefined,
    })
  }, 60_000)

  test('a page the browser cannot answer either: inconclusive, naming the page', async () => {
    const failure = await expectSignsIn(
      checkContext([]),
      await captured('/login-puzzle'),
      user,
      CALLBACK,
      'control',
    ).then(
      () => undefined,
      (err: unknown) => err,
    )
    expect(failure).toBeInstanceOf(ControlFailure)
    expect((failure as Error).message).toMatch(
      new RegExp(
        `never reached ${CALLBACK} \\(first answer HTTP 303; stopped at the suite could not get past "Pick a colour" at ${base}/puzzle`,
      ),
    )
  }, 60_000)
})

// The replayed sign-in follows the IdP's own origins (idp-origins.ts), not only the base URL's:
// a provider whose consent page lives on its login app's origin is answered over HTTP there,
// with that page's Origin, instead of being handed to the browser (slower, more browser rounds).
describe("followToClient through the IdP's other origins", () => {
  const IDP = 'https://idp.test'
  const APP = 'https://login.idp.test'
  const fake = (): Http => ({
    exchanges: [],
    record: () => undefined,
    request(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
      const post = options.method === 'POST'
      const answer =
        url === `${APP}/consent` && !post
          ? {
              status: 200,
              text: html('Authorize', '<form method="post"><button>Allow</button></form>'),
            }
          : url === `${APP}/consent` && options.headers?.origin === APP
            ? { status: 303, location: `${CALLBACK}?code=consented` }
            : { status: 400, text: 'no' }
      return Promise.resolve({
        status: answer.status,
        headers: new Headers(answer.location ? { location: answer.location } : {}),
        text: answer.text ?? '',
        json: undefined,
        url,
      })
    },
    get: () => Promise.reject(new Error('unused')),
    postForm: () => Promise.reject(new Error('unused')),
  })
  const signedIn: HttpResponse = {
    status: 303,
    headers: new Headers({ location: `${APP}/consent` }),
    text: '',
    json: undefined,
    url: `${IDP}/login`,
  }
  const form = {
    action: `${IDP}/login`,
    context: { cookies: () => Promise.resolve([]) },
  } as unknown as SignInRequest
  const on = (extra: Partial<Target>) =>
    ({
      target: {
        baseUrl: IDP,
        clients: { main: { id: 'c', secret: 's', redirectUri: CALLBACK } },
        ...extra,
      },
      http: fake(),
    }) as unknown as CheckContext

  test('a login app named in idpOrigins: its consent page is answered over HTTP', async () => {
    const reached = await followToClient(on({ idpOrigins: [APP] }), form, signedIn, CALLBACK)
    expect(reached?.searchParams.get('code')).toBe('consented')
  })

  test("an origin the suite does not know as the IdP's is not followed", async () => {
    const follow: Follow = {}
    expect(await followToClient(on({}), form, signedIn, CALLBACK, [], follow)).toBeUndefined()
    expect({ stoppedAt: follow.stoppedAt, refused: follow.refused }).toEqual({
      stoppedAt: `HTTP 303 at ${IDP}/login`,
      refused: false,
    })
  })
})
