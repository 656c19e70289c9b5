import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { userInfo as catalogue } from '../catalogue/user-info.ts'
import type { HttpResponse } from '../harness/http.ts'
import {
  atShould,
  expectBearerChallenge,
  expectControl,
  expectEqual,
  expectJsonObject,
  expectStatus,
  expectThat,
  judging,
  parseChallenge,
  revokedForTheCheck,
  servedForTheCheck,
} from '../harness/expect.ts'
import { expireTokens, idTokenOf, refreshTokenOf, signIn } from '../harness/flows.ts'
import { clientCredentialsRaw, revokeRaw, USER_INFO, userInfoRaw } from '../harness/requests.ts'
import { forgeries, verifyJwt } from '../harness/jwt.ts'

/** INTERFACE.md §2.4: the user claims, by the scope that releases them. */
const CLAIMS = {
  openid: ['sub'],
  profile: ['name', 'picture', 'updated_at'],
  email: ['email', 'email_verified'],
} as const

/** A 200 user-info answer, as a JSON object. */
function userInfoClaims(res: HttpResponse, what: string): Record<string, unknown> {
  expectStatus(res, 200, what)
  return expectJsonObject(res, what)
}

/** The verified ID token's sub. */
async function idTokenSub(ctx: CheckContext, idToken: string): Promise<unknown> {
  const { payload } = await verifyJwt(ctx, idToken, { audience: ctx.target.clients.main.id })
  return payload.sub
}

const UI_01 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid profile email' })
  const sub = await idTokenSub(ctx, idTokenOf(set))
  expectThat(typeof sub === 'string', 'the ID token has no sub')
  // OIDC Core §5.3.2: the user-info sub MUST equal the ID token's sub. Read raw, not through
  // openid-client's fetchUserInfo: it checks the same status, JSON object and sub, but throws
  // its own errors (a harness error, not a verdict), so it could add no failure of its own
  const raw = userInfoClaims(await userInfoRaw(ctx, set.accessToken), 'GET user-info')
  expectEqual(raw.sub, sub, 'user-info sub (the ID token sub)')
})

const UI_02 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid profile email' })
  const viaGet = userInfoClaims(await userInfoRaw(ctx, set.accessToken), 'GET user-info')
  // OIDC Core §5.3.1: the OP MUST support GET and POST
  const res = await ctx.http.request(USER_INFO, {
    method: 'POST',
    headers: { authorization: `Bearer ${set.accessToken}` },
  })
  const viaPost = userInfoClaims(res, 'POST user-info with an empty body')
  expectEqual(JSON.stringify(sorted(viaPost)), JSON.stringify(sorted(viaGet)), 'POST claims vs GET')
})

const sorted = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)))

const UI_03 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid' })
  const token = set.accessToken
  // RFC 6750 §2.2 (MAY): the form-encoded body parameter
  const body = await ctx.http.postForm(USER_INFO, { access_token: token })
  if (body.status === 200) ctx.note('a form-body access_token is accepted (RFC 6750 §2.2)')
  else {
    expectStatus(body, [400, 401], 'POST with a form-body access_token')
    ctx.note(`a form-body access_token is refused with HTTP ${body.status}`)
  }
  // a token in the URI query is UI-12's subject
  // RFC 6750 §2, §3.1: more than one method in a request is invalid_request (400)
  const both = await ctx.http.request(USER_INFO, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    form: { access_token: token },
  })
  const what = 'a token in the Authorization header and the body at once'
  // RFC 6750 §2 "Clients MUST NOT use more than one method" binds the client; for the server,
  // §3.1 lists the case under invalid_request and "The resource server SHOULD respond with the
  // HTTP 400 (Bad Request) status code": accepting it is a SHOULD's failure, a warning
  atShould(() =>
    judging(both, () =>
      expectThat(
        both.status < 200 || both.status >= 300,
        `${what} was accepted with HTTP ${both.status} from ${both.url}; RFC 6750 §3.1: the resource server SHOULD answer 400 invalid_request (a warning)`,
      ),
    ),
  )
  expectStatus(both, 400, what)
  const error =
    (both.json as { error?: unknown } | undefined)?.error ??
    parseChallenge(both.headers.get('www-authenticate'))?.params.error
  expectEqual(error, 'invalid_request', `${what}: error`)
})

const UI_04 = check(async (ctx) => {
  const cases = [
    ['openid', ['openid']],
    ['openid profile', ['openid', 'profile']],
    ['openid email', ['openid', 'email']],
    ['openid profile email', ['openid', 'profile', 'email']],
  ] as const satisfies readonly (readonly [string, readonly (keyof typeof CLAIMS)[]])[]
  // each scope is its own sub-case: one released wrongly does not hide another
  for (const [scope, scopes] of cases)
    await ctx.subcase(`user-info for "${scope}"`, async () => {
      const released: readonly (keyof typeof CLAIMS)[] = scopes
      const set = await signIn(ctx, { scope })
      const claims = userInfoClaims(
        await userInfoRaw(ctx, set.accessToken),
        `user-info for "${scope}"`,
      )
      const allowed = new Set<string>(released.flatMap((s) => CLAIMS[s]))
      // OIDC Core §5.4; INTERFACE.md §2.4: only what the granted scopes release
      const extra = Object.keys(claims).filter((c) => !allowed.has(c))
      expectThat(
        extra.length === 0,
        `user-info for "${scope}": returned claims its scopes do not allow: ${extra.join(', ')}`,
      )
      const needed = ['sub', ...(released.includes('profile') ? ['name'] : [])]
      needed.push(...(released.includes('email') ? ['email', 'email_verified'] : []))
      for (const claim of needed)
        expectThat(claim in claims, `user-info for "${scope}": lacks ${claim}`)
      const absent = [...allowed].filter((c) => !(c in claims))
      if (absent.length > 0)
        ctx.note(`user-info for "${scope}" has no ${absent.join(', ')} for this user`)
    })
})

/** OIDC Core §5.1 claim types, and §5.3.2's SHOULD against null or empty values. */
function checkTypes(ctx: CheckContext, claims: Record<string, unknown>, who: string): void {
  for (const [name, value] of Object.entries(claims)) {
    if (value === null || value === '')
      ctx.note(`${who}: ${name} is ${JSON.stringify(value)} (OIDC Core §5.3.2: SHOULD be omitted)`)
  }
  const { updated_at: updatedAt, email_verified: verified, picture } = claims
  expectThat(
    typeof updatedAt === 'number' && Number.isInteger(updatedAt) && updatedAt > 0,
    `${who}: updated_at must be a JSON number of seconds, got ${JSON.stringify(updatedAt)}`,
  )
  expectThat(
    typeof verified === 'boolean',
    `${who}: email_verified must be a JSON boolean, got ${JSON.stringify(verified)}`,
  )
  for (const name of ['sub', 'name', 'email'])
    expectThat(
      !(name in claims) || typeof claims[name] === 'string',
      `${who}: ${name} must be a string, got ${JSON.stringify(claims[name])}`,
    )
  if (picture !== undefined) {
    let url: URL | undefined
    try {
      url = typeof picture === 'string' ? new URL(picture) : undefined
    } catch {
      url = undefined
    }
    expectThat(
      typeof picture === 'string' && (url?.protocol === 'https:' || url?.protocol === 'http:'),
      `${who}: picture must be an absolute URL, got ${JSON.stringify(picture)}`,
    )
  }
}

const UI_05 = check(async (ctx) => {
  const scope = 'openid profile email'
  const primary = await signIn(ctx, { scope })
  checkTypes(
    ctx,
    userInfoClaims(await userInfoRaw(ctx, primary.accessToken), 'user-info'),
    'primary user',
  )
  const secondary = ctx.target.users.secondary
  if (!secondary) {
    ctx.note('no secondary user configured: only the primary user was checked')
    return
  }
  const other = await signIn(ctx, { scope, user: secondary })
  const claims = userInfoClaims(await userInfoRaw(ctx, other.accessToken), 'user-info (secondary)')
  checkTypes(ctx, claims, 'secondary user')
  if (claims.email_verified !== false)
    ctx.note('the secondary user has a verified e-mail, so email_verified=false was not seen')
})

const UI_06 = check(async (ctx) => {
  const res = await userInfoRaw(ctx, undefined)
  const what = 'user-info without a token'
  // RFC 6750 §3: "the resource server MUST include the HTTP "WWW-Authenticate" response header
  // field" (MUST, a failure); the status is not stated at MUST: INTERFACE.md §7 leaves it "not
  // shown", RFC 6750 §3's examples and RFC 9110 §11.6.1/§15.5.2 pair the challenge with 401,
  // so another status is a SHOULD's warning (blind round 5)
  const params = judging(res, () => {
    const header = res.headers.get('www-authenticate')
    const challenge = parseChallenge(header)
    expectThat(
      challenge?.scheme.toLowerCase() === 'bearer',
      `${what}: expected WWW-Authenticate: Bearer …, got ${JSON.stringify(header)} (HTTP ${res.status})`,
    )
    return challenge.params
  })
  atShould(() => expectStatus(res, 401, what))
  // RFC 6750 §3.1: it SHOULD NOT carry an error code
  if (params.error !== undefined)
    ctx.note(`the challenge carries error="${params.error}" (RFC 6750 §3.1: SHOULD NOT)`)
})

const UI_07 = check({ exclusive: true }, async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid' })
  const receivedAt = Date.now()
  // the positive control: the genuine token is accepted, so a refusal below is for what was
  // changed; a user-info that refuses every token shows nothing here (UI-01 judges that)
  servedForTheCheck(
    await userInfoRaw(ctx, set.accessToken),
    'the genuine token',
    'its refusal of forged, revoked or expired tokens shows nothing',
  )
  // RFC 6750 §3.1; INTERFACE.md §5.6: RS256 only, a published key, an untouched signature
  // each forgery is its own sub-case: every one accepted is reported, not only the first
  for (const [what, token] of await forgeries(ctx, set.accessToken))
    await ctx.subcase(`user-info with ${what}`, async () => {
      const res = await userInfoRaw(ctx, token)
      expectBearerChallenge(res, 401, 'invalid_token', `user-info with ${what}`)
    })
  const revoked = await signIn(ctx, { scope: 'openid' })
  servedForTheCheck(
    await userInfoRaw(ctx, revoked.accessToken),
    'a second genuine token before revocation',
    'its refusal after the revocation shows nothing',
  )
  // the revocation is done before its effect is looked at; its answer's form is REV-02's
  revokedForTheCheck(ctx, await revokeRaw(ctx, revoked.accessToken), 'the access token')
  await ctx.subcase('user-info with a revoked token', async () => {
    // INTERFACE.md §3: a revoked token is inactive (ARCHITECTURE.md: honoured by jti)
    expectBearerChallenge(
      await userInfoRaw(ctx, revoked.accessToken),
      401,
      'invalid_token',
      'user-info with a revoked token',
    )
  })
  const expiring = { accessToken: set.accessToken, expiresIn: set.body.expires_in, receivedAt }
  if (await expireTokens(ctx, 'UI-07', expiring, 'an expired token')) {
    // INTERFACE.md §3: holders must reject expired tokens; RFC 6750 §3.1: invalid_token "The
    // access token provided is expired, revoked, malformed, or invalid for other reasons"
    expectBearerChallenge(
      await userInfoRaw(ctx, set.accessToken),
      401,
      'invalid_token',
      'user-info with an expired token',
    )
  }
})

const UI_08 = check(async (ctx) => {
  const tokens: [string, string][] = []
  const service = ctx.target.clients.service
  if (service) {
    const res = await clientCredentialsRaw(ctx, service)
    if (res.status === 200)
      tokens.push([
        'a client_credentials token',
        String(expectJsonObject(res, 'client_credentials').access_token),
      ])
  }
  // AUTHZ-10: plain OAuth, no openid
  const plain = await signIn(ctx, { scope: 'read:documents' })
  tokens.push(['a token without openid', plain.accessToken])
  // the positive control: the same user-info answers a token of the same user and client that
  // has openid (the one difference), so a refusal below is for the missing scope; a user-info
  // that refuses every token proves nothing here (UI-01 judges that)
  const control = await signIn(ctx, { scope: 'openid read:documents' })
  const accepted = await userInfoRaw(ctx, control.accessToken)
  expectControl(
    accepted.status === 200,
    `user-info refused an access token with openid (HTTP ${accepted.status}), so its refusal of tokens without openid shows nothing about the scope`,
  )
  // each token is its own sub-case: every one that gets claims is reported
  for (const [what, token] of tokens) {
    const label = `user-info with ${what}`
    await ctx.subcase(label, async () => {
      const res = await userInfoRaw(ctx, token)
      expectThat(res.status !== 200, `${label}: 200, but the token lacks the openid scope`)
      if (res.status === 401) {
        expectBearerChallenge(res, 401, 'invalid_token', label)
        ctx.note(`${label}: 401 invalid_token (tolerated; 403 insufficient_scope expected)`)
        return
      }
      // RFC 6750 §3.1: insufficient_scope is 403 with a challenge
      expectBearerChallenge(res, 403, 'insufficient_scope', label)
    })
  }
})

const UI_09 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid offline_access', offline: true })
  // the positive control: the grant's access token is accepted, so a refusal below is for the
  // kind of token; a user-info that refuses every token shows nothing here (UI-01 judges that)
  servedForTheCheck(
    await userInfoRaw(ctx, set.accessToken),
    'the access token',
    'its refusal of the ID token and the refresh token shows nothing',
  )
  // RFC 8725 §3.11, RFC 9068 §4: an ID token shares iss, sub, aud and kid, but is not an access token
  // each token is its own sub-case: one accepted does not hide the other
  for (const [what, token] of [
    ['user-info with the ID token as a bearer token', idTokenOf(set)],
    ['user-info with the refresh token as a bearer token', refreshTokenOf(set)],
  ] as const)
    await ctx.subcase(what, async () => {
      expectBearerChallenge(await userInfoRaw(ctx, token), 401, 'invalid_token', what)
    })
})

const UI_10 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid' })
  // the positive control: the scheme as RFC 6750 §2.1 spells it is accepted, so a refusal below
  // is for the spelling; a user-info that refuses every token shows nothing here (UI-01 judges)
  servedForTheCheck(
    await userInfoRaw(ctx, set.accessToken, { scheme: 'Bearer' }),
    '"Authorization: Bearer …"',
    'its refusal of other spellings of the scheme shows nothing',
  )
  // RFC 9110 §11.1: the auth-scheme is case-insensitive
  // each spelling is its own sub-case: one refused does not hide another
  for (const scheme of ['bearer', 'BEARER'])
    await ctx.subcase(`user-info with "Authorization: ${scheme} …"`, async () => {
      const res = await userInfoRaw(ctx, set.accessToken, { scheme })
      const claims = userInfoClaims(res, `user-info with "Authorization: ${scheme} …"`)
      expectThat(typeof claims.sub === 'string', `user-info with scheme ${scheme}: no sub`)
    })
})

const UI_11 = check(async (ctx) => {
  const origin = 'https://rp.example'
  const preflight = await ctx.http.request(USER_INFO, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization',
    },
  })
  expectThat(
    preflight.status >= 200 && preflight.status < 300,
    `CORS preflight: expected 2xx, got ${preflight.status}`,
  )
  const allowOrigin = preflight.headers.get('access-control-allow-origin')
  // OIDC Core §5.3.1: user-info SHOULD support CORS so browser-based clients can call it
  expectThat(
    allowOrigin === '*' || allowOrigin === origin,
    `CORS preflight: Access-Control-Allow-Origin ${JSON.stringify(allowOrigin)}`,
  )
  // Fetch Standard: "*" in Allow-Headers never covers Authorization, so it must be named
  const allowHeaders = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase()
  expectThat(
    allowHeaders.split(',').some((h) => h.trim() === 'authorization'),
    `CORS preflight: Access-Control-Allow-Headers does not name Authorization (${JSON.stringify(allowHeaders)})`,
  )
  const set = await signIn(ctx, { scope: 'openid' })
  // the positive control: the same token without an Origin gets the claims, so a refusal below
  // is for the Origin; a user-info that refuses every token shows nothing here (UI-01 judges it)
  servedForTheCheck(
    await userInfoRaw(ctx, set.accessToken),
    'the access token without an Origin',
    'its answer to a request with an Origin shows nothing',
  )
  const res = await ctx.http.request(USER_INFO, {
    headers: { origin, authorization: `Bearer ${set.accessToken}` },
  })
  expectStatus(res, 200, 'user-info with an Origin')
  const actual = res.headers.get('access-control-allow-origin')
  expectThat(
    actual === '*' || actual === origin,
    `user-info response: Access-Control-Allow-Origin ${JSON.stringify(actual)}`,
  )
})

const UI_12 = check(async (ctx) => {
  const set = await signIn(ctx, { scope: 'openid' })
  const token = set.accessToken
  // the positive control: the same token in the Authorization header gets the claims, so a
  // refusal below is for where the token was put; a user-info that refuses every token shows
  // nothing here (UI-01 judges that)
  const inHeader = await userInfoRaw(ctx, token)
  expectControl(
    inHeader.status === 200,
    `user-info refused the access token in the Authorization header (HTTP ${inHeader.status}), so its refusal of the token in the URI query shows nothing`,
  )
  // RFC 6750 §2.3, §5.3; RFC 9700 §4.3.2: a token in the URL leaks through logs, history and
  // Referer. Each method is its own sub-case: a POST whose query is read as its form (a framework
  // that merges the two) is reported as well as a GET. The URL is not quoted: it holds the token.
  for (const method of ['GET', 'POST'] as const) {
    // (not spelt "access_token=…" in messages: reports redact what follows it as a secret)
    const what = `${method} user-info with the access token in the URI query (access_token parameter)`
    await ctx.subcase(what, async () => {
      const res = await ctx.http.request(USER_INFO, { method, query: { access_token: token } })
      judging(res, () => {
        expectThat(
          res.status < 200 || res.status >= 300,
          `${what}: accepted with HTTP ${res.status} (RFC 6750 §5.3: bearer tokens SHOULD NOT be passed in page URLs)`,
        )
        expectThat(
          res.status >= 400 && res.status < 500,
          `${what}: expected a 4xx refusal, got ${res.status}`,
        )
      })
      // RFC 6750 §3.1: 400 invalid_request, or 401 for a request read as carrying no token
      if (res.status !== 400 && res.status !== 401)
        ctx.note(`${what}: refused with HTTP ${res.status} (RFC 6750 §3, §3.1 name 400 or 401)`)
    })
  }
})

/** The userInfo checks, one per row of catalogue/user-info.ts. */
export const userInfoChecks: AreaChecks<typeof catalogue> = {
  'UI-01': UI_01,
  'UI-02': UI_02,
  'UI-03': UI_03,
  'UI-04': UI_04,
  'UI-05': UI_05,
  'UI-06': UI_06,
  'UI-07': UI_07,
  'UI-08': UI_08,
  'UI-09': UI_09,
  'UI-10': UI_10,
  'UI-11': UI_11,
  'UI-12': UI_12,
}
