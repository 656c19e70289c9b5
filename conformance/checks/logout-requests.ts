import type { BrowserContext } from '@playwright/test'
import { decodeJwt } from 'jose'
import { browse, clientOrigins } from '../harness/browser.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { logout as catalogue } from '../catalogue/logout.ts'
import type { HttpResponse } from '../harness/http.ts'
import { ControlFailure, expectThat } from '../harness/expect.ts'
import { LOGOUT } from '../harness/requests.ts'
import { forgeAlgNone, forgeForeign, forgeTampered } from '../harness/jwt.ts'
import {
  browseLogout,
  expectPostLogoutUrl,
  expectStayed,
  logoutUrl,
  postLogoutUri,
  randomState,
  signedIn,
} from '../harness/logout.ts'

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

/**
 * The positive control of the negative logout checks: the genuine hint with the registered
 * URI does reach it, judged where a browser ends up (RP-Initiated Logout §2 lets the OP show
 * a page first: one that submits itself, 200 then a POST then the redirect, is a redirect to
 * a browser, and a confirmation is answered as the user would). Otherwise the refusals prove
 * nothing: the check is inconclusive.
 */
async function expectLogoutControl(
  ctx: CheckContext,
  context: BrowserContext,
  idToken: string,
  uri: string,
  state: string,
  what: string,
): Promise<void> {
  // the control's logout must go through: a confirmation the OP asks first (RP-Initiated
  // Logout 1.0 §2, even with a valid hint) is answered as the user would
  const outcome = await browseLogout(
    ctx,
    context,
    logoutUrl(ctx, { id_token_hint: idToken, post_logout_redirect_uri: uri, state }),
    what,
  )
  if (outcome.callback === undefined)
    throw new ControlFailure(
      `${what}: the genuine hint with the registered URI did not reach ${uri} in a browser either (it stayed at ${outcome.page.url()}), so the refusals prove nothing`,
    )
  expectPostLogoutUrl(outcome.callback, uri, { state }, what)
}

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

/**
 * The logout checks of the request's validation: no redirect to a URI that is not registered
 * exactly, nor without a hint, nor on a forged one (the other rows of catalogue/logout.ts:
 * logout-session.ts; checks/index.ts joins them).
 */
export const logoutRequestChecks = {
  'LOGOUT-02': LOGOUT_02,
  'LOGOUT-03': LOGOUT_03,
  'LOGOUT-04': LOGOUT_04,
} satisfies Partial<AreaChecks<typeof catalogue>>
