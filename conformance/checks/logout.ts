import { randomBytes } from 'node:crypto'
import type { BrowserContext, Page } from '@playwright/test'
import { decodeJwt } from 'jose'
import { browse, clientOrigins, mayMoveByItself, type BrowserOutcome } from '../harness/browser.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { logout as catalogue } from '../catalogue/logout.ts'
import type { HttpResponse } from '../harness/http.ts'
import { CheckFailure, ControlFailure, expectEqual, expectThat, show } from '../harness/expect.ts'
import { authorize, codeOf, idTokenOf, signIn, whereLeft } from '../harness/flows.ts'
import { endpointUrl, LOGOUT } from '../harness/requests.ts'
import { forgeAlgNone, forgeForeign, forgeTampered } from '../harness/jwt.ts'

/** The main client's registered post-logout URI, or the check is skipped. */
function postLogoutUri(ctx: CheckContext): string {
  const uri = ctx.target.clients.main.postLogoutRedirectUri
  if (!uri)
    ctx.skip(
      `client ${ctx.target.clients.main.id} has no postLogoutRedirectUri in the target config`,
    )
  return uri
}

/** A state value of `length` URL-safe characters. */
const randomState = (length: number): string =>
  randomBytes(Math.ceil((length * 3) / 4))
    .toString('base64url')
    .slice(0, length)

const logoutUrl = (ctx: CheckContext, params: Record<string, string>): string => {
  const query = new URLSearchParams(params).toString()
  const endpoint = endpointUrl(ctx.target, 'end_session_endpoint')
  return query ? `${endpoint}${endpoint.includes('?') ? '&' : '?'}${query}` : endpoint
}

/** Signs in through the browser context (which keeps the session) and returns an ID token. */
/**
 * A session of its own in `context`, and its ID token: the subject is the logout that follows,
 * so the login form is posted over HTTP (the browser when it cannot be; LOGIN-* test the page).
 */
async function signedIn(ctx: CheckContext, context: BrowserContext): Promise<string> {
  return idTokenOf(await signIn(ctx, { context, byFormPost: true }))
}

/**
 * The URL must be `uri` with exactly the parameters `params` added (RP-Initiated Logout §3:
 * state echoed, nothing else; OIDF CheckForUnexpectedParametersInPostLogoutRedirect).
 */
function expectPostLogoutUrl(
  actual: string | undefined,
  uri: string,
  params: Record<string, string>,
  what: string,
): void {
  expectThat(actual, `${what}: the IdP never redirected to ${uri}`)
  const got = new URL(actual)
  const want = new URL(uri)
  for (const [k, v] of Object.entries(params)) want.searchParams.append(k, v)
  expectEqual(
    `${got.origin}${got.pathname}`,
    `${want.origin}${want.pathname}`,
    `${what}: the post-logout redirect target`,
  )
  const sorted = (u: URL) =>
    [...u.searchParams]
      .map(([k, v]) => `${k}=${v}`)
      .sort()
      .join('&')
  expectEqual(sorted(got), sorted(want), `${what}: the parameters of the post-logout redirect`)
  expectThat(
    got.hash === '' && !/[?&]$/.test(actual),
    `${what}: the post-logout redirect has a stray fragment or separator: ${actual}`,
  )
}

/**
 * A raw response must not send the user agent away: no 3xx whose Location leaves the IdP's
 * origin (REQUIREMENTS.md: "no redirect" means no 3xx off-origin or to any client URI), and
 * no HTML meta refresh to `uri`.
 */
function expectNoRedirect(ctx: CheckContext, res: HttpResponse, uri: string, what: string): void {
  expectThat(res.status < 500, `${what}: the IdP failed with ${res.status}`)
  const location = res.headers.get('location')
  if (res.status >= 300 && res.status < 400 && location !== null) {
    let target: URL | undefined
    try {
      target = new URL(location, res.url)
    } catch {
      target = undefined
    }
    expectThat(
      target?.origin === new URL(ctx.target.baseUrl).origin,
      `${what}: expected no redirect (an error or confirmation page), got ${res.status} to ${location}`,
    )
  }
  expectThat(
    !(/http-equiv\s*=\s*["']?refresh/i.test(res.text) && res.text.includes(uri)),
    `${what}: the page refreshes to ${uri}`,
  )
  // the Refresh header is the meta refresh sent as a header (HTML, "Shared declarative refresh
  // steps"): a browser follows it as well
  expectThat(
    !(res.headers.get('refresh') ?? '').includes(uri),
    `${what}: the Refresh header sends the browser to ${uri}`,
  )
}

/** The browser must stay at the IdP: no navigation to a client URI. */
function expectStayed(ctx: CheckContext, outcome: BrowserOutcome, what: string): void {
  expectThat(
    outcome.callback === undefined,
    `${what}: expected an error or confirmation page, but the browser was sent to ${outcome.callback ?? ''}`,
  )
  const at = outcome.page.url()
  expectThat(
    at.startsWith(ctx.target.baseUrl),
    `${what}: expected the browser to stay at the IdP, it is at ${at}`,
  )
}

/**
 * Whether the browser context still has a session: prompt=none must return a code with one
 * and login_required without (OIDC Core §3.1.2.6).
 */
async function sessionOf(
  ctx: CheckContext,
  context: BrowserContext,
  what: string,
): Promise<'alive' | 'ended'> {
  const result = await authorize(ctx, { context, user: null, params: { prompt: 'none' } })
  expectThat(
    result.callback,
    `${what}: prompt=none did not redirect back to the client (page at ${result.outcome.page.url()})`,
  )
  const error = result.callback.searchParams.get('error')
  if (result.callback.searchParams.get('code') && !error) return 'alive'
  expectThat(
    error === 'login_required',
    `${what}: prompt=none answered error=${show(error)}; expected a code or login_required`,
  )
  return 'ended'
}

async function expectSession(
  ctx: CheckContext,
  context: BrowserContext,
  expected: 'alive' | 'ended',
  what: string,
): Promise<void> {
  const state = await sessionOf(ctx, context, what)
  expectThat(
    state === expected,
    expected === 'ended'
      ? `${what}: the session survived the logout (prompt=none still returned a code)`
      : `${what}: the session was ended without the user confirming (prompt=none got login_required)`,
  )
}

/**
 * The session must be over in this browser and at the server: the cookies `before` the logout,
 * replayed in a fresh context, must not sign anyone in (a logout that only deletes the cookie
 * leaves a stolen or cached copy working).
 */
async function expectLoggedOut(
  ctx: CheckContext,
  context: BrowserContext,
  before: Awaited<ReturnType<BrowserContext['cookies']>>,
  what: string,
): Promise<void> {
  await expectSession(ctx, context, 'ended', what)
  const replay = await ctx.newBrowserContext()
  await replay.addCookies(
    before.map((c) => ({
      name: c.name,
      value: c.value,
      url: ctx.target.baseUrl,
      secure: c.secure,
      httpOnly: c.httpOnly,
      sameSite: c.sameSite,
    })),
  )
  await expectSession(ctx, replay, 'ended', `${what}: the session cookie from before replayed`)
}

/**
 * The positive control of the negative logout checks: the genuine hint with the registered
 * URI does reach it, judged where a browser ends up (RP-Initiated Logout §2 lets the OP show
 * a page first; one that submits itself, 200 then a POST then the redirect, is a redirect to
 * a browser). Otherwise the refusals prove nothing: the check is inconclusive.
 */
async function expectLogoutControl(
  ctx: CheckContext,
  context: BrowserContext,
  idToken: string,
  uri: string,
  state: string,
  what: string,
): Promise<void> {
  const outcome = await browse(
    context,
    ctx.target,
    logoutUrl(ctx, { id_token_hint: idToken, post_logout_redirect_uri: uri, state }),
    ctx.http,
  )
  if (outcome.callback === undefined)
    throw new ControlFailure(
      `${what}: the genuine hint with the registered URI did not reach ${uri} in a browser either (it stayed at ${outcome.page.url()}), so the refusals prove nothing`,
    )
  expectPostLogoutUrl(outcome.callback, uri, { state }, what)
}

/**
 * Signs in again in a context whose session ended: the login page must show (INTERFACE.md
 * §4.1). The form is posted over HTTP, as for `signedIn`; a session that lived on would send
 * the request to the client without a form, and the browser then shows whether it did.
 */
async function signInAgain(ctx: CheckContext, context: BrowserContext, what: string) {
  const result = await authorize(ctx, { context, byFormPost: true })
  expectThat(result.outcome.loginShown, `${what}: signing in again did not show the login page`)
  codeOf(result)
}

/**
 * Presses the confirmation button of a logout page, when the page asks; returns whether it
 * did. The wait covers the form post and the page it leads to.
 */
async function confirmIfAsked(page: Page): Promise<boolean> {
  if ((await page.locator('input[type=password]').count()) > 0) return false
  const button = page
    // a button may sit outside its form and name it (the form attribute), as
    // node-oidc-provider's logout page has it
    .locator(
      'form button[type=submit], form button:not([type]), form input[type=submit], button[form]:not([type=button]), input[type=submit][form]',
    )
    .first()
  if ((await button.count()) === 0) return false
  const posted = page
    .waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'POST', {
      timeout: 10_000,
    })
    .catch(() => undefined)
  await button.click()
  await posted
  await page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined)
  return true
}

const LOGOUT_01 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  const context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)
  // the session cookies as they were, to replay after the logout
  const before = await context.cookies(ctx.target.baseUrl)
  const state = randomState(128)
  const outcome = await browse(
    context,
    ctx.target,
    logoutUrl(ctx, { id_token_hint: idToken, post_logout_redirect_uri: uri, state }),
    ctx.http,
  )
  // the redirect and the end of the session are sub-cases: a server wrong in both is told both
  // RP-Initiated Logout §3: redirect to the registered URI with state and nothing else
  const redirect = 'logout with a valid hint'
  await ctx.subcase(redirect, () => expectPostLogoutUrl(outcome.callback, uri, { state }, redirect))
  await ctx.subcase('after logout', async () => {
    await expectLoggedOut(ctx, context, before, 'after logout')
    const again = await authorize(ctx, { context, user: null })
    expectThat(
      again.outcome.loginShown,
      `a new authorization showed no login page (${whereLeft(again)})`,
    )
  })
})

const LOGOUT_02 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  const context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)
  const state = randomState(16)
  const withQuery = new URL(uri)
  withQuery.searchParams.append('foo', 'bar')
  const withSlash = new URL(uri)
  withSlash.pathname = withSlash.pathname.endsWith('/')
    ? withSlash.pathname.slice(0, -1)
    : `${withSlash.pathname}/`
  const cases: [string, string][] = [
    ['an unregistered URI', 'https://evil.example/'],
    ['the registered URI with a query added', withQuery.toString()],
    ['the registered URI with its trailing slash changed', withSlash.toString()],
    ['the javascript: scheme', 'javascript:alert(1)'],
  ]
  if (uri.startsWith('https:'))
    cases.push(['the http form of the registered URI', uri.replace(/^https:/, 'http:')])
  const other = ctx.target.clients.other?.postLogoutRedirectUri
  if (other && other !== uri) cases.push(['a URI registered only for another client', other])
  else ctx.note('no other client with its own post-logout URI: that case was not tried')
  // RP-Initiated Logout §3: the URI MUST have been registered, compared exactly; each URI is
  // its own sub-case, so every one redirected to is reported, not only the first
  for (const [what, candidate] of cases)
    await ctx.subcase(what, async () => {
      const res = await ctx.http.request(LOGOUT, {
        query: { id_token_hint: idToken, post_logout_redirect_uri: candidate, state },
        headers: { accept: 'text/html' },
      })
      expectNoRedirect(ctx, res, candidate, what)
    })
  // in the browser too, where a page could still send the user on; only URIs at client
  // origins, whose navigation is caught locally, are tried there
  const caught = new Set(clientOrigins(ctx.target))
  for (const [what, candidate] of cases) {
    if (!/^https?:/.test(candidate) || !caught.has(new URL(candidate).origin)) continue
    await ctx.subcase(`${what} (browser)`, async () => {
      const outcome = await browse(
        context,
        ctx.target,
        logoutUrl(ctx, { id_token_hint: idToken, post_logout_redirect_uri: candidate, state }),
        ctx.http,
      )
      await ctx.screenshot(what, outcome.page)
      expectStayed(ctx, outcome, `${what} (browser)`)
    })
  }
  // the same hint with the exact URI is redirected, so the refusals above are about the URI
  await expectLogoutControl(
    ctx,
    context,
    idToken,
    uri,
    state,
    'the valid hint with the registered URI',
  )
})

const LOGOUT_03 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  const context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)
  const state = randomState(16)
  const main = ctx.target.clients.main.id
  // RP-Initiated Logout §3: without a hint the OP has no proof of who asks; the seed's
  // "redirects when given" must not be read literally (REQUIREMENTS.md C6)
  for (const [what, params] of [
    ['no id_token_hint', { post_logout_redirect_uri: uri, state }],
    ['no id_token_hint but client_id', { client_id: main, post_logout_redirect_uri: uri, state }],
  ] as const)
    await ctx.subcase(what, async () => {
      const res = await ctx.http.request(LOGOUT, {
        query: params,
        headers: { accept: 'text/html' },
      })
      expectNoRedirect(ctx, res, uri, what)
    })
  const outcome = await browse(
    context,
    ctx.target,
    logoutUrl(ctx, { post_logout_redirect_uri: uri, state }),
    ctx.http,
  )
  await ctx.screenshot('logout without a hint', outcome.page)
  await ctx.subcase('no id_token_hint (browser)', () =>
    expectStayed(ctx, outcome, 'no id_token_hint (browser)'),
  )
  // with the hint the same URI is redirected, so the refusal above is about the hint
  await expectLogoutControl(ctx, context, idToken, uri, state, 'with a valid hint')
})

const LOGOUT_04 = check({ exclusive: true }, async (ctx) => {
  const uri = postLogoutUri(ctx)
  const context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)
  const state = randomState(16)
  const other = ctx.target.clients.other
  const cases: [string, Record<string, string>][] = [
    ['a hint with a changed claim (signature kept)', { id_token_hint: forgeTampered(idToken) }],
    ['a hint signed by a foreign key', { id_token_hint: await forgeForeign(idToken) }],
    ['a hint rewritten to alg none', { id_token_hint: forgeAlgNone(idToken) }],
  ]
  // RP-Initiated Logout §2: client_id must match the hint's aud. Only a client that exists
  // tests that: an unknown client_id is refused as unknown, whatever the server does with aud
  if (other)
    cases.push([
      "a client_id other than the hint's aud",
      { id_token_hint: idToken, client_id: other.id },
    ])
  else ctx.note("no other client: a client_id other than the hint's aud was not tried")
  // each forged hint is its own sub-case: every one believed is reported, not only the first
  for (const [what, params] of cases)
    await ctx.subcase(what, async () => {
      const res = await ctx.http.request(LOGOUT, {
        query: { ...params, post_logout_redirect_uri: uri, state },
        headers: { accept: 'text/html' },
      })
      expectNoRedirect(ctx, res, uri, what)
    })
  const otherUri = other?.postLogoutRedirectUri
  if (other && otherUri)
    // believing client_id over the hint would make the other client's URI acceptable
    await ctx.subcase('client_id and URI of another client', async () => {
      const res = await ctx.http.request(LOGOUT, {
        query: {
          id_token_hint: idToken,
          client_id: other.id,
          post_logout_redirect_uri: otherUri,
          state,
        },
        headers: { accept: 'text/html' },
      })
      expectNoRedirect(ctx, res, otherUri, 'client_id and URI of another client')
    })
  for (const [what, params] of cases.slice(0, 2))
    await ctx.subcase(`${what} (browser)`, async () => {
      const outcome = await browse(
        context,
        ctx.target,
        logoutUrl(ctx, { ...params, post_logout_redirect_uri: uri, state }),
        ctx.http,
      )
      expectStayed(ctx, outcome, `${what} (browser)`)
    })
  await expectLogoutControl(ctx, context, idToken, uri, state, 'the genuine hint')
  // RP-Initiated Logout §2: an expired hint still identifies the client (SHOULD: a note)
  const controls = ctx.target.controls
  const exp = decodeJwt(idToken).exp
  if (!controls || typeof exp !== 'number') {
    ctx.note('an expired hint was not tried: only the embedded server clock can be moved')
    return
  }
  controls.advanceClock(Math.max(0, exp - Math.floor(Date.now() / 1000)) + 60)
  const expired = await ctx.http.request(LOGOUT, {
    query: { id_token_hint: idToken, post_logout_redirect_uri: uri, state },
    headers: { accept: 'text/html' },
  })
  ctx.note(
    expired.status >= 300 && expired.status < 400
      ? 'an expired hint is accepted (RP-Initiated Logout §2)'
      : `an expired hint is refused with ${expired.status}; RP-Initiated Logout §2 says it SHOULD be accepted`,
  )
})

const LOGOUT_05 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  let context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)

  // each logout is a sub-case, and so are the redirect and the end of the session of the first:
  // a server wrong in several of them is told each
  // no state: the registered URI exactly, with no state parameter (RP-Initiated Logout §3)
  const outcome = await browse(
    context,
    ctx.target,
    logoutUrl(ctx, { id_token_hint: idToken, post_logout_redirect_uri: uri }),
    ctx.http,
  )
  const first = 'logout without state'
  await ctx.subcase(first, () => expectPostLogoutUrl(outcome.callback, uri, {}, first))
  // whether the last logout was seen to end the session, so the next starts from a fresh one
  const last = { ended: false }
  await ctx.subcase(first, async () => {
    await expectSession(ctx, context, 'ended', first)
    last.ended = true
  })

  const steps: [string, Record<string, string>][] = [
    ['logout without post_logout_redirect_uri', { id_token_hint: idToken }],
    ['logout with no parameters', {}],
    ['logout with only state', { state: randomState(16) }],
  ]
  for (const [what, params] of steps) {
    // after a logout that ended the session, signing in again must show the login page; after
    // one that failed, the next logout starts in a fresh browser, signed in there
    if (last.ended) await signInAgain(ctx, context, `before ${what}`)
    else {
      context = await ctx.newBrowserContext()
      await signedIn(ctx, context)
    }
    last.ended = false
    await ctx.subcase(what, async () => {
      const outcome = await browse(context, ctx.target, logoutUrl(ctx, params), ctx.http)
      expectStayed(ctx, outcome, what)
      // RP-Initiated Logout §2: the OP may ask the user first; the logout must still happen
      const asked = await confirmIfAsked(outcome.page)
      if (asked) ctx.note(`${what}: the user was asked to confirm`)
      expectThat(
        outcome.page.url().startsWith(ctx.target.baseUrl),
        `${what}: expected the logged-out page, the browser went to ${outcome.page.url()}`,
      )
      await ctx.screenshot(what, outcome.page)
      await expectSession(ctx, context, 'ended', what)
      last.ended = true
    })
  }
})

const LOGOUT_06 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  const context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)
  const before = await context.cookies(ctx.target.baseUrl)
  const state = randomState(128)
  // the form is posted from a page at the client's origin, as a relying party posts it
  const rpPage = `${new URL(uri).origin}/conformance-rp-logout-form`
  const outcome = await browse(context, ctx.target, rpPage, ctx.http)
  expectThat(outcome.callback, `could not open a page at ${rpPage} in the browser`)
  const page = outcome.page
  await page.waitForURL(rpPage, { timeout: 10_000 })
  const fields = { id_token_hint: idToken, post_logout_redirect_uri: uri, state }
  // done when the browser reaches the URI, or settles on a page of the IdP instead: a page
  // that cannot move by itself (no script, meta refresh, handler or frame), or one that stays
  // put for 3 s after it loaded (a page that submits itself moves on before)
  const arrived = page
    .waitForURL((u) => u.href !== rpPage && u.href.startsWith(uri), { timeout: 20_000 })
    .then(() => true)
    .catch(() => false)
  const settle = async (): Promise<false> => {
    for (;;) {
      const at = page.url()
      await page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined)
      if (page.url() === at && !(await mayMoveByItself(page))) return false
      await new Promise((r) => setTimeout(r, 3000))
      if (page.url() === at && at.startsWith(ctx.target.baseUrl)) return false
      if (page.isClosed()) return false
    }
  }
  const settled = page
    .waitForResponse(
      (r) =>
        r.request().isNavigationRequest() &&
        r.url().startsWith(ctx.target.baseUrl) &&
        (r.status() < 300 || r.status() >= 400),
      { timeout: 15_000 },
    )
    .then(settle)
    .catch(() => false)
  // RP-Initiated Logout §2: the OP MUST support POST (form-encoded)
  await page.evaluate(
    ({ action, fields }) => {
      const form = document.createElement('form')
      form.method = 'POST'
      form.action = action
      for (const [name, value] of Object.entries(fields)) {
        const input = document.createElement('input')
        input.type = 'hidden'
        input.name = name
        input.value = value
        form.appendChild(input)
      }
      document.body.appendChild(form)
      form.submit()
    },
    { action: endpointUrl(ctx.target, 'end_session_endpoint'), fields },
  )
  if (!(await Promise.race([arrived, settled]))) {
    await page.waitForLoadState('load', { timeout: 5_000 }).catch(() => undefined)
    await ctx.screenshot('after the logout POST', page)
    throw new CheckFailure(
      `the form-encoded POST logout did not redirect to ${uri}; the browser is at ${page.url()}`,
    )
  }
  expectPostLogoutUrl(page.url(), uri, { state }, 'POST logout')
  await expectLoggedOut(ctx, context, before, 'after the POST logout')
})

const LOGOUT_07 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  let context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)
  // RP-Initiated Logout §6: a request anyone could forge must not end the session silently
  const forged: [string, Record<string, string>][] = [
    ['a logout request without a hint', {}],
    [
      'a logout request with an invalid hint',
      { id_token_hint: forgeTampered(idToken), post_logout_redirect_uri: uri },
    ],
  ]
  // each forged request, and the confirmation, is a sub-case: every deviation is reported
  for (const [what, params] of forged)
    await ctx.subcase(what, async () => {
      const outcome = await browse(context, ctx.target, logoutUrl(ctx, params), ctx.http)
      let left: Error | undefined
      try {
        expectStayed(ctx, outcome, what)
      } catch (err) {
        left = err instanceof Error ? err : new Error(String(err))
      }
      await ctx.screenshot(what, outcome.page)
      const state = await sessionOf(ctx, context, what)
      // a session the request ended: the next part starts signed in again, in a fresh browser
      if (state === 'ended') {
        context = await ctx.newBrowserContext()
        await signedIn(ctx, context)
      }
      if (left !== undefined) throw left
      expectThat(
        state === 'alive',
        `${what}: the session was ended without the user confirming (prompt=none got login_required)`,
      )
    })
  // and the page really is a confirmation: confirming ends the session
  const confirming = 'confirming the logout'
  await ctx.subcase(confirming, async () => {
    const outcome = await browse(context, ctx.target, logoutUrl(ctx, {}), ctx.http)
    expectThat(
      await confirmIfAsked(outcome.page),
      `the logout page without a hint offers no confirmation (page at ${outcome.page.url()})`,
    )
    await expectSession(ctx, context, 'ended', 'after confirming the logout')
  })
})

/** The logout checks, one per row of catalogue/logout.ts. */
export const logoutChecks: AreaChecks<typeof catalogue> = {
  'LOGOUT-01': LOGOUT_01,
  'LOGOUT-02': LOGOUT_02,
  'LOGOUT-03': LOGOUT_03,
  'LOGOUT-04': LOGOUT_04,
  'LOGOUT-05': LOGOUT_05,
  'LOGOUT-06': LOGOUT_06,
  'LOGOUT-07': LOGOUT_07,
}
