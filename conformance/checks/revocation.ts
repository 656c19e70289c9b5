import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { revocation as catalogue } from '../catalogue/revocation.ts'
import { REVOKED_REFRESH_TOKEN } from '../threats.ts'
import type { HttpResponse } from '../harness/http.ts'
import {
  about,
  activeForTheCheck,
  aside,
  expectActive,
  expectControl,
  expectBearerChallenge,
  expectInactive,
  expectJsonObject,
  expectNoTokenData,
  expectOAuthError,
  expectRevoked,
  expectStatus,
  expectThat,
  introspectsActive,
  revokedForTheCheck,
  wrongMethod,
} from '../harness/expect.ts'
import {
  expireTokens,
  idTokenOf,
  nextRefreshToken,
  otherClient,
  probeBasic,
  refreshTokenOf,
  signIn,
  someAccessToken,
} from '../harness/flows.ts'
import {
  credentials,
  endpointLabel,
  introspectRaw,
  refreshRaw,
  REVOKE,
  revokeRaw,
  userInfoRaw,
} from '../harness/requests.ts'

/** Whether the token introspects active (any other answer counts as not active). */
async function isActive(ctx: CheckContext, token: string): Promise<boolean> {
  return introspectsActive(await introspectRaw(ctx, token))
}

// every check here revokes (or tries to revoke) its tokens on purpose: their sign-ins are
// sessions of their own (AuthorizeOptions.ownSession), since a provider may revoke the whole
// grant with a refresh token (RFC 7009 §2.1) and its grant may be the session's

const REV_01 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, ownSession: true })
  // the positive controls: the token works at each place before the revocation, so a refusal
  // after it is the revocation's effect (a token refused before it: UI-01 and INTRO-01 judge)
  const active = await introspectRaw(ctx, set.accessToken)
  const introspected = introspectsActive(active)
  const served = (await userInfoRaw(ctx, set.accessToken)).status === 200
  expectControl(
    introspected || served,
    `the access token neither introspected active (HTTP ${active.status}) nor was accepted by user-info before revocation, so whether revoking it makes it inactive cannot be shown`,
  )
  const res = await revokeRaw(ctx, set.accessToken, { hint: 'access_token' })
  // RFC 7009 §2.2; INTERFACE.md §4.5: 200 with a message (its form judged, a failure aside from
  // the effect, which the sub-cases below still show)
  await ctx.subcase('revocation of the access token', () =>
    aside('precondition', () => expectRevoked(res, 'the access token')),
  )
  // a revocation refused leaves its effect unshown
  expectControl(
    res.status === 200,
    `the revocation of the access token was answered HTTP ${res.status}, not 200, so its effect cannot be shown`,
  )
  // INTERFACE.md §3: revoked means inactive, for introspection and for user-info alike; each
  // place whose control held is a sub-case
  if (introspected)
    await ctx.subcase('introspection of the revoked access token', async () => {
      expectInactive(await introspectRaw(ctx, set.accessToken), 'the revoked access token')
    })
  if (served)
    await ctx.subcase('user-info with the revoked access token', async () => {
      expectBearerChallenge(
        await userInfoRaw(ctx, set.accessToken),
        401,
        'invalid_token',
        'user-info with the revoked access token',
      )
    })
  // what a failed control could not show leaves the check inconclusive, after what it did show
  expectControl(
    introspected && served,
    introspected
      ? 'user-info refused the access token before revocation, so whether the revocation reaches user-info cannot be shown'
      : 'the access token introspected inactive before revocation, so whether the revocation reaches introspection cannot be shown',
  )
})

/** REV-02's part that judges the revocation answer itself (INTERFACE.md §4.5), no threat's. */
const REVOCATION_ANSWER = 'the revocation answer'

const REV_02 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, ownSession: true })
  const rt = refreshTokenOf(set)
  const active = await introspectRaw(ctx, rt)
  aside('precondition', () => expectActive(active, 'the refresh token before revocation'))
  const res = await revokeRaw(ctx, rt, { hint: 'refresh_token' })
  // the answer and what it did are sub-cases: a malformed answer hides neither effect
  // (its status and body are the interface's answer, no threat's subject: threats.ts parts)
  await ctx.subcase(
    'revocation of the refresh token',
    () =>
      // INTERFACE.md §4.5: "Returns HTTP 200 with JSON containing a message string"
      expectRevoked(res, 'the refresh token'),
    { subject: REVOCATION_ANSWER },
  )
  // RFC 7009 §2.1: the token is invalidated at once; INTERFACE.md §7: invalid_grant
  await ctx.subcase(
    'refresh with the revoked refresh token',
    async () => {
      const refreshed = await refreshRaw(ctx, rt)
      about('refresh with the revoked refresh token', () =>
        expectOAuthError(refreshed, 400, 'invalid_grant'),
      )
    },
    { subject: REVOKED_REFRESH_TOKEN },
  )
  await ctx.subcase(
    'introspection of the revoked refresh token',
    async () => {
      expectInactive(await introspectRaw(ctx, rt), 'the revoked refresh token')
    },
    { subject: REVOKED_REFRESH_TOKEN },
  )
})

const REV_03 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, ownSession: true })
  const rt = refreshTokenOf(set)
  const minted = await refreshRaw(ctx, rt)
  // the grant's tokens work and the refresh token is revoked before the subject (a precondition)
  const refreshed = aside('precondition', () => {
    expectStatus(minted, 200, 'refresh')
    return String(expectJsonObject(minted, 'refresh response').access_token)
  })
  const grant: [string, string][] = [
    ['the access token issued with the refresh token', set.accessToken],
    ['an access token minted from the refresh token', refreshed],
  ]
  // the positive controls: each token works at each place before the revocation, so a refusal
  // after it is the revocation's effect; a place whose control failed is not judged for it
  const shown: { what: string; token: string; introspected: boolean; served: boolean }[] = []
  for (const [what, token] of grant) {
    const active = await introspectRaw(ctx, token)
    shown.push({
      what,
      token,
      introspected: introspectsActive(active),
      served: (await userInfoRaw(ctx, token)).status === 200,
    })
  }
  // the refresh token of the grant as it stands: the one the refresh rotated in, if it did
  // (RFC 6749 §6: the client discards the old one)
  const current = nextRefreshToken(expectJsonObject(minted, 'refresh response'), rt)
  revokedForTheCheck(
    ctx,
    await revokeRaw(ctx, current, { hint: 'refresh_token' }),
    'the refresh token',
  )
  // RFC 7009 §2.1: revoking a refresh token SHOULD also invalidate the grant's access tokens;
  // each token and each place is a sub-case: every one still honoured is reported
  for (const { what, token, introspected, served } of shown) {
    if (introspected)
      await ctx.subcase(`introspection of ${what}, after revoking it`, async () => {
        expectInactive(await introspectRaw(ctx, token), `${what}, after revoking it`)
      })
    if (served)
      await ctx.subcase(`user-info with ${what}, after revoking it`, async () => {
        expectBearerChallenge(
          await userInfoRaw(ctx, token),
          401,
          'invalid_token',
          `user-info with ${what}, after revoking it`,
        )
      })
  }
  // what a failed control could not show leaves the check inconclusive, after what it did show
  const unshown = shown.flatMap(({ what, introspected, served }) => [
    ...(introspected ? [] : [`${what} introspected inactive`]),
    ...(served ? [] : [`user-info refused ${what}`]),
  ])
  expectControl(
    unshown.length === 0,
    `before the revocation ${unshown.join(', ')}, so whether revoking the refresh token reaches ${unshown.length > 1 ? 'them' : 'it'} cannot be shown`,
  )
  // RFC 7009 §2.1 (MAY): revoking an access token may take its refresh token along
  const second = await signIn(ctx, {
    scope: 'openid offline_access',
    offline: true,
    ownSession: true,
  })
  const res = await revokeRaw(ctx, second.accessToken)
  if (res.status !== 200) {
    ctx.note(
      `revoking an access token was answered HTTP ${res.status}: its refresh token not examined`,
    )
    return
  }
  ctx.note(
    (await isActive(ctx, refreshTokenOf(second)))
      ? 'revoking an access token leaves its refresh token active'
      : 'revoking an access token also revoked its refresh token',
  )
})

const REV_04 = check({ exclusive: true }, async (ctx) => {
  // the sub-cases are independent: each is run and each deviation reported
  const revoked = (what: string, token: string) =>
    ctx.subcase(`revocation of ${what}`, async () => {
      expectRevoked(await revokeRaw(ctx, token), what)
    })
  // INTERFACE.md §3: inactive or unknown tokens get the same 200, so tokens cannot be probed
  await revoked('a garbage token', 'not-a-token-0123456789')
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, ownSession: true })
  const rt = refreshTokenOf(set)
  const minted = await refreshRaw(ctx, rt)
  expectStatus(minted, 200, 'refresh')
  const body = expectJsonObject(minted, 'refresh response')
  const other = String(body.access_token)
  const receivedAt = Date.now()
  for (const n of [1, 2]) {
    await revoked(`the access token (time ${n})`, set.accessToken)
    await revoked(`the refresh token (time ${n})`, rt)
  }
  await ctx.subcase('introspection of the revoked refresh token', async () => {
    expectInactive(await introspectRaw(ctx, rt), 'the revoked refresh token')
  })
  const expiring = { accessToken: other, expiresIn: body.expires_in, receivedAt }
  if (await expireTokens(ctx, 'REV-04', expiring, 'an expired token'))
    await revoked('an expired access token', other)
})

const REV_05 = check(async (ctx) => {
  const { token, client } = await someAccessToken(ctx, { ownSession: true })
  const cases: [string, Record<string, string>][] = [
    ['no client credentials', { token }],
    ['a client_id without a secret', { token, client_id: client.id }],
    ['a wrong client secret', { token, client_id: client.id, client_secret: `${client.secret}x` }],
  ]
  // the positive control of "revokes nothing": a token still active after a refused revocation
  // shows it was not revoked only if it introspected active before it. A token the introspection
  // endpoint already calls inactive (INTRO-01 judges that) shows nothing about the revocations
  const before = await introspectRaw(ctx, token, { client })
  const shown = introspectsActive(before)
  // each way of failing to authenticate is its own sub-case: every one let through is reported
  for (const [what, form] of cases)
    await ctx.subcase(`revocation with ${what}`, async () => {
      // RFC 7009 §2.1: the client MUST authenticate; §2.2.1 defers the error response to RFC
      // 6749 §5.2: invalid_client, whose 401 is a MAY ("The authorization server MAY return an
      // HTTP 401") unless "the client attempted to authenticate via the "Authorization" request
      // header field" (then MUST: probeBasic below). These carry none: 400 or 401
      expectNoTokenData(
        await revokeRaw(ctx, token, { form }),
        `revocation with ${what}`,
        [400, 401],
      )
      if (shown)
        expectActive(
          await introspectRaw(ctx, token, { client }),
          `the token after a revocation with ${what}`,
        )
    })
  // last, because a server that honours Basic revokes the token
  await probeBasic(ctx, REVOKE, token, client)
  // what the control could not show leaves the check inconclusive, after what it did show
  activeForTheCheck(
    before,
    'the token before any revocation',
    'whether a revocation without valid client credentials revoked nothing cannot be shown by introspection',
  )
})

const REV_06 = check(async (ctx) => {
  const other = otherClient(ctx)
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, ownSession: true })
  const rt = refreshTokenOf(set)
  const tokens = [
    ['access token', set.accessToken],
    ['refresh token', rt],
  ] as const
  // the positive control: a token still active after another client's revocation shows the
  // revocation refused only if it was active before it. A token the introspection endpoint
  // already calls inactive (INTRO-01/02 judge that) shows nothing about the revocation
  const unshown: string[] = []
  for (const [what, token] of tokens) {
    const before = (await introspectRaw(ctx, token)).json as { active?: unknown } | undefined
    if (before?.active !== true) unshown.push(what)
  }
  // each token is its own sub-case, and for each the effect comes before the answer's form: an
  // answer in the wrong shape hides neither token's fate
  for (const [what, token] of tokens) {
    const res = await revokeRaw(ctx, token, { client: other })
    // RFC 7009 §2.1: the server MUST verify the token was issued to the requesting client
    if (!unshown.includes(what))
      await ctx.subcase(
        `introspection of the ${what} after another client revoked it`,
        async () => {
          expectActive(
            await introspectRaw(ctx, token),
            `the ${what} after another client revoked it`,
          )
        },
      )
    await ctx.subcase(`revocation of another client's ${what}`, () => {
      // ARCHITECTURE.md: a silent 200 (INTERFACE.md §4.5: with a message); RFC 7009 §2.1 also
      // allows an error
      if (res.status === 200) expectRevoked(res, `another client's ${what}`)
      else
        about(`revocation of another client's ${what}`, () =>
          expectOAuthError(res, [400, 401, 403]),
        )
    })
  }
  await ctx.subcase('refresh after another client revoked it', async () => {
    expectStatus(await refreshRaw(ctx, rt), 200, 'refresh after another client revoked it')
  })
  // what the control could not show leaves the check inconclusive, after whatever it did show
  expectControl(
    unshown.length === 0,
    `the ${unshown.join(' and the ')} introspected inactive before any revocation, so whether another client's revocation left ${unshown.length > 1 ? 'them' : 'it'} active cannot be shown by introspection`,
  )
})

/**
 * A revocation REV-07 expects accepted (RFC 7009 §2.1: a hint is ignored, §2.2.1: a kind not
 * revoked is a no-op): HTTP 200 is its subject; the answer's form is REV-02's, noted here so one
 * deviation is one failure (blind round 4, S8).
 */
function acceptedShapeAside(ctx: CheckContext, res: HttpResponse, what: string): void {
  expectStatus(res, 200, `revocation of ${what}`)
  const body = res.json as { message?: unknown } | undefined
  if (typeof body?.message !== 'string' || body.message === '')
    ctx.note(
      `the revocation of ${what} answered 200 without a JSON message (INTERFACE.md §4.5; judged by REV-02)`,
    )
}

const REV_07 = check(async (ctx) => {
  const main = ctx.target.clients.main
  // the sub-cases are independent: each is run and each deviation reported
  const none = 'revocation without a token'
  await ctx.subcase(none, async () => {
    const missing = await ctx.http.postForm(REVOKE, credentials(main))
    // RFC 7009 §2.1: token is REQUIRED
    about(none, () => expectOAuthError(missing, 400, 'invalid_request'))
  })
  const wrong = `GET ${endpointLabel(ctx.target, 'revocation_endpoint')} (RFC 7009 §2.1: POST)`
  await ctx.subcase(wrong, async () => {
    // the request a POST would be, as a query (the client authenticated, a token named), so
    // only the method can be refused; RFC 7009 §2.2: an invalid token is no reason to refuse
    const get = await ctx.http.get(REVOKE, {
      token: 'not-a-token-of-this-server',
      ...credentials(main),
    })
    // the MUST is a refusal in the JSON error shape (never 2xx, never 5xx); RFC 9110 lets it be
    // 404 as well as 400 or 405 (405 is a SHOULD, noted)
    wrongMethod(ctx, get, wrong)
  })

  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, ownSession: true })
  // the positive control of each effect judged by introspection: a token inactive afterwards
  // shows a revocation, and one still active shows none, only if it introspected active before
  // any revocation. Tokens the introspection endpoint already calls inactive (INTRO-01/02 judge
  // that) show nothing about these revocations (blind round 4, S3)
  const unshown: string[] = []
  const accessActive = await isActive(ctx, set.accessToken)
  if (!accessActive) unshown.push('the access token')
  const refreshActive = await isActive(ctx, refreshTokenOf(set))
  if (!refreshActive) unshown.push('the refresh token')
  await ctx.subcase('an ID token', async () => {
    const idRes = await revokeRaw(ctx, idTokenOf(set))
    // RFC 7009 §2.2.1: a kind the server does not revoke is a no-op or unsupported_token_type
    if (idRes.status === 200) acceptedShapeAside(ctx, idRes, 'the ID token')
    else
      about('revocation of the ID token', () =>
        expectOAuthError(idRes, 400, 'unsupported_token_type'),
      )
    if (accessActive)
      expectThat(
        await isActive(ctx, set.accessToken),
        'revoking the ID token revoked the access token of the same grant',
      )
  })
  // RFC 7009 §2.1: an unknown hint is ignored, and the server searches every kind
  await ctx.subcase('an unknown hint', async () => {
    acceptedShapeAside(
      ctx,
      await revokeRaw(ctx, set.accessToken, { hint: 'no_such_hint' }),
      'the access token with hint no_such_hint',
    )
    if (accessActive)
      expectInactive(
        await introspectRaw(ctx, set.accessToken),
        'the access token revoked with hint no_such_hint',
      )
  })
  await ctx.subcase('the wrong hint', async () => {
    acceptedShapeAside(
      ctx,
      await revokeRaw(ctx, refreshTokenOf(set), { hint: 'access_token' }),
      'the refresh token hinted as an access token',
    )
    if (refreshActive)
      expectInactive(
        await introspectRaw(ctx, refreshTokenOf(set)),
        'the refresh token revoked with the wrong hint',
      )
  })
  // what the control could not show leaves the check inconclusive, after what it did show
  expectControl(
    unshown.length === 0,
    `introspection before any revocation: ${unshown.join(' and ')} did not introspect active, so what the revocations did to ${unshown.length > 1 ? 'them' : 'it'} cannot be shown by introspection`,
  )
})

/** The revocation checks, one per row of catalogue/revocation.ts. */
export const revocationChecks: AreaChecks<typeof catalogue> = {
  'REV-01': REV_01,
  'REV-02': REV_02,
  'REV-03': REV_03,
  'REV-04': REV_04,
  'REV-05': REV_05,
  'REV-06': REV_06,
  'REV-07': REV_07,
}
