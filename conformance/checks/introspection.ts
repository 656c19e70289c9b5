import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { introspection as catalogue } from '../catalogue/introspection.ts'
import type { HttpResponse } from '../harness/http.ts'
import { oidc } from '../harness/oidc.ts'
import {
  about,
  expectActive,
  expectControl,
  expectEqual,
  expectInactive,
  expectJsonObject,
  expectNoTokenData,
  expectOAuthError,
  activeForTheCheck,
  revokedForTheCheck,
  expectScope,
  expectStatus,
  expectThat,
  scopeList,
  show,
  wrongMethod,
} from '../harness/expect.ts'
import {
  authorize,
  codeOf,
  expireTokens,
  idTokenOf,
  otherClient,
  probeBasic,
  refreshTokenOf,
  signIn,
  someAccessToken,
  type TokenSet,
  within,
} from '../harness/flows.ts'
import {
  credentials,
  endpointLabel,
  INTROSPECT,
  introspectRaw,
  redeemRaw,
  revokeRaw,
  userInfoRaw,
} from '../harness/requests.ts'
import { forgeries, verifyJwt } from '../harness/jwt.ts'
import { FORMAT_JUDGED_BY, isCompactJws } from '../harness/access-token.ts'

const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v)

/** RFC 7662 §2.2: token_type is the RFC 6749 §5.1 type; "access_token" is a known deviation. */
function checkTokenType(ctx: CheckContext, value: unknown): void {
  if (value === 'access_token') {
    ctx.note('WARN: token_type is "access_token"; RFC 7662 §2.2 means the RFC 6749 type, Bearer')
    return
  }
  expectThat(
    typeof value === 'string' && value.toLowerCase() === 'bearer',
    `token_type: expected "Bearer", got ${JSON.stringify(value)}`,
  )
}

/** How far exp - iat of an introspected token may be from the token response's expires_in. */
const LIFETIME_SLACK_S = 10

/**
 * What introspection of the set's access token must repeat: the verified JWT's claims, or, for a
 * token that is not a JWT (AT-01 and JWKS-04 judge its format), what the provider said besides
 * it: the token response's scope (RFC 6749 §5.1: omitted, the requested one), its expires_in, and
 * the ID token's sub (OIDC Core §2: the user the tokens were issued for).
 */
async function whatTheTokenSays(
  ctx: CheckContext,
  set: TokenSet,
): Promise<{
  scope: unknown
  sub: unknown
  exp?: unknown
  iat?: unknown
  expiresIn?: unknown
  from: { scope: string; sub: string }
}> {
  const main = ctx.target.clients.main
  if (isCompactJws(set.accessToken)) {
    const { payload } = await verifyJwt(ctx, set.accessToken, { audience: main.id })
    const from = { scope: "the token's scope claim", sub: "the token's sub" }
    return { scope: payload.scope, sub: payload.sub, exp: payload.exp, iat: payload.iat, from }
  }
  ctx.note(
    `the access token is not a JWT: introspection is compared with the token response and the ID token (${FORMAT_JUDGED_BY})`,
  )
  const idToken = set.idToken
  expectControl(
    idToken !== undefined,
    `the access token is not a JWT and the token response has no ID token, so the user it was issued for is unknown (${FORMAT_JUDGED_BY})`,
  )
  const { payload } = await verifyJwt(ctx, idToken, { audience: main.id })
  return {
    scope: set.scope,
    sub: payload.sub,
    expiresIn: set.body.expires_in,
    from: { scope: "the token response's scope", sub: "the ID token's sub" },
  }
}

const INTRO_01 = check(async (ctx) => {
  const main = ctx.target.clients.main
  const set = await signIn(ctx, { scope: 'openid profile offline_access' })
  const token = await whatTheTokenSays(ctx, set)
  const raw = expectActive(await introspectRaw(ctx, set.accessToken), 'an access token')
  const viaClient = await oidc.tokenIntrospection(set.auth.config, set.accessToken)
  for (const [what, body] of [
    ['introspection', raw],
    ['introspection through openid-client', viaClient as Record<string, unknown>],
  ] as const) {
    // INTERFACE.md §2.5: active, scope, client_id, token_type, exp, iat, sub, equal to the claims
    expectEqual(body.active, true, `${what}: active`)
    expectScope(body.scope, String(token.scope), `${what}: scope (${token.from.scope})`)
    expectEqual(body.client_id, main.id, `${what}: client_id`)
    checkTokenType(ctx, body.token_type)
    expectThat(isInt(body.exp), `${what}: exp must be an integer, got ${JSON.stringify(body.exp)}`)
    expectThat(isInt(body.iat), `${what}: iat must be an integer, got ${JSON.stringify(body.iat)}`)
    if (token.exp !== undefined) {
      expectEqual(body.exp, token.exp, `${what}: exp (the token's exp)`)
      expectEqual(body.iat, token.iat, `${what}: iat (the token's iat)`)
    } else if (typeof token.expiresIn === 'number' && isInt(body.exp) && isInt(body.iat)) {
      // RFC 6749 §5.1: expires_in is the lifetime in seconds from the response, which the
      // token was issued for; the issuing took at most a few seconds on a loaded machine
      const lifetime = (body.exp as number) - (body.iat as number)
      expectThat(
        Math.abs(lifetime - token.expiresIn) <= LIFETIME_SLACK_S,
        `${what}: exp - iat is ${lifetime} s, the token response's expires_in ${token.expiresIn}`,
      )
    }
    expectEqual(body.sub, token.sub, `${what}: sub (${token.from.sub})`)
  }
})

/**
 * INTRO-02's scope: RFC 7662 §2.2 and INTERFACE.md §2.5 ask for the scopes associated with the
 * token, the grant. The token response's scope says what the grant is (RFC 6749 §5.1; omitted:
 * the requested one), and the refresh token's introspection must say the same. A token response
 * whose scope leaves out what its own tokens show granted (openid with an ID token,
 * offline_access with a refresh token) does not say what the grant is: that deviation is the
 * token response's (CODE-01, TOK-02), one deviation, one failure. Then the introspection is
 * judged by what the grant is known to be: at least what the tokens show, nothing beyond the
 * request.
 */
function expectGrantScope(
  ctx: CheckContext,
  scope: unknown,
  set: TokenSet,
  requested: string,
): void {
  const what = 'refresh token introspection: scope (the original grant)'
  const stated = scopeList(set.scope)
  const shown = [
    ...(set.idToken ? ['openid'] : []),
    ...(set.refreshToken ? ['offline_access'] : []),
  ]
  const left = shown.filter((s) => !stated.includes(s))
  if (left.length === 0) {
    expectScope(scope, set.scope, what)
    return
  }
  ctx.note(
    `the token response's scope ${show(set.body.scope)} leaves out ${left.join(' and ')}, which its own tokens show granted, so it does not say what the grant is (CODE-01 and TOK-02 judge it): the refresh token's scope is judged by the request, ${show(requested)}`,
  )
  expectThat(typeof scope === 'string', `${what}: expected a scope string, got ${show(scope)}`)
  const got = scopeList(scope)
  const beyond = got.filter((s) => !scopeList(requested).includes(s))
  expectThat(
    beyond.length === 0,
    `${what}: ${show(scope)} holds ${beyond.join(' ')}, which was never requested (${show(requested)})`,
  )
  const missing = shown.filter((s) => !got.includes(s))
  expectThat(
    missing.length === 0,
    `${what}: ${show(scope)} leaves out ${missing.join(' and ')}, which the grant's own tokens show granted`,
  )
}

const INTRO_02 = check(async (ctx) => {
  const main = ctx.target.clients.main
  const requested = 'openid profile offline_access'
  const set = await signIn(ctx, { scope: requested, offline: true })
  const { sub } = await whatTheTokenSays(ctx, set)
  // INTERFACE.md §4.5 accepts both kinds, so introspection knows refresh tokens too (RFC 7662 §2.1)
  const body = expectActive(
    await introspectRaw(ctx, refreshTokenOf(set), { hint: 'refresh_token' }),
    'a refresh token',
  )
  expectEqual(body.client_id, main.id, 'refresh token introspection: client_id')
  expectGrantScope(ctx, body.scope, set, requested)
  expectEqual(body.sub, sub, 'refresh token introspection: sub')
  for (const claim of ['exp', 'iat'])
    expectThat(
      isInt(body[claim]),
      `refresh token introspection: ${claim} must be an integer, got ${JSON.stringify(body[claim])}`,
    )
  const plain = expectActive(
    await introspectRaw(ctx, refreshTokenOf(set)),
    'a refresh token without a hint',
  )
  expectEqual(plain.client_id, main.id, 'refresh token introspection without a hint: client_id')
})

/** Redeems a code twice; returns the access token of the first redemption. */
async function reuseCode(
  ctx: CheckContext,
): Promise<{ accessToken: string; reuse: () => Promise<HttpResponse> }> {
  // a replayed code: a session of its own, since the provider may revoke what it issued
  const auth = await authorize(ctx, { scope: 'openid offline_access', ownSession: true })
  const form = {
    code: codeOf(auth),
    verifier: auth.verifier,
    client: auth.client,
    redirectUri: auth.redirectUri,
  }
  const first = await redeemRaw(ctx, form)
  expectStatus(first, 200, 'first redemption of the code')
  const accessToken = String(expectJsonObject(first, 'token response').access_token)
  return { accessToken, reuse: () => redeemRaw(ctx, form) }
}

const INTRO_03 = check({ exclusive: true }, async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid offline_access' })
  const receivedAt = Date.now()
  // the positive control: the same token is active, so the refusals below are about what was
  // changed; an introspection that calls every token inactive shows nothing (INTRO-01 judges)
  activeForTheCheck(
    await introspectRaw(ctx, set.accessToken),
    'the genuine access token',
    'forged, revoked or expired tokens introspected inactive show nothing',
  )
  // each token that must be inactive is its own sub-case: every one called active is reported
  const inactive = async (what: string, token: string): Promise<void> =>
    ctx.subcase(`introspection of ${what}`, async () => {
      expectInactive(await introspectRaw(ctx, token), what)
    })
  for (const [what, token] of await forgeries(ctx, set.accessToken)) await inactive(what, token)
  // RFC 9068 §4: an ID token is not an access token, although both are JWTs of this issuer
  await inactive('the ID token', idTokenOf(set))

  // revoked on purpose: a session of its own
  const revoked = await signIn(ctx, {
    scope: 'openid offline_access',
    offline: true,
    ownSession: true,
  })
  // each revocation is done before its effect is looked at; its answer's form is REV-02's
  activeForTheCheck(
    await introspectRaw(ctx, revoked.accessToken),
    'an access token before revocation',
    'its inactivity after the revocation shows nothing',
  )
  revokedForTheCheck(ctx, await revokeRaw(ctx, revoked.accessToken), 'an access token')
  await inactive('a revoked access token', revoked.accessToken)
  activeForTheCheck(
    await introspectRaw(ctx, refreshTokenOf(revoked)),
    'a refresh token before revocation',
    'its inactivity after the revocation shows nothing',
  )
  revokedForTheCheck(ctx, await revokeRaw(ctx, refreshTokenOf(revoked)), 'a refresh token')
  await inactive('a revoked refresh token', refreshTokenOf(revoked))

  const reused = await reuseCode(ctx)
  expectStatus(await reused.reuse(), 400, 'second redemption of the same code')
  const res = await introspectRaw(ctx, reused.accessToken)
  // RFC 6749 §4.1.2 SHOULD revoke; ARCHITECTURE.md decides it does
  if ((res.json as { active?: unknown } | undefined)?.active === true)
    ctx.note('the access token of a reused code is still active (CODE-03 reports it)')
  else expectInactive(res, 'the access token of a reused code')

  const expiring = { accessToken: set.accessToken, expiresIn: set.body.expires_in, receivedAt }
  // RFC 7662 §2.2: "If the introspection call is properly authorized but the token is not active
  // [...] the authorization server MUST return an introspection response with the "active" field
  // set to "false"" (a token is active until it expires)
  if (await expireTokens(ctx, 'INTRO-03', expiring, 'an expired access token'))
    expectInactive(await introspectRaw(ctx, set.accessToken), 'an expired access token')
})

const INTRO_04 = check(async (ctx) => {
  // the token goes with wrong secrets: a session of its own
  const { token, client } = await someAccessToken(ctx, { ownSession: true })
  // RFC 7662 §2.3: "If the protected resource uses OAuth 2.0 client credentials to
  // authenticate to the introspection endpoint and its credentials are invalid, the
  // authorization server responds with an HTTP 401 (Unauthorized)": 401 where a secret was sent
  // and is wrong. A request that sends no secret uses no credentials to be invalid: RFC 6749
  // §5.2 governs it ("no client authentication included" is invalid_client, whose 401 is a MAY
  // without an Authorization header), so 400 or 401
  const unauthenticated = [400, 401]
  const cases: [string, Record<string, string>, number | number[]][] = [
    ['no client credentials', { token }, unauthenticated],
    ['a client_id without a secret', { token, client_id: client.id }, unauthenticated],
    [
      'a wrong client secret',
      { token, client_id: client.id, client_secret: `${client.secret}x` },
      401,
    ],
    [
      'an unknown client',
      { token, client_id: 'no-such-client', client_secret: client.secret },
      401,
    ],
  ]
  // the positive control first (issue 29: a negative check proves its positive control first):
  // the same request with the right secret introspects the fresh token active. Only then do the
  // refusals below show the credentials refused; an endpoint that answers every request without
  // token data, or calls every token inactive, shows no difference between right and wrong
  const control = await introspectRaw(ctx, token, { client })
  // each way of failing to authenticate is its own sub-case: every one let through is reported
  for (const [what, form, status] of cases)
    await ctx.subcase(`introspection with ${what}`, async () => {
      // RFC 7662 §2.1: the endpoint MUST require authorization; INTERFACE.md §4.4: client_secret_post
      expectNoTokenData(
        await introspectRaw(ctx, token, { form }),
        `introspection with ${what}`,
        status,
      )
    })
  await probeBasic(ctx, INTROSPECT, token, client)
  // a refusal of the right secret, or a fresh token called inactive: the refusals above prove
  // nothing (inconclusive, after any deviation they found)
  activeForTheCheck(
    control,
    'the token with the right secret',
    'the refusals without valid credentials cannot be told from an endpoint that shows no token to anyone',
  )
})

const INTRO_05 = check(async (ctx) => {
  const main = ctx.target.clients.main
  // the sub-cases are independent: each is run and each deviation reported
  await ctx.subcase('introspection without a token', async () => {
    const missing = await ctx.http.postForm(INTROSPECT, credentials(main))
    // RFC 7662 §2.1: token is REQUIRED; a request without it is invalid_request (RFC 6749 §5.2)
    about('introspection without a token', () => expectOAuthError(missing, 400, 'invalid_request'))
  })
  const wrong = `GET ${endpointLabel(ctx.target, 'introspection_endpoint')} (RFC 7662 §2.1: POST)`
  await ctx.subcase(wrong, async () => {
    // the MUST is a refusal in the JSON error shape (never 2xx, never 5xx); RFC 9110 lets it be
    // 404 as well as 400 or 405 (405 is a SHOULD, noted)
    // the request a POST would be, as a query (the client authenticated, a token named), so
    // only the method can be refused; RFC 7662 §2.2: an unknown token is active false, no error
    const get = await ctx.http.get(INTROSPECT, {
      token: 'not-a-token-of-this-server',
      ...credentials(main),
    })
    wrongMethod(ctx, get, wrong)
  })

  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true })
  const rt = refreshTokenOf(set)
  // RFC 7662 §2.1: a wrong hint must not stop the server from finding the token. A token that
  // is inactive even without a hint proves nothing about hints (INTRO-01/02 judge that)
  const tokens: [string, string, string][] = [
    ['the access token', set.accessToken, 'refresh_token'],
    ['the refresh token', rt, 'access_token'],
  ]
  let judged = 0
  for (const [name, token, otherType] of tokens) {
    const plain = await introspectRaw(ctx, token)
    if (plain.status !== 200 || (plain.json as { active?: unknown } | null)?.active !== true) {
      ctx.note(`${name} is not active even without a hint, so its hints were not judged`)
      continue
    }
    judged++
    for (const [what, hint] of [
      [
        `${name} hinted as ${otherType === 'refresh_token' ? 'a refresh' : 'an access'} token`,
        otherType,
      ],
      [`${name} with an unknown hint`, 'no_such_hint'],
    ] as const) {
      const label = `introspection of ${what}`
      await ctx.subcase(label, async () => {
        expectActive(await introspectRaw(ctx, token, { hint }), what)
      })
    }
  }
  // nothing was asserted about hints: that is no pass (a failure above still stands)
  if (judged === 0)
    ctx.skip('neither token introspects active without a hint, so no hint could be judged')
})

const INTRO_06 = check(async (ctx) => {
  const other = otherClient(ctx)
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true })
  const rt = refreshTokenOf(set)
  for (const [what, token] of [
    ['the access token', set.accessToken],
    ['the refresh token', rt],
  ] as const) {
    // ARCHITECTURE.md: a client sees only its own tokens (RFC 7662 §4 leaves the policy open)
    expectInactive(await introspectRaw(ctx, token, { client: other }), `${what} of another client`)
    expectActive(await introspectRaw(ctx, token), `${what} by its own client`)
  }
})

const INTRO_07 = check(async (ctx) => {
  // revoked on purpose: a session of its own
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, ownSession: true })
  const rt = refreshTokenOf(set)
  for (const token of [set.accessToken, set.accessToken, rt]) {
    const res = await introspectRaw(ctx, token)
    // the positive control: a fresh token introspects active, so an inactive answer after the
    // revocation is the revocation's (INTRO-01 judges a fresh token called inactive)
    activeForTheCheck(res, 'a fresh token', 'whether a revocation reaches it cannot be shown')
    // RFC 7662 §4 (hardening): an introspection answer is not to be stored
    if (!/no-store/i.test(res.headers.get('cache-control') ?? ''))
      ctx.note('an introspection answer lacks Cache-Control: no-store')
  }
  const inactive = async (token: string): Promise<boolean> => {
    const body = (await introspectRaw(ctx, token)).json as { active?: unknown } | undefined
    return body?.active === false
  }
  // RFC 7662 §4: a cached answer must not outlive a revocation; each token is its own sub-case
  for (const [kind, token] of [
    ['access', set.accessToken],
    ['refresh', rt],
  ] as const) {
    const what = `the revoked ${kind} token`
    await ctx.subcase(what, async () => {
      revokedForTheCheck(ctx, await revokeRaw(ctx, token), `the ${kind} token`)
      expectThat(
        await within(1000, () => inactive(token)),
        `${what}: still introspects active after 1 s`,
      )
    })
  }
  const reused = await reuseCode(ctx)
  for (let i = 0; i < 2; i++)
    activeForTheCheck(
      await introspectRaw(ctx, reused.accessToken),
      'the access token of a code',
      'whether the code replay reaches introspection cannot be shown',
    )
  // user-info's answer before the replay: only a token it accepted then can show a revocation
  const uiLive = (await userInfoRaw(ctx, reused.accessToken)).status === 200
  expectStatus(await reused.reuse(), 400, 'second redemption of the same code')
  // RFC 6749 §4.1.2: the server "SHOULD revoke (when possible) all tokens previously issued
  // based on that authorization code". Whether it does is that SHOULD, CODE-03's at its level;
  // this MUST check expects that a revocation by replay, like any other, reaches introspection
  // within 1 s. Still active then, user-info tells the two apart: refused there, the token was
  // revoked and introspection is stale (this check's failure); accepted, nothing was revoked
  if (await within(1000, () => inactive(reused.accessToken))) return
  if (!uiLive) {
    ctx.note(
      'the access token of a reused code still introspects active after 1 s; user-info did not accept it before the replay, so whether the replay revoked it cannot be told (RFC 6749 §4.1.2 SHOULD: CODE-03)',
    )
    return
  }
  const ui = await userInfoRaw(ctx, reused.accessToken)
  expectThat(
    ui.status !== 401,
    'the access token of a reused code: user-info refuses it (401), so the replay revoked it, yet it still introspects active after 1 s',
  )
  ctx.note(
    `the access token of a reused code still introspects active after 1 s and user-info answers ${ui.status}: the replay revoked nothing, which RFC 6749 §4.1.2 says it SHOULD do (CODE-03 judges it at that level)`,
  )
})

/** The introspection checks, one per row of catalogue/introspection.ts. */
export const introspectionChecks: AreaChecks<typeof catalogue> = {
  'INTRO-01': INTRO_01,
  'INTRO-02': INTRO_02,
  'INTRO-03': INTRO_03,
  'INTRO-04': INTRO_04,
  'INTRO-05': INTRO_05,
  'INTRO-06': INTRO_06,
  'INTRO-07': INTRO_07,
}
