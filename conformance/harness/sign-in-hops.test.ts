import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { createRunResources, runCheck, type RunResources } from './check.ts'
import type { Target, TargetUser } from './target.ts'
import type { CheckResult } from './types.ts'
import {
  bodyMembers,
  buildHop,
  hopBody,
  planHops,
  type RecordedHop,
  type Recording,
} from './sign-in-hops.ts'
import type * as Flows from './flows.ts'
import '../checks/index.ts'

// LOGIN-03 on an identifier-first sign-in (issue 29): the user name is posted first, then the
// password on a page of its own. The replay records the browser's whole sign-in twice, replays
// the first request, builds the password's request from the replay's own answers (the flow id
// and the anti-CSRF token of the password page), tampers with that one only, and follows the
// sign-in to where it ends. A provider whose password step refuses the forgeries passes; one
// that checks nothing fails, naming the request; a value the replay cannot place (a script's
// own nonce) leaves the check inconclusive. LOGIN-07 signs each of its failed tries in afresh,
// the try's user name on the first request, and compares what the IdP told at the user name's
// request and at the password's: a provider that tells an unknown user apart at either warns.

// The suite opens the authorization request over HTTPS only (openid-client); these pages are
// plain HTTP on 127.0.0.1, so the authorization request is this server's /authorize, opened by
// the browser driver itself (what flows.ts authorize does after building the request's URL).
vi.mock('./flows.ts', async (importOriginal) => {
  const real = await importOriginal<typeof Flows>()
  const { browse } = await import('./browser.ts')
  const authorize: typeof real.authorize = async (ctx, options) => {
    const context = options?.context ?? (await ctx.newBrowserContext())
    const user = options?.user === null ? undefined : (options?.user ?? ctx.target.users.primary)
    const outcome = await browse(context, ctx.target, `${ctx.target.baseUrl}/authorize`, ctx.http, {
      user,
    })
    return {
      redirectUri: real.redirectUriOf(ctx, real.mainClient(ctx)),
      callback: outcome.callback ? new URL(outcome.callback) : undefined,
      outcome,
      via: 'browser',
    } as Awaited<ReturnType<typeof real.authorize>>
  }
  return { ...real, authorize }
})

const CALLBACK = 'https://client.example/callback'
const user: TargetUser = { username: 'alice', password: 'wonderland' }

/**
 * The fake provider's shape: an identifier-first sign-in whose password step checks the
 * request's anti-CSRF token, cookie and origin (`checks`), checks nothing (`none`), or has a
 * member a script fills with a value of its own (`script-nonce`); or a one-page sign-in whose
 * answer is a "Continue" page that posts on, and refuses a sign-in whose credential request
 * failed those checks (`confirm-checks`) or does not (`confirm-none`). `checks` answers an
 * unknown user as it answers a wrong password at both steps; an identifier-first sign-in that
 * tells them apart does so at the password step (`tells-at-password`: "No account with that
 * user name." there) or at the user name's (`tells-at-identifier`: an unknown name is asked for
 * again, "We could not find an account", and gets no password page). A one-page sign-in may
 * answer its credential post with 303 to a push page whose script posts on by itself once the
 * push is approved, then resumes the authorization: the resume checks the sign-in is this
 * browser's and was not forged, else shows an error page (`push-bound`, as node-oidc-provider's
 * resume cookie does), or checks nothing (`push-none`); or the push page of a forged sign-in
 * never moves on (`push-waits`: no approval comes).
 */
type Mode =
  | 'checks'
  | 'none'
  | 'script-nonce'
  | 'confirm-checks'
  | 'confirm-none'
  | 'tells-at-password'
  | 'tells-at-identifier'
  | 'push-bound'
  | 'push-none'
  | 'push-waits'

const html = (title: string, body: string): string =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`

interface Flow {
  readonly csrf: string
  readonly csrf2: string
  username?: string
  /** Whether the credential request carried the flow's token and cookie from its own origin. */
  trusted?: boolean
  done?: boolean
}

function provider(mode: Mode) {
  const flows = new Map<string, Flow>()
  let origin = ''
  const token = () => randomBytes(12).toString('hex')
  const handle = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const url = new URL(req.url ?? '/', origin)
    const id = url.searchParams.get('flow') ?? ''
    const flow = flows.get(id)
    const page = (status: number, title: string, content: string): void => {
      res.writeHead(status, { 'content-type': 'text/html' }).end(html(title, content))
    }
    const form = new URLSearchParams(body)
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const fresh = token()
      flows.set(fresh, { csrf: token(), csrf2: token() })
      res
        .writeHead(302, {
          location: `/login?flow=${fresh}`,
          'set-cookie': `flow=${fresh}; Path=/; HttpOnly; SameSite=Lax`,
        })
        .end()
      return
    }
    if (!flow || flow.done) return page(400, 'Error', '<p>This sign-in has expired.</p>')
    const cookie = /(?:^|;\s*)flow=([^;]+)/.exec(req.headers.cookie ?? '')?.[1]
    const sameOrigin = req.headers.origin === undefined || req.headers.origin === origin
    if (mode.startsWith('push')) {
      if (req.method === 'GET' && url.pathname === '/login')
        return page(
          200,
          'Sign in',
          `<form method="post" action="/login?flow=${id}"><input type="hidden" name="csrf" value="${flow.csrf}"><input name="username"><input type="password" name="password"><button>Sign in</button></form>`,
        )
      if (req.method === 'POST' && url.pathname === '/login') {
        if (form.get('username') !== user.username || form.get('password') !== user.password)
          return page(401, 'Sign in', '<p>Wrong user name or password.</p>')
        // accepted whatever its origin: the resume decides
        flow.trusted = form.get('csrf') === flow.csrf && cookie === id && sameOrigin
        res.writeHead(303, { location: `/push?flow=${id}` }).end()
        return
      }
      if (req.method === 'GET' && url.pathname === '/push')
        return page(
          200,
          'Approve on your phone',
          `<p>Waiting for approval…</p><form id="done" method="post" action="/push/complete?flow=${id}"></form>${
            mode === 'push-waits' && !flow.trusted
              ? '<script>/* no approval ever comes */</script>'
              : "<script>setTimeout(() => document.getElementById('done').submit(), 300)</script>"
          }`,
        )
      if (req.method === 'POST' && url.pathname === '/push/complete') {
        res.writeHead(303, { location: `/resume?flow=${id}` }).end()
        return
      }
      if (req.method === 'GET' && url.pathname === '/resume') {
        if (mode !== 'push-none' && (!flow.trusted || cookie !== id))
          return page(400, 'Sorry', '<p>The authorization request has expired.</p>')
        flow.done = true
        res.writeHead(303, { location: `${CALLBACK}?code=${token()}` }).end()
        return
      }
      return page(404, 'Not found', '<p>not found</p>')
    }
    if (mode.startsWith('confirm')) {
      if (req.method === 'GET' && url.pathname === '/login')
        return page(
          200,
          'Sign in',
          `<form method="post" action="/login?flow=${id}"><input type="hidden" name="csrf" value="${flow.csrf}"><input name="username"><input type="password" name="password"><button>Sign in</button></form>`,
        )
      if (req.method === 'POST' && url.pathname === '/login') {
        if (form.get('username') !== user.username || form.get('password') !== user.password)
          return page(401, 'Sign in', '<p>Wrong user name or password.</p>')
        // accepted whatever its origin: the page after it decides
        flow.trusted = form.get('csrf') === flow.csrf && cookie === id && sameOrigin
        res.writeHead(303, { location: `/confirm?flow=${id}` }).end()
        return
      }
      if (req.method === 'GET' && url.pathname === '/confirm')
        return page(
          200,
          'Continue',
          `<form method="post" action="/confirm?flow=${id}"><input type="hidden" name="flow" value="${id}"><button>Continue</button></form>`,
        )
      if (req.method === 'POST' && url.pathname === '/confirm') {
        if (mode === 'confirm-checks' && !flow.trusted)
          return page(403, 'Forbidden', '<p>The sign-in could not be verified.</p>')
        flow.done = true
        res.writeHead(303, { location: `${CALLBACK}?code=${token()}` }).end()
        return
      }
      return page(404, 'Not found', '<p>not found</p>')
    }
    if (req.method === 'GET' && url.pathname === '/login')
      return page(
        200,
        'Sign in',
        `<form method="post" action="/login/identify?flow=${id}"><input type="hidden" name="csrf" value="${flow.csrf}"><label>User name <input name="username" id="username"></label><button id="next">Next</button></form>`,
      )
    if (req.method === 'POST' && url.pathname === '/login/identify') {
      const username = form.get('username') ?? ''
      if (mode === 'tells-at-identifier' && username !== user.username)
        return page(
          200,
          'Sign in',
          `<p>We could not find an account for ${username}.</p><form method="post" action="/login/identify?flow=${id}"><input type="hidden" name="csrf" value="${flow.csrf}"><label>User name <input name="username" id="username"></label><button id="next">Next</button></form>`,
        )
      flow.username = username
      res.writeHead(303, { location: `/login/password?flow=${id}` }).end()
      return
    }
    if (req.method === 'GET' && url.pathname === '/login/password')
      return page(
        200,
        'Password',
        `<form method="post" action="/login/password?flow=${id}"><input type="hidden" name="csrf2" value="${flow.csrf2}">${
          mode === 'script-nonce'
            ? `<input type="hidden" name="nonce" id="nonce"><script>document.getElementById('nonce').value = Math.random().toString(36).slice(2)</script>`
            : ''
        }<label>Password <input type="password" name="password" id="password"></label><button id="signin">Sign in</button></form>`,
      )
    if (req.method === 'POST' && url.pathname === '/login/password') {
      if (mode === 'checks' || mode.startsWith('tells')) {
        // the password step is the one that defends: its own token, the flow's cookie, and
        // the request's origin
        if (form.get('csrf2') !== flow.csrf2 || cookie !== id || !sameOrigin)
          return page(403, 'Forbidden', '<p>The request could not be verified.</p>')
      }
      if (mode === 'tells-at-password' && flow.username !== user.username)
        return page(401, 'Password', '<p>No account with that user name.</p>')
      if (mode === 'tells-at-password' && form.get('password') !== user.password)
        return page(401, 'Password', '<p>Wrong password.</p>')
      if (flow.username !== user.username || form.get('password') !== user.password)
        return page(401, 'Password', '<p>Wrong user name or password.</p>')
      flow.done = true
      res.writeHead(303, { location: `${CALLBACK}?code=${token()}` }).end()
      return
    }
    page(404, 'Not found', '<p>not found</p>')
  }
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => handle(req, res, body))
  })
  return {
    server,
    async start(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      return origin
    },
  }
}

describe('LOGIN-03 and LOGIN-07 on an identifier-first sign-in (user name, then password)', () => {
  const started: { close(): Promise<void> }[] = []
  const run = async (
    mode: Mode,
    id: 'LOGIN-03' | 'LOGIN-07' = 'LOGIN-03',
  ): Promise<CheckResult> => {
    const fake = provider(mode)
    const base = await fake.start()
    const target = {
      baseUrl: base,
      clients: { main: { id: 'c', secret: 's', redirectUri: CALLBACK } },
      users: { primary: user },
      login:
        mode.startsWith('confirm') || mode.startsWith('push')
          ? undefined
          : {
              detect: '#username',
              steps: [
                { fill: '#username', value: '{username}' },
                { click: '#next' },
                { waitFor: '#password' },
                { fill: '#password', value: '{password}' },
                { click: '#signin' },
              ],
            },
      embedded: false,
    } as unknown as Target
    const resources: RunResources = createRunResources(target, { reuseSessions: false })
    started.push({
      close: async () => {
        await resources.close()
        await new Promise((resolve) => fake.server.close(resolve))
      },
    })
    return runCheck(id, target, resources, 120_000)
  }
  afterAll(async () => {
    await Promise.all(started.map((s) => s.close()))
  })
  beforeAll(() => undefined)

  test('the password step refuses every forgery: passes, the sign-in replayed up to it', async () => {
    const result = await run('checks')
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /the sign-in takes 2 requests; the password goes with hop 2 of 2 \(POST \/login\/password\): replayed up to it \(hop 1 of 2 \(POST \/login\/identify\)\)/,
    )
  }, 150_000)

  test('neither step checks anything: fails, naming the request that was forged', async () => {
    const result = await run('none')
    expect(result.verdict, result.message).toBe('fail')
    expect(result.message).toMatch(
      /credentials without the anti-CSRF field: the sign-in went through to the client \(https:\/\/client\.example\/callback\): hop 2 of 2 \(POST \/login\/password\), forged, was answered HTTP 303/,
    )
  }, 150_000)

  test("a value the replay cannot place (a nonce the page's script makes up): inconclusive, naming it", async () => {
    const result = await run('script-nonce')
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /hop 2 of 2 \(POST \/login\/password\) cannot be built: member "nonce": it changed between two recorded sign-ins and no earlier answer of the IdP holds it/,
    )
  }, 150_000)

  test('a one-page sign-in whose "Continue" page refuses the forged sign-in: passes, judged where it ends', async () => {
    const result = await run('confirm-checks')
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /credentials without the anti-CSRF field: the form post to \/login, forged, was answered HTTP 303; the sign-in takes 2 requests, and a later one refused it: HTTP 403 at http:\/\/127\.0\.0\.1:\d+\/confirm/,
    )
  }, 150_000)

  test('a one-page sign-in whose "Continue" page checks nothing either: fails', async () => {
    const result = await run('confirm-none')
    expect(result.verdict, result.message).toBe('fail')
    expect(result.message).toMatch(
      /^credentials without the anti-CSRF field: the sign-in went through to the client \(https:\/\/client\.example\/callback\)$/,
    )
  }, 150_000)

  // blind round 6c: the forged post answered 303 to a push page, and the sign-in, bound to its
  // browser at the resume, gave no code; the forgery is judged where it ends, not at the 303
  test('a push page after the credential post, the resume bound to the browser: passes, judged where each forgery ends', async () => {
    const result = await run('push-bound')
    expect(result.verdict, result.message).toBe('pass')
    const notes = result.notes.join('\n')
    for (const what of [
      'credentials without the anti-CSRF field',
      "another session's anti-CSRF token",
      "a cross-site post from https://evil.example of another session's form",
      "another session's whole form posted with this browser's cookies",
    ])
      expect(notes).toContain(what)
    expect(notes).toMatch(
      /another session's whole form posted with this browser's cookies: the form post to \/login, forged, was answered HTTP 303, not refused outright; followed with the cookies it would carry, it ended without a code: the IdP's error page "Sorry" at http:\/\/127\.0\.0\.1:\d+\/resume: no code, and no session for the browser/,
    )
  }, 150_000)

  test('a push page after the credential post and a resume that checks nothing: fails on the code', async () => {
    const result = await run('push-none')
    expect(result.verdict, result.message).toBe('fail')
    expect(result.message).toMatch(
      /^credentials without the anti-CSRF field: the sign-in went through to the client \(https:\/\/client\.example\/callback\)$/,
    )
  }, 150_000)

  test("a forged sign-in's push page that never moves on: inconclusive, naming where it ended", async () => {
    const result = await run('push-waits')
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /credentials without the anti-CSRF field: the form post to \/login, forged, was answered HTTP 303, not refused outright; followed with the cookies it would carry, it ended without a code: the suite could not get past "Approve on your phone" at http:\/\/127\.0\.0\.1:\d+\/push.*; whether the forged sign-in would complete from there is not shown/,
    )
  }, 150_000)

  // LOGIN-07 compares an unknown user's failed sign-in with a wrong password's: here the user
  // name goes with the first request, so each try is a sign-in of its own (a fresh authorization,
  // its first request carrying the try's user name, replayed up to the password's), and what the
  // IdP told at the user name's request and at the password's is compared
  test('LOGIN-07: one answer for an unknown user and a wrong password at both requests passes', async () => {
    const result = await run('checks', 'LOGIN-07')
    expect(result.verdict, result.message).toBe('pass')
    const notes = result.notes.join('\n')
    // each try had its own authorization: its flow id in the redirect, left out
    expect(notes).toMatch(
      /the answers to hop 1 of 2 \(POST \/login\/identify\) change between tries of the same kind \(0 word\(s\) of the page, 1 part\(s\) of the redirect\)/,
    )
    expect(notes).toMatch(/timing ms of hop 1 of 2 \(POST \/login\/identify\): known user \d+/)
    expect(notes).toMatch(/timing ms of hop 2 of 2 \(POST \/login\/password\): wrong password \d+/)
  }, 150_000)

  test('LOGIN-07: the password step names an unknown user: warns, naming the request', async () => {
    const result = await run('tells-at-password', 'LOGIN-07')
    expect(result.verdict, result.message).toBe('warn')
    expect(result.message).toMatch(
      /^page: after hop 2 of 2 \(POST \/login\/password\), wrong password and unknown user get different pages:\n {2}"Password Wrong password\."\n {2}"Password No account with that user name\."/,
    )
  }, 150_000)

  test("LOGIN-07: the user name's step tells an unknown user it has no account: warns, naming that request", async () => {
    const result = await run('tells-at-identifier', 'LOGIN-07')
    expect(result.verdict, result.message).toBe('warn')
    expect(result.message).toMatch(
      /^status: hop 1 of 2 \(POST \/login\/identify\): known user → HTTP 303 to http:\/\/127\.0\.0\.1:\d+\/login\/password\?flow=\w+, unknown user → HTTP 200$/,
    )
    // the unknown user's try never reached a password request, and says why
    expect(result.notes.join('\n')).toMatch(
      /the unknown user's sign-in went no further: hop 2 of 2 \(POST \/login\/password\) cannot be built: .*member "csrf2": no answer of the IdP in this replay holds it/,
    )
  }, 150_000)

  test('LOGIN-07: a password request the replay cannot build: inconclusive, naming it', async () => {
    const result = await run('script-nonce', 'LOGIN-07')
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /hop 2 of 2 \(POST \/login\/password\) cannot be built: member "nonce"/,
    )
  }, 150_000)
})

// A sign-in whose requests are a script's JSON calls: the recorded body is read by the one
// parser the capture uses too (bodyMembers), which keeps a JSON member's type, so what is
// replayed is what the page sent: `"remember": true` a boolean, a number a number, also a
// number the IdP handed out in an earlier answer (read back from the replay's own answers).
describe("a recorded sign-in's JSON requests, replayed", () => {
  const IDP = 'https://idp.example'
  const recorded = (path: string, body: string, before: number): RecordedHop => {
    const parsed = bodyMembers('application/json', body)
    if (!parsed) throw new Error(`not a JSON object: ${body}`)
    return {
      url: `${IDP}${path}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      encoding: parsed.encoding,
      members: parsed.members,
      navigation: false,
      before,
    }
  }
  // the login page hands out the flow's number; the password's request sends it back
  const page = (flow: number): string =>
    `HTTP 200 ${IDP}/login\nlocation: \n\n<script>start({"flow":${flow}})</script>`
  const recording = (flow: number): Recording => ({
    hops: [
      recorded('/login/identify', '{"username":"alice","remember":true,"attempt":1}', 1),
      recorded('/login/password', `{"password":"wonderland","flow":${flow},"trust":false}`, 1),
    ],
    answers: [page(flow)],
  })

  test('booleans and numbers go out as the page sent them, not as strings', () => {
    const plan = planHops(recording(4711), recording(8150), user)
    const replayAnswers = [page(9999)]
    const sent = plan.hops.map((hop) => {
      const built = buildHop(hop, replayAnswers)
      if (typeof built === 'string') throw new Error(built)
      return JSON.parse(
        hopBody(hop, {
          ...built.members,
          ...(built.usernameField ? { [built.usernameField]: user.username } : {}),
          ...(built.passwordField ? { [built.passwordField]: user.password } : {}),
        }),
      ) as unknown
    })
    expect(sent).toStrictEqual([
      { username: 'alice', remember: true, attempt: 1 },
      { password: 'wonderland', flow: 9999, trust: false },
    ])
  })

  test('a form body stays strings; a JSON body that is not an object is no body to replay', () => {
    expect(bodyMembers('application/x-www-form-urlencoded', 'remember=true&n=1')).toStrictEqual({
      encoding: 'form',
      members: { remember: 'true', n: '1' },
    })
    expect(bodyMembers('application/json; charset=utf-8', '[1,2]')).toBeUndefined()
    expect(bodyMembers('application/json', '{not json')).toBeUndefined()
    expect(bodyMembers('text/plain', 'a=1')).toBeUndefined()
  })
})
