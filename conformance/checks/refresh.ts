import { setTimeout as sleep } from 'node:timers/promises'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { refresh as catalogue } from '../catalogue/refresh.ts'
import { oidc } from '../harness/oidc.ts'
import {
  atShould,
  expectBearerLifetime,
  about,
  aside,
  expectEqual,
  expectJsonObject,
  expectNoStore,
  expectOAuthError,
  ControlFailure,
  expectControl,
  revokedForTheCheck,
  expectScope,
  expectStatus,
  expectThat,
} from '../harness/expect.ts'
import {
  authorize,
  codeOf,
  expectGotPast,
  idTokenOf,
  nextRefreshToken,
  otherClient,
  redeemWithClient,
  refreshTokenOf,
  signIn,
  type TokenSet,
} from '../harness/flows.ts'
import { redeemRaw, refreshRaw, revokeRaw, TOKEN } from '../harness/requests.ts'
import { logoutUrl } from '../harness/logout.ts'
import { verifyJwt } from '../harness/jwt.ts'
import { accessTokenFacts } from '../harness/access-token.ts'
import { expectOfflineGranted } from '../harness/offline.ts'

/** The grant of RT-04/RT-05: every user scope plus a custom one. */
const FULL = 'openid profile email offline_access read:documents'
const NARROW = 'openid read:documents'

/**
 * The access token's scope claim, verified as an RS256 access token of the main client; a token
 * that is not a JWT is read through introspection (its format is AT-01's subject).
 */
async function accessTokenScope(ctx: CheckContext, token: string): Promise<unknown> {
  const { claims } = await accessTokenFacts(ctx, token, { audience: ctx.target.clients.main.id })
  return claims.scope
}

/** A 200 refresh response body, with what every refresh response must hold. */
function refreshBody(res: Awaited<ReturnType<typeof refreshRaw>>, what: string) {
  expectStatus(res, 200, what)
  const body = expectJsonObject(res, what)
  expectThat(
    typeof body.access_token === 'string' && body.access_token !== '',
    `${what}: no access_token in ${JSON.stringify(Object.keys(body))}`,
  )
  return body as Record<string, unknown> & { access_token: string }
}

const RT_01 = check(async (ctx) => {
  // offline_access granted → a refresh token (MUST: INTERFACE.md §2.1, "enables refresh token
  // issuance"); judged first, so the SHOULD below, when it fails, leaves it judged
  const offline = await signIn(ctx, { scope: 'openid offline_access', offline: true })
  // granted: offline_access in the scope, or a refresh token that works (a scope member that
  // leaves it out is TOK-02's deviation, not this check's)
  const note = await expectOfflineGranted(
    offline,
    (rt) => refreshRaw(ctx, rt),
    'offline_access was requested but not granted',
  )
  if (note) ctx.note(note)
  refreshTokenOf(offline)
  const plain = await signIn(ctx, { scope: 'openid' })
  // without offline_access, no refresh token at SHOULD only: OIDC Core §11 "The use of Refresh
  // Tokens is not exclusive to the offline_access use case. The Authorization Server MAY grant
  // Refresh Tokens in other contexts that are beyond the scope of this specification."
  atShould(() =>
    expectThat(
      plain.refreshToken === undefined,
      'a refresh_token was issued for scope "openid", which does not include offline_access (OIDC Core §11 lets the server grant refresh tokens beyond offline_access: a warning)',
    ),
  )
})

const RT_02 = check(async (ctx) => {
  // authorize sends prompt=consent with offline_access when asked (`offline`, OIDC Core §11). Not named in
  // params, so the request may be replayed with the user's session: a replay that reaches the
  // client is the "no consent screen" case, and one that meets a consent page goes to the
  // browser, where the page below is answered
  const auth = await authorize(ctx, { scope: 'openid offline_access', offline: true })
  // a harness bug, never the target's: inconclusive
  if (new URL(auth.url).searchParams.get('prompt') !== 'consent')
    throw new Error('the harness sent no prompt=consent')
  // a page the driver could not answer (a consent page it does not recognise): inconclusive
  expectGotPast(auth)
  let callback = auth.callback
  if (!callback) {
    // OIDC Core §11: the OP may show a consent screen for offline access; accept it
    const page = auth.outcome.page
    const consent = page
      .locator(
        'button[value=allow], button[value=accept], button:has-text("Allow"), button:has-text("Accept"), button:has-text("Continue")',
      )
      .first()
    expectThat(
      (await consent.count()) > 0,
      `prompt=consent with offline_access neither redirected back nor showed a consent form (page at ${page.url()})`,
    )
    await consent.click()
    await page.waitForURL((u) => u.toString().startsWith(auth.redirectUri), { timeout: 10_000 })
    callback = new URL(page.url())
    ctx.note('a consent screen was shown for offline_access and accepted')
  } else if (
    auth.via === 'browser' &&
    auth.outcome.interactions?.some((i) => /^consent\b/.test(i))
  ) {
    ctx.note(
      `a consent screen was shown for offline_access and accepted (${auth.outcome.interactions.join('; ')})`,
    )
  } else {
    ctx.note(
      'no consent screen was shown: offline access is pre-consented for this client (OIDC Core §11 allows other conditions)',
    )
  }
  // OIDC Core §11: prompt=consent is how an RP asks for offline access; it must not be an error
  codeOf({ ...auth, callback })
  const tokens = await redeemWithClient({ ...auth, callback })
  // granted: offline_access in the scope, or a refresh token that works (a scope member that
  // leaves it out is TOK-02's deviation, not this check's)
  const note = await expectOfflineGranted(
    { scope: tokens.scope, refreshToken: tokens.refresh_token },
    (rt) => refreshRaw(ctx, rt, { client: auth.client }),
    'prompt=consent: offline_access was not granted',
  )
  if (note) ctx.note(note)
  expectThat(
    typeof tokens.refresh_token === 'string' && tokens.refresh_token !== '',
    'prompt=consent with offline_access: no refresh_token in the token response',
  )
})

const RT_03 = check(async (ctx) => {
  // it presents the refresh token again after a refresh on purpose, which a rotating server
  // takes for a stolen token's reuse and may answer by revoking the grant and the session (RFC
  // 9700 §4.14.2): a session of its own
  const set = await signIn(ctx, {
    scope: 'openid profile offline_access',
    offline: true,
    ownSession: true,
  })
  const rt = refreshTokenOf(set)
  const main = ctx.target.clients.main
  const original = await accessTokenFacts(ctx, set.accessToken, { audience: main.id })

  const first = await oidc.refreshTokenGrant(set.auth.config, rt)
  // the parts of the response, the refreshed token and the reuse of the refresh token are
  // sub-cases: one deviation (a refresh_token in the response, a narrower scope) hides none of
  // the others, nor the reuse that is this check's subject
  // INTERFACE.md §4.2: refresh_token grant answers access_token, token_type, expires_in, scope
  const response = 'the refresh response'
  await ctx.subcase(response, () => {
    expectThat(first.access_token !== set.accessToken, 'the refresh returned the old access token')
    expectBearerLifetime(first)
  })
  const scope = 'scope of the refresh response (the original grant)'
  await ctx.subcase(scope, () => expectScope(first.scope, set.scope, scope))
  // INTERFACE.md §2.2: the refresh_token grant returns no new refresh token
  const noRefreshToken = 'refresh_token in the refresh response'
  await ctx.subcase(noRefreshToken, () =>
    expectThat(
      first.refresh_token === undefined,
      `${noRefreshToken}: the refresh response carries a refresh_token, which INTERFACE.md §2.2 rules out`,
    ),
  )
  if (first.id_token !== undefined) {
    const idToken = first.id_token
    await ctx.subcase('id_token of the refresh response', () =>
      compareRefreshedIdToken(ctx, set, idToken),
    )
  }

  let renewed: Awaited<ReturnType<typeof accessTokenFacts>> | undefined
  await ctx.subcase('the refreshed access token', async () => {
    renewed = await accessTokenFacts(ctx, first.access_token, { audience: main.id })
  })
  if (renewed) {
    const payload = renewed.claims
    const sub = 'sub of the refreshed access token'
    await ctx.subcase(sub, () => expectEqual(payload.sub, original.claims.sub, sub))
    const claim = 'scope claim of the refreshed access token'
    await ctx.subcase(claim, () => expectScope(payload.scope, set.scope, claim))
  }

  // RFC 6749 §6: without rotation, the same refresh token keeps working
  const second = 'second refresh with the same refresh token'
  const again = await refreshRaw(ctx, rt)
  // RFC 6749 §5.1: token responses MUST NOT be cached
  await ctx.subcase('refresh response', () => expectNoStore(again, 'refresh response'))
  const body = refreshBody(again, second)
  await ctx.subcase(second, () => {
    expectThat(
      body.access_token !== first.access_token && body.access_token !== set.accessToken,
      `${second}: returned an access token already issued`,
    )
    expectThat(!('refresh_token' in body), `${second}: the response carries a refresh_token`)
    expectThat(
      !('id_token' in body) || typeof body.id_token === 'string',
      `${second}: id_token in the response is not a string`,
    )
  })
})

/** OIDC Core §12.2: an ID token from a refresh keeps iss, sub, aud and auth_time. */
async function compareRefreshedIdToken(
  ctx: CheckContext,
  set: TokenSet,
  idToken: string,
): Promise<void> {
  ctx.note('the refresh response carries an id_token (OIDC Core §12.2 allows it)')
  const main = ctx.target.clients.main
  const before = (await verifyJwt(ctx, idTokenOf(set), { audience: main.id })).payload
  const after = (await verifyJwt(ctx, idToken, { audience: main.id })).payload
  expectEqual(after.sub, before.sub, 'sub of the refreshed ID token')
  expectEqual(after.iss, before.iss, 'iss of the refreshed ID token')
  expectEqual(after.auth_time, before.auth_time, 'auth_time of the refreshed ID token')
  expectThat(
    typeof after.iat === 'number' && typeof before.iat === 'number' && after.iat >= before.iat,
    'iat of the refreshed ID token is older than the original',
  )
  if (after.nonce !== undefined && after.nonce !== before.nonce)
    ctx.note('the refreshed ID token carries a new nonce (OIDC Core §12.2: SHOULD NOT)')
}

const RT_04 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: FULL, offline: true })
  const rt = refreshTokenOf(set)
  expectScope(set.scope, FULL, 'scope of the code grant (the original grant)')
  const narrowed = await oidc.refreshTokenGrant(set.auth.config, rt, { scope: NARROW })
  // RFC 6749 §6: the requested scope is what the new access token carries
  expectScope(narrowed.scope, NARROW, 'scope of the narrowed refresh response')
  expectScope(
    await accessTokenScope(ctx, narrowed.access_token),
    NARROW,
    'scope claim of the narrowed access token',
  )
})

const RT_05 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: FULL, offline: true })
  const rt = refreshTokenOf(set)
  const narrowed = refreshBody(await refreshRaw(ctx, rt, { scope: NARROW }), 'narrowed refresh')
  expectScope(narrowed.scope, NARROW, 'scope of the narrowed refresh response')
  // RFC 6749 §6: an omitted scope is the scope originally granted, not the last one asked (with
  // the refresh token the narrowed refresh returned, when the server rotates them: RFC 6749 §6
  // says the new one has the original grant's scope)
  const whole = await oidc.refreshTokenGrant(set.auth.config, nextRefreshToken(narrowed, rt))
  expectScope(whole.scope, FULL, 'scope of a refresh without scope after narrowing')
  expectScope(
    await accessTokenScope(ctx, whole.access_token),
    FULL,
    'scope claim of the access token from a refresh without scope after narrowing',
  )
})

const RT_06 = check(async (ctx) => {
  const granted = 'openid offline_access read:documents'
  const set = await signIn(ctx, { scope: granted, offline: true })
  const rt = refreshTokenOf(set)
  const attempts = [
    `${granted} write:documents`,
    'openid no-such:scope',
    'openid write:documents',
    'openid profile',
  ]
  // each widening is its own sub-case: every one granted is reported, not only the first
  for (const scope of attempts) {
    const what = `refresh with scope "${scope}" (granted "${set.scope}")`
    await ctx.subcase(what, async () => {
      const res = await refreshRaw(ctx, rt, { scope })
      expectThat(
        res.status !== 200,
        `${what}: 200, granting "${String((res.json as { scope?: unknown } | undefined)?.scope)}"`,
      )
      // RFC 6749 §6: the scope MUST NOT include anything not originally granted (§5.2 invalid_scope)
      about(what, () => expectOAuthError(res, 400, 'invalid_scope'))
    })
  }
  await ctx.subcase('scope after the refused widenings', async () => {
    const still = refreshBody(await refreshRaw(ctx, rt), 'refresh without scope after the refusals')
    expectScope(still.scope, set.scope, 'scope after the refused widenings')
  })
})

const RT_07 = check(async (ctx) => {
  const other = otherClient(ctx)
  // another client presents the refresh token: a session of its own
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, ownSession: true })
  const rt = refreshTokenOf(set)
  // RFC 6749 §6, §10.4: the refresh token is bound to the client it was issued to
  const stolen = await refreshRaw(ctx, rt, { client: other })
  expectThat(stolen.status !== 200, `${other.id} refreshed a refresh token of another client`)
  about(`${other.id} presenting the refresh token`, () =>
    expectOAuthError(stolen, 400, 'invalid_grant'),
  )
  refreshBody(await refreshRaw(ctx, rt), 'refresh by the rightful client afterwards')
})

const RT_08 = check(async (ctx) => {
  const main = ctx.target.clients.main
  // the refresh token goes with wrong secrets: a session of its own
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, ownSession: true })
  const rt = refreshTokenOf(set)
  const base = { grant_type: 'refresh_token', refresh_token: rt, client_id: main.id }
  const cases: [string, Record<string, string>][] = [
    ['no client_secret', base],
    ['an empty client_secret', { ...base, client_secret: '' }],
    ['a wrong client_secret', { ...base, client_secret: `${main.secret}-wrong` }],
  ]
  // each way of failing to authenticate is its own sub-case: every one let through is reported
  for (const [what, form] of cases)
    await ctx.subcase(`refresh with ${what}`, async () => {
      const res = await ctx.http.postForm(TOKEN, form)
      // RFC 6749 §6: a confidential client MUST authenticate; INTERFACE.md §7: invalid_client
      about(`refresh with ${what}`, () => expectOAuthError(res, 401, 'invalid_client'))
    })
  refreshBody(await refreshRaw(ctx, rt), 'refresh with the right secret')
})

const RT_09 = check(async (ctx) => {
  // sub-cases whose positive control failed: not judged, the check inconclusive once the others
  // were (a failure among them still stands)
  const unshown: string[] = []
  const controlled = (what: string, fn: () => Promise<void>) =>
    ctx.subcase(what, async () => {
      try {
        await fn()
      } catch (err) {
        if (!(err instanceof ControlFailure)) throw err
        unshown.push(`${what}: ${err.message}`)
      }
    })
  // each refused token is its own sub-case (named as its messages begin)
  const never = 'refresh with a refresh token never issued'
  await ctx.subcase(never, async () => {
    const garbage = await refreshRaw(ctx, 'garbage-refresh-token-0123456789abcdef')
    // INTERFACE.md §7: an invalid, expired or revoked refresh token is invalid_grant
    about(never, () => expectOAuthError(garbage, 400, 'invalid_grant'))
  })

  const afterRevocation = 'refresh with a revoked refresh token'
  await controlled(afterRevocation, async () => {
    // revoked on purpose: a session of its own
    const set = await signIn(ctx, {
      scope: 'openid offline_access',
      offline: true,
      ownSession: true,
    })
    // the refresh token works and is revoked before the subject (a precondition); the token in
    // use after the control refresh is the new one when the server rotates them
    const before = await refreshRaw(ctx, refreshTokenOf(set))
    const rt = aside('precondition', () =>
      nextRefreshToken(refreshBody(before, 'refresh before revocation'), refreshTokenOf(set)),
    )
    // the revocation is done (200) before its effect is looked at; its answer's form is REV-02's
    revokedForTheCheck(
      ctx,
      await revokeRaw(ctx, rt, { hint: 'refresh_token' }),
      'the refresh token',
    )
    const revoked = await refreshRaw(ctx, rt)
    about(afterRevocation, () => expectOAuthError(revoked, 400, 'invalid_grant'))
  })

  const ofReusedCode = 'refresh with the refresh token of a reused code'
  await ctx.subcase(ofReusedCode, async () => {
    // a replayed code: a session of its own
    const auth = await authorize(ctx, {
      scope: 'openid offline_access',
      offline: true,
      ownSession: true,
    })
    const code = codeOf(auth)
    const form = {
      code,
      verifier: auth.verifier,
      client: auth.client,
      redirectUri: auth.redirectUri,
    }
    const first = await redeemRaw(ctx, form)
    expectStatus(first, 200, 'first redemption of the code')
    const reused = (expectJsonObject(first, 'token response') as { refresh_token?: unknown })
      .refresh_token
    expectThat(typeof reused === 'string', 'no refresh_token from the first redemption')
    expectStatus(await redeemRaw(ctx, form), 400, 'second redemption of the same code')
    // RFC 6749 §4.1.2: a server "MUST deny the request and SHOULD revoke (when possible) all
    // tokens previously issued based on that authorization code". Whether it revokes is that
    // SHOULD, judged at its level by CODE-03 (and failed by the security gate); what this MUST
    // check expects is that a refresh token the replay did revoke is refused as any revoked one
    // is (RFC 6749 §5.2: invalid_grant)
    const afterReuse = await refreshRaw(ctx, reused)
    if (afterReuse.status === 200) {
      ctx.note(
        'the refresh token of a reused code still refreshes: the replay revoked nothing, which RFC 6749 §4.1.2 says it SHOULD do (CODE-03 judges it at that level); nothing revoked, nothing for this sub-case to judge',
      )
      return
    }
    about(ofReusedCode, () => expectOAuthError(afterReuse, 400, 'invalid_grant'))
  })
  // what a failed control could not show leaves the check inconclusive, after what it did show
  expectControl(unshown.length === 0, unshown.join('; '))
})

const RT_10 = check(async (ctx) => {
  const main = ctx.target.clients.main
  // its own browser: its last part logs this session out (never the run's shared one)
  const context = await ctx.newBrowserContext()
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true, context })
  const rt = refreshTokenOf(set)
  const refreshed = refreshBody(await refreshRaw(ctx, rt), 'refresh')
  // a refresh response that repeats the refresh token it was given has not rotated it
  const rotates = typeof refreshed.refresh_token === 'string' && refreshed.refresh_token !== rt
  if (typeof refreshed.refresh_token === 'string' && !rotates)
    ctx.note('the refresh response repeats the refresh token it was given (no rotation)')
  const discovery = await ctx.http.get('/.well-known/openid-configuration')
  const doc = expectJsonObject(discovery, 'discovery document')
  // RFC 8414 §2: the default when the member is omitted is client_secret_basic
  const methods = Array.isArray(doc.token_endpoint_auth_methods_supported)
    ? (doc.token_endpoint_auth_methods_supported as unknown[])
    : ['client_secret_basic']
  if (!rotates) {
    // RFC 9700 §4.14.2: without rotation or sender-constraining, public clients MUST NOT hold them
    expectThat(
      !methods.includes('none'),
      'refresh tokens do not rotate, yet discovery advertises token_endpoint_auth_method "none" (public clients)',
    )
    const secretless = await ctx.http.postForm(TOKEN, {
      grant_type: 'refresh_token',
      refresh_token: rt,
      client_id: main.id,
    })
    expectThat(
      secretless.status !== 200,
      'a refresh token that does not rotate refreshed with no client secret, as a public client',
    )
    // the refusal is this check's property; its error code is the token endpoint's (RFC 6749
    // §5.2 names invalid_client for a request without client authentication), noted here
    const refusal = expectOAuthError(secretless, [400, 401])
    if (refusal.error !== 'invalid_client')
      ctx.note(
        `the refresh without a client secret was refused with error=${String(refusal.error)}, not invalid_client (RFC 6749 §5.2)`,
      )
  }
  // OIDC Core §11 (INFO): offline access is meant to outlive the login session
  const current = rotates ? String(refreshed.refresh_token) : rt
  await noteOfflineAfterLogout(ctx, context, set, current)
  // nothing was asserted about a token that rotates: that is no pass
  if (rotates)
    ctx.skip(
      'refresh tokens rotate (the refresh response carries a new refresh_token), so the rule for refresh tokens that do not rotate does not apply',
    )
})

/** Records whether an offline refresh token still refreshes after the session ends (INFO). */
async function noteOfflineAfterLogout(
  ctx: CheckContext,
  context: Awaited<ReturnType<CheckContext['newBrowserContext']>>,
  set: TokenSet,
  rt: string,
): Promise<void> {
  const idToken = set.idToken
  if (!idToken) {
    ctx.note('no id_token to end the session with; the logout part is left out')
    return
  }
  const page = await context.newPage()
  const logout = await page.goto(logoutUrl(ctx, { id_token_hint: idToken })).catch(() => null)
  const status = logout?.status()
  if (status === undefined || status >= 400) {
    ctx.note(`logout answered ${String(status)}; whether offline tokens survive it is not recorded`)
    return
  }
  const after = await refreshRaw(ctx, rt)
  ctx.note(
    after.status === 200
      ? 'after logout the offline refresh token still refreshes'
      : `after logout the offline refresh token no longer refreshes (HTTP ${after.status})`,
  )
}

/** The longest RT-11 waits for a refresh token to expire on a target whose clock it cannot move. */
const MAX_EXPIRY_WAIT_S = 40

const RT_11 = check({ exclusive: true }, async (ctx) => {
  const lifetime = ctx.target.refreshTokenLifetime
  if (lifetime === undefined)
    return ctx.skip(
      'the refresh-token lifetime is not in the target configuration (refreshTokenLifetime), so no refresh token can be presented expired',
    )
  const controls = ctx.target.controls
  if (!controls && lifetime > MAX_EXPIRY_WAIT_S)
    ctx.skip(
      `refresh tokens live ${lifetime} s: longer than this check waits (${MAX_EXPIRY_WAIT_S} s), and only the embedded server's clock can be moved`,
    )
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true })
  const rt = refreshTokenOf(set)
  // the control: live, the same refresh token works, so a refusal below is for its age alone
  const live = await refreshRaw(ctx, rt)
  expectControl(
    live.status === 200 &&
      typeof (live.json as { access_token?: unknown } | undefined)?.access_token === 'string',
    `control: refresh while the refresh token is live: expected HTTP 200 with an access_token, got ${live.status}, so its refusal once expired shows nothing about its age (RT-03 judges a live refresh token refused)`,
  )
  if (controls) controls.advanceClock(lifetime + 1)
  else await sleep((lifetime + 1) * 1000)
  const res = await refreshRaw(ctx, rt)
  const what = `refresh with a refresh token past its ${lifetime} s lifetime`
  expectThat(res.status !== 200, `${what}: 200, the expired refresh token still works`)
  // INTERFACE.md §7, RFC 6749 §5.2: an expired refresh token is invalid_grant
  about(what, () => expectOAuthError(res, 400, 'invalid_grant'))
})

/** The refresh checks, one per row of catalogue/refresh.ts. */
export const refreshChecks: AreaChecks<typeof catalogue> = {
  'RT-01': RT_01,
  'RT-02': RT_02,
  'RT-03': RT_03,
  'RT-04': RT_04,
  'RT-05': RT_05,
  'RT-06': RT_06,
  'RT-07': RT_07,
  'RT-08': RT_08,
  'RT-09': RT_09,
  'RT-10': RT_10,
  'RT-11': RT_11,
}
