import { randomBytes } from 'node:crypto'
import { decodeJwt } from 'jose'
import { estimateEntropyBits } from '../harness/entropy.ts'
import { type AreaChecks, check, classify } from '../harness/check.ts'
import type { code as catalogue } from '../catalogue/code.ts'
import type { HttpResponse } from '../harness/http.ts'
import {
  about,
  aside,
  CheckFailure,
  expectEqual,
  expectJsonObject,
  expectOAuthError,
  expectStatus,
  expectThat,
  scopeTokens,
} from '../harness/expect.ts'
import {
  authorize,
  codeOf,
  mainClient,
  redeem,
  redirectUriOf,
  tokensFor,
} from '../harness/flows.ts'
import {
  credentials,
  introspectRaw,
  redeemRaw,
  refreshRaw,
  TOKEN,
  userInfoRaw,
} from '../harness/requests.ts'
import { verifyJwt } from '../harness/jwt.ts'
import { accessTokenFacts } from '../harness/access-token.ts'
import { DEFAULT_ACCESS_TOKEN_LIFETIME_S } from '../harness/needs.ts'

const CODE_01 = check(async (ctx) => {
  const requested = ['openid', 'profile', 'email', 'offline_access']
  const { body, auth } = await tokensFor(ctx, { scope: requested.join(' ') })
  const client = auth.client
  // INTERFACE.md §2.2, RFC 6749 §5.1
  expectThat(
    typeof body.access_token === 'string' && body.access_token.length > 0,
    `access_token: expected a non-empty string, got ${JSON.stringify(body.access_token)}`,
  )
  // RFC 6749 §5.1, §7.1: the token type is case-insensitive
  expectThat(
    typeof body.token_type === 'string' && body.token_type.toLowerCase() === 'bearer',
    `token_type: expected Bearer, got ${JSON.stringify(body.token_type)}`,
  )
  // INTERFACE.md §2.2, §8: "Access token lifetime | 1 hour by default (expires_in 3600)": a
  // default, so a deployment that sets another declares it (accessTokenLifetime)
  const declared = ctx.target.accessTokenLifetime
  expectThat(
    body.expires_in === (declared ?? DEFAULT_ACCESS_TOKEN_LIFETIME_S),
    declared === undefined
      ? `expires_in: expected ${DEFAULT_ACCESS_TOKEN_LIFETIME_S}, got ${JSON.stringify(body.expires_in)} (INTERFACE.md §8: 1 hour by default; a deployment configured with another access-token lifetime declares it as accessTokenLifetime in the target configuration)`
      : `expires_in: expected ${declared}, got ${JSON.stringify(body.expires_in)} (the target configuration's accessTokenLifetime)`,
  )
  expectThat(
    typeof body.id_token === 'string',
    `id_token: expected a JWT for scope openid (OIDC Core §3.1.3.3), got ${JSON.stringify(body.id_token)}`,
  )
  const { payload } = await verifyJwt(ctx, body.id_token, { audience: client.id })
  expectEqual(payload.nonce, auth.nonce, 'ID token nonce')
  const granted = scopeTokens(body.scope)
  expectThat(granted, `scope: expected a string, got ${JSON.stringify(body.scope)}`)
  expectThat(granted.includes('openid'), `scope: openid missing from ${String(body.scope)}`)
  if (granted.includes('offline_access')) {
    // INTERFACE.md §2.2: the authorization_code grant returns a refresh token
    expectThat(
      typeof body.refresh_token === 'string' && body.refresh_token.length > 0,
      `offline_access was granted but no refresh_token came back (${JSON.stringify(body.refresh_token)})`,
    )
  } else {
    ctx.note(`offline_access was requested but not granted (scope ${String(body.scope)})`)
  }
})

const CODE_02 = check({ exclusive: true }, async (ctx) => {
  // a replayed code: its own session, since a provider may revoke what it issued (§4.1.2)
  const { auth } = await tokensFor(ctx, { scope: 'openid', ownSession: true })
  const again = () => redeem(ctx, auth)
  // RFC 6749 §4.1.2: the client MUST NOT use the code more than once; §5.2: invalid_grant
  const replay = await again()
  expectThat(replay.status !== 200, 'the code was redeemed a second time (HTTP 200)')
  expectOAuthError(replay, 400, 'invalid_grant')
  const controls = ctx.target.controls
  if (!controls) {
    ctx.note('the replay 30 s later runs only on the embedded target (clock control)')
    return
  }
  controls.advanceClock(30)
  const later = await again()
  expectThat(later.status !== 200, 'the code was redeemed again 30 s later (HTTP 200)')
  expectOAuthError(later, 400, 'invalid_grant')
})

/** A probe of an endpoint that may not exist: undefined unless it answers JSON 2xx/4xx. */
function jsonAnswer(res: HttpResponse): Record<string, unknown> | undefined {
  if (res.status >= 500 || res.status < 200 || res.status === 404 || res.status === 405)
    return undefined
  const ok = /[/+]json\b/i.test(res.headers.get('content-type') ?? '')
  return ok && res.json !== null && typeof res.json === 'object'
    ? (res.json as Record<string, unknown>)
    : undefined
}

const CODE_03 = check(async (ctx) => {
  // a replayed code: its own session, since the revocation it asks for may reach the session
  const { body, auth } = await tokensFor(ctx, {
    scope: 'openid offline_access',
    offline: true,
    ownSession: true,
  })
  const client = auth.client
  const code = codeOf(auth)
  const accessToken = String(body.access_token)
  const issued = body.refresh_token
  expectThat(
    typeof issued === 'string',
    'no refresh_token for offline_access, so revocation cannot be observed (see CODE-01)',
  )
  // baselines: each token works before the replay, so a later refusal is the revocation
  let refreshToken = issued
  const baseline = await refreshRaw(ctx, refreshToken, { client })
  expectStatus(baseline, 200, 'refresh before the replay')
  const rotated = expectJsonObject(baseline, 'refresh response').refresh_token
  if (typeof rotated === 'string') refreshToken = rotated
  const userInfo = () => userInfoRaw(ctx, accessToken)
  const introspect = () => introspectRaw(ctx, accessToken, { client })
  const uiBefore = await userInfo()
  const uiLive = uiBefore.status === 200 && jsonAnswer(uiBefore) !== undefined
  if (!uiLive) ctx.note(`user-info answered ${uiBefore.status} before the replay: not checked`)
  const introBefore = jsonAnswer(await introspect())
  const introLive = introBefore?.active === true
  if (!introLive) ctx.note('introspection did not report the token active before: not checked')

  const replay = await redeemRaw(ctx, {
    code,
    verifier: auth.verifier,
    client,
    redirectUri: auth.redirectUri,
  })
  expectThat(replay.status !== 200, 'the replayed code was redeemed again (see CODE-02)')
  // RFC 6749 §4.1.2, RFC 9700 §4.2.4: the tokens issued from a replayed code SHOULD be revoked
  const refreshed = await refreshRaw(ctx, refreshToken, { client })
  expectThat(refreshed.status !== 200, 'the refresh token still works after the code replay')
  expectOAuthError(refreshed, 400, 'invalid_grant')
  if (uiLive) {
    const ui = await userInfo()
    expectEqual(ui.status, 401, 'user-info with the access token after the code replay')
  }
  if (introLive) {
    const after = await introspect()
    expectStatus(after, 200, 'introspection after the code replay')
    expectEqual(expectJsonObject(after).active, false, 'introspection active after the replay')
  }
})

/** How many redemptions of one code CODE-04 sends at once. */
const CONCURRENT = 5

const CODE_04 = check(async (ctx) => {
  // concurrent redemptions are replays: a session of its own
  const auth = await authorize(ctx, { ownSession: true })
  const responses = await Promise.all(Array.from({ length: CONCURRENT }, () => redeem(ctx, auth)))
  const wins = responses.filter((r) => r.status === 200).length
  // RFC 6749 §4.1.2: a code is used once, however the requests interleave
  const counted = `successful redemptions of ${CONCURRENT} concurrent ones`
  await ctx.subcase(counted, () => expectEqual(wins, 1, counted))
  // RFC 6749 §5.2: the others present a used code, an invalid grant; judged on their own, so a
  // race that lets two through does not hide how the rest are refused
  await ctx.subcase('a losing concurrent redemption', () => {
    for (const r of responses.filter((x) => x.status !== 200))
      expectOAuthError(r, 400, 'invalid_grant')
  })
})

const CODE_05 = check(async (ctx) => {
  ctx.note(
    'another registered redirect URI of the main client is not in the target configuration: not tried',
  )
  const variants = [
    // RFC 6749 §4.1.3: "identical", i.e. a simple string comparison (RFC 3986 §6.2.1)
    { what: 'redirect_uri with a trailing slash', uri: (r: string) => `${r}/`, omitted: false },
    { what: 'redirect_uri omitted', uri: () => undefined, omitted: true },
  ]
  // each variant is its own sub-case: one accepted does not hide the other
  for (const v of variants)
    await ctx.subcase(v.what, async () => {
      const auth = await authorize(ctx)
      const res = await redeemRaw(ctx, {
        code: codeOf(auth),
        verifier: auth.verifier,
        client: auth.client,
        redirectUri: v.uri(auth.redirectUri),
      })
      expectThat(res.status !== 200, `${v.what}: the code was redeemed (HTTP 200)`)
      expectOAuthError(res, 400, v.omitted ? ['invalid_grant', 'invalid_request'] : 'invalid_grant')
    })
})

/** ", <error>" of an OAuth error body, or nothing. */
const errorOf = (res: HttpResponse): string => {
  const error = (res.json as { error?: unknown } | null)?.error
  return typeof error === 'string' ? `, ${error}` : ''
}

const CODE_11 = check(async (ctx) => {
  const auth = await authorize(ctx)
  const code = codeOf(auth)
  const redeemWith = (redirectUri: string) =>
    redeemRaw(ctx, { code, verifier: auth.verifier, client: auth.client, redirectUri })
  // the same request with a wrong redirect_uri: refused (CODE-05 holds that to invalid_grant)
  const wrong = await redeemWith(`${auth.redirectUri}/`)
  expectThat(wrong.status !== 200, 'redirect_uri with a trailing slash: the code was redeemed')
  // RFC 6749 §4.1.2 makes a code single use; a request refused for a mismatch did not use it,
  // and no source says it spends the code, so only a refusal of the rightful one is recorded
  const right = await redeemWith(auth.redirectUri)
  expectThat(
    right.status === 200,
    `after a token request with a wrong redirect_uri, the rightful redemption was refused (HTTP ${right.status}${errorOf(right)}): the refused request spent the code`,
  )
})

const CODE_06 = check(async (ctx) => {
  const other = ctx.target.clients.other
  if (!other) return ctx.skip('no second client (clients.other) in the target configuration')
  // another client presents the code: a session of its own
  const auth = await authorize(ctx, { ownSession: true })
  const code = codeOf(auth)
  const stolen = await redeemRaw(ctx, {
    code,
    verifier: auth.verifier,
    client: other,
    redirectUri: auth.redirectUri,
  })
  // RFC 6749 §4.1.3: the code was issued to the authenticated client, or it is refused; §5.2:
  // a code "issued to another client" is invalid_grant
  expectThat(
    stolen.status !== 200,
    `client ${other.id} redeemed a code issued to ${auth.client.id}`,
  )
  about(`client ${other.id} presenting the code`, () =>
    expectOAuthError(stolen, 400, 'invalid_grant'),
  )
  const own = await redeem(ctx, auth)
  ctx.note(
    own.status === 200
      ? `${auth.client.id} could still redeem its code after ${other.id}'s attempt`
      : `${other.id}'s attempt burned the code: ${auth.client.id} then got HTTP ${own.status}`,
  )
})

const CODE_07 = check(
  {
    exclusive: true,
    embeddedOnly:
      'code expiry needs clock control (embedded target); waiting 10 min is not bounded',
  },
  async (ctx) => {
    const controls = ctx.target.controls
    if (!controls)
      return ctx.skip(
        'code expiry needs clock control (embedded target); waiting 10 min is not bounded',
      )
    const redeemAfter = async (seconds: number) => {
      const auth = await authorize(ctx)
      controls.advanceClock(seconds)
      return redeem(ctx, auth)
    }
    const probe = await redeemAfter(61)
    ctx.note(
      probe.status === 200
        ? 'a code was still accepted 61 s after issue: its lifetime is over a minute'
        : `a code was refused 61 s after issue (HTTP ${probe.status}): its lifetime is at most 61 s`,
    )
    // RFC 6749 §4.1.2: codes MUST expire shortly after issue; a 10 min maximum is RECOMMENDED
    const late = await redeemAfter(601)
    expectThat(late.status !== 200, 'a code was still accepted 601 s after issue')
    // RFC 6749 §5.2: an expired code is an invalid grant
    about('a code 601 s after issue', () => expectOAuthError(late, 400, 'invalid_grant'))
  },
)

const CODE_08 = check(async (ctx) => {
  const client = mainClient(ctx)
  const redirectUri = redirectUriOf(ctx, client)
  const verifier = randomBytes(48).toString('base64url')
  const cases = [
    {
      what: 'a random code',
      code: randomBytes(32).toString('base64url'),
      codes: ['invalid_grant'],
    },
    {
      what: 'a code with spaces and symbols',
      code: 'not a "code" +/=%',
      codes: ['invalid_grant', 'invalid_request'],
    },
    {
      what: 'a 4096-character code',
      code: 'A'.repeat(4096),
      codes: ['invalid_grant', 'invalid_request'],
    },
  ]
  // each code is its own sub-case: one mishandled does not hide another
  for (const c of cases)
    await ctx.subcase(c.what, async () => {
      const res = await redeemRaw(ctx, { code: c.code, verifier, client, redirectUri })
      // RFC 6749 §5.2: an invalid authorization grant is invalid_grant
      expectThat(res.status !== 200, `${c.what} was redeemed (HTTP 200)`)
      about(c.what, () => expectOAuthError(res, 400, c.codes))
    })
  // RFC 6749 §5.2: a missing required parameter is invalid_request
  await ctx.subcase('no code parameter', async () => {
    const missing = await ctx.http.postForm(TOKEN, {
      grant_type: 'authorization_code',
      redirect_uri: redirectUri,
      code_verifier: verifier,
      ...credentials(client),
    })
    about('no code parameter', () => expectOAuthError(missing, 400, 'invalid_request'))
  })
})

const CODE_09 = check(async (ctx) => {
  const auth = await authorize(ctx, { scope: 'openid' })
  const widened = ['email', 'write:documents']
  const res = await redeemRaw(ctx, {
    code: codeOf(auth),
    verifier: auth.verifier,
    client: auth.client,
    redirectUri: auth.redirectUri,
    extra: { scope: ['openid', ...widened].join(' ') },
  })
  if (res.status !== 200) {
    // refusing the parameter is allowed; INTERFACE.md §4.2 says it is not used. How the
    // refusal is shaped is not the subject (nothing was widened)
    aside('refused', () => expectOAuthError(res, 400))
    ctx.note(`the scope parameter was refused: HTTP ${res.status}`)
    return
  }
  // what is read below must be there to be read: its absence shows no widening
  const body = aside('precondition', () => expectJsonObject(res, 'token response'))
  // RFC 6749 §3.3, §4.1.3: the grant is the scope authorized at the authorization endpoint.
  // The subject is widening: §3.3 lets the server "fully or partially ignore the scope
  // requested" and issue a narrower one, so a grant narrower than openid (even "") is the
  // token response's own question (CODE-01), noted here; a scope beyond the code's fails
  if (body.scope !== undefined) {
    const granted = scopeTokens(body.scope) ?? []
    const beyond = granted.filter((s) => s !== 'openid')
    expectThat(
      beyond.length === 0,
      `a code for scope=openid came back with scope=${JSON.stringify(body.scope)}: widened by ${beyond.join(' ')} at the token request`,
    )
    if (!granted.includes('openid'))
      ctx.note(
        `a code for scope=openid came back with scope=${JSON.stringify(body.scope)}: narrower, not widened (RFC 6749 §3.3 allows it; the token response's scope is CODE-01's subject)`,
      )
  }
  // the grant is the subject: a token that is not a JWT is read through introspection
  const { claims: payload } = await accessTokenFacts(ctx, String(body.access_token)).catch(
    (err: unknown) => {
      const judged = classify(err)
      if (judged.kind !== 'failure') throw err
      // the token is read for its scope only (AT-01 judges its signature and claims)
      throw new CheckFailure(
        `the access token does not verify, so its scope was not read: ${judged.message ?? (err as Error).message}`,
        undefined,
        'precondition',
      )
    },
  )
  const atScope = scopeTokens(payload.scope) ?? []
  expectThat(
    !widened.some((s) => atScope.includes(s)),
    `the access token scope was widened to ${JSON.stringify(payload.scope)}`,
  )
  if (typeof body.id_token === 'string') {
    const idt = decodeJwt(body.id_token)
    expectThat(!('email' in idt), 'the ID token carries email, which scope=openid does not allow')
  }
})

/** How many codes CODE-10 collects (the row's 20). */
const CODES = 20

// twenty authorizations: where each needs the browser, its limit is twenty of this run's rounds
const CODE_10 = check({ browserRounds: CODES }, async (ctx) => {
  const codes: string[] = []
  for (let i = 0; i < CODES; i++) {
    const auth = await authorize(ctx)
    codes.push(codeOf(auth))
  }
  // each property is its own sub-case: codes that repeat may still be long, and long ones weak
  const distinct = `distinct codes among ${CODES}`
  await ctx.subcase(distinct, () => expectEqual(new Set(codes).size, CODES, distinct))
  // RFC 6749 §10.10: guessing probability ≤ 2^-128; OIDF asks for 128-bit codes
  const short = codes.find((c) => c.length < 16)
  await ctx.subcase('code length', () =>
    expectThat(short === undefined, `a code of ${short?.length} characters (at least 16 expected)`),
  )
  const bits = estimateEntropyBits(codes)
  ctx.note(`estimated entropy per code: ${Math.round(bits)} bits`)
  await ctx.subcase('code entropy', () =>
    expectThat(bits >= 96, `codes carry an estimated ${Math.round(bits)} bits of entropy (< 96)`),
  )
})

/** The code checks, one per row of catalogue/code.ts. */
export const codeChecks: AreaChecks<typeof catalogue> = {
  'CODE-01': CODE_01,
  'CODE-02': CODE_02,
  'CODE-03': CODE_03,
  'CODE-04': CODE_04,
  'CODE-05': CODE_05,
  'CODE-11': CODE_11,
  'CODE-06': CODE_06,
  'CODE-08': CODE_08,
  'CODE-09': CODE_09,
  'CODE-10': CODE_10,
  'CODE-07': CODE_07,
}
