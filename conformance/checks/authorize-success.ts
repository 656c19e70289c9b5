import { browse } from '../harness/browser.ts'
import { type AreaChecks, check } from '../harness/check.ts'
import type { authorize as catalogue } from '../catalogue/authorize.ts'
import { expectEqual, expectStatus, expectThat, scopeList } from '../harness/expect.ts'
import {
  authorize,
  expectNotThrottled,
  noteThrottleWaits,
  awkwardState,
  codeOf,
  mainClient,
  pkcePair,
  redeem,
  redeemCode,
  redirectUriOf,
  tokensFor,
  validParams,
  whereLeft,
} from '../harness/flows.ts'
import { authorizeRaw, authorizeUrl, endpointUrl } from '../harness/requests.ts'
import { verifyJwt } from '../harness/jwt.ts'
import { expectLoginPage, postOnNavigation, watchRedirects } from '../harness/pages.ts'

const AUTHZ_01 = check(async (ctx) => {
  const params = await validParams(ctx)
  const res = await authorizeRaw(ctx, params)
  // OIDC Core §3.1.2.3: the user is authenticated before anything goes back to the client
  await expectLoginPage(ctx, res, 'valid authorization request')
})

const AUTHZ_02 = check(async (ctx) => {
  // its own browser: the subject is the redirect response as the browser receives it (the
  // IdP's Location header, unparsed), which only a browser's own sign-in shows
  const context = await ctx.newBrowserContext()
  const redirects = watchRedirects(context, redirectUriOf(ctx, mainClient(ctx)))
  const auth = await authorize(ctx, { context })
  // RFC 6749 §4.1.2: the success redirect carries the code
  codeOf(auth)
  // the IdP's own Location header: the browser never shows a fragment to the client's server
  const location = redirects.at(-1)
  expectThat(location, 'the browser saw no redirect response to the client')
  expectThat(!location.includes('#'), `the success redirect carries a fragment: ${location}`)
  const callback = new URL(location)
  const registered = new URL(auth.redirectUri)
  expectEqual(
    `${callback.origin}${callback.pathname}`,
    `${registered.origin}${registered.pathname}`,
    'redirect target',
  )
  // RFC 6749 §4.1.2: state exactly as the client sent it (the code: codeOf above)
  expectEqual(callback.searchParams.get('state'), auth.state, 'state in the redirect')
  // tokens never travel through the browser in the code flow (RFC 9700 §2.1.2)
  for (const name of ['access_token', 'id_token', 'token_type', 'error'])
    expectThat(!callback.searchParams.has(name), `the success redirect carries ${name}`)
})

const AUTHZ_09 = check(async (ctx) => {
  // its own browser: the request without state is built by hand and sent in the session the
  // first request signed in
  const context = await ctx.newBrowserContext()
  const state = awkwardState()
  const auth = await authorize(ctx, { context, params: { state } })
  codeOf(auth)
  // RFC 6749 §4.1.2: the exact value received from the client
  expectEqual(auth.callback?.searchParams.get('state') ?? null, state, 'state after decoding')

  const { challenge } = await pkcePair()
  const base = await validParams(ctx)
  const withoutState: [string, string][] = Object.entries({
    ...base,
    code_challenge: challenge,
  }).filter(([k]) => k !== 'state')
  const outcome = await browse(context, ctx.target, authorizeUrl(ctx, withoutState), ctx.http, {
    user: ctx.target.users.primary,
    timeLeftMs: () => ctx.timeLeftMs(),
  })
  noteThrottleWaits(ctx, outcome)
  const callback = outcome.callback ? new URL(outcome.callback) : undefined
  // FAPI2 tolerates a request without state (INFO): record what happened, fail nothing
  if (!callback?.searchParams.get('code')) {
    ctx.note(
      `a request without state was not granted (error=${callback?.searchParams.get('error') ?? 'no redirect'}); INFO only`,
    )
  } else if (callback.searchParams.has('state')) {
    ctx.note(`a request without state came back with state=${callback.searchParams.get('state')}`)
  }
})

const AUTHZ_10 = check(async (ctx) => {
  // a request without scope is AUTHZ-19's (INTERFACE.md §4.1 makes it valid)
  // a plain OAuth request (no openid) is not an OpenID request: no ID token (OIDC Core §3.1.2.1)
  const { body } = await tokensFor(ctx, { scope: 'read:documents', nonce: false })
  expectThat(!('id_token' in body), 'scope=read:documents without openid returned an id_token')
  expectThat(
    !new Set(scopeList(body.scope)).has('openid'),
    `scope=read:documents was granted "${String(body.scope)}"`,
  )
  ctx.note('that this access token is refused by user-info is checked by UI-08')
})

const AUTHZ_12 = check(async (ctx) => {
  const client = mainClient(ctx)
  const withNonce = await tokensFor(ctx)
  const idToken = withNonce.body.id_token
  expectThat(typeof idToken === 'string', 'the token response has no id_token')
  const { payload } = await verifyJwt(ctx, idToken, { audience: client.id })
  // OIDC Core §3.1.3.7 step 11: the nonce claim equals the value sent
  // `?? null`: expectEqual cannot print undefined
  expectEqual(payload.nonce ?? null, withNonce.auth.nonce ?? null, 'nonce in the ID token')

  // OIDC Core §3.1.2.1: nonce is OPTIONAL in the code flow
  const without = await tokensFor(ctx, { nonce: false })
  const second = without.body.id_token
  expectThat(typeof second === 'string', 'without nonce: the token response has no id_token')
  const { payload: p2 } = await verifyJwt(ctx, second, { audience: client.id })
  expectThat(!('nonce' in p2), `without nonce: the ID token carries nonce=${String(p2.nonce)}`)
})

const AUTHZ_13 = check(async (ctx) => {
  const context = await ctx.newBrowserContext()
  const client = mainClient(ctx)
  const { verifier, challenge } = await pkcePair()
  const params = { ...(await validParams(ctx)), code_challenge: challenge }
  const endpoint = endpointUrl(ctx.target, 'authorization_endpoint')
  // the browser's navigation to the endpoint is turned into the form POST of OIDC Core §3.1.2.1
  const posted = await postOnNavigation(context, endpoint, params)
  const outcome = await browse(context, ctx.target, endpoint, ctx.http, {
    user: ctx.target.users.primary,
    timeLeftMs: () => ctx.timeLeftMs(),
  })
  noteThrottleWaits(ctx, outcome)
  expectThat(posted(), 'the authorization request was never sent')
  // the IdP's 429 or 503 on the way (the sign-in budget used up) judges nothing: inconclusive
  if (!outcome.callback) expectNotThrottled(outcome, 'the client')
  expectThat(outcome.loginShown, 'the POSTed authorization request did not show the login page')
  expectThat(outcome.callback, 'the POSTed authorization request never came back to the client')
  const callback = new URL(outcome.callback)
  const code = callback.searchParams.get('code')
  expectThat(
    code,
    `the POSTed request failed: error=${callback.searchParams.get('error') ?? 'none'} (${callback.searchParams.get('error_description') ?? ''})`,
  )
  expectEqual(callback.searchParams.get('state'), params.state, 'state')
  await redeemCode(ctx, code, verifier, client, 'code from the POSTed request')
})

const AUTHZ_19 = check(async (ctx) => {
  // INTERFACE.md §4.1 lists scope as not required, so a request without it is a valid one;
  // RFC 6749 §3.3: the server processes it with a pre-defined default scope. Only the
  // parameters of INTERFACE.md §4.1 are sent: a nonce belongs to an OpenID request (openid
  // scope), and a provider may refuse it without one
  const auth = await authorize(ctx, { scope: null, nonce: false })
  expectThat(
    auth.callback,
    `an authorization request without scope never came back to ${auth.redirectUri} (${whereLeft(auth)})`,
  )
  const error = auth.callback.searchParams.get('error')
  expectThat(
    error === null,
    `an authorization request without scope was refused with error=${error ?? ''} (${auth.callback.searchParams.get('error_description') ?? ''})`,
  )
  const res = await redeem(ctx, auth)
  expectStatus(res, 200, 'the token request for the code of a request without scope')
  const body = res.json as Record<string, unknown>
  expectThat(
    typeof body.access_token === 'string' && body.access_token !== '',
    'the token response for a request without scope has no access_token',
  )
  ctx.note(`granted without a scope parameter: ${JSON.stringify(body.scope ?? null)}`)
})

/**
 * The authorize checks of a valid request and its success redirect: the login page first, then
 * code and state, nonce, scope without openid or none, and the request by POST (the other rows
 * of catalogue/authorize.ts: authorize-validation.ts, authorize-session.ts).
 */
export const authorizeSuccessChecks = {
  'AUTHZ-01': AUTHZ_01,
  'AUTHZ-02': AUTHZ_02,
  'AUTHZ-09': AUTHZ_09,
  'AUTHZ-10': AUTHZ_10,
  'AUTHZ-12': AUTHZ_12,
  'AUTHZ-13': AUTHZ_13,
  'AUTHZ-19': AUTHZ_19,
} satisfies Partial<AreaChecks<typeof catalogue>>
