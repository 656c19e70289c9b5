import { type AreaChecks, check } from '../harness/check.ts'
import type { clientCredentials as catalogue } from '../catalogue/client-credentials.ts'
import { oidc, oidcConfig } from '../harness/oidc.ts'
import {
  expectBearerLifetime,
  about,
  expectEqual,
  expectJsonObject,
  expectNoStore,
  expectOAuthError,
  expectScope,
  expectStatus,
  expectThat,
  scopeList,
  show,
} from '../harness/expect.ts'
import { clientCredentialsScope, serviceClient, skipUnlessScoped } from '../harness/flows.ts'
import { clientCredentialsRaw } from '../harness/requests.ts'
import { claimsOf, verifyJwt } from '../harness/jwt.ts'
import {
  FORMAT_JUDGED_BY,
  isCompactJws,
  unverifiedAccessTokenClaims,
} from '../harness/access-token.ts'

/**
 * Scopes a client acting for itself never gets, asked or by default: OIDC Core §11, the AS
 * "MUST ignore the offline_access request unless the Client is using a response_type value that
 * would result in an Authorization Code being returned"; openid, profile and email ask for the
 * End-User's identity and claims (INTERFACE.md §2.1, OIDC Core §5.4), and a client_credentials
 * client acts on its own behalf with no End-User (RFC 6749 §4.4).
 */
const USER_SCOPES = ['openid', 'profile', 'email', 'offline_access']

/** How a request's scope reads in a message. */
const asked = (scope: string | undefined): string =>
  scope === undefined ? 'no scope' : `scope ${scope}`

const CC_01 = check(async (ctx) => {
  const service = serviceClient(ctx)
  // the configured scope; without one, the request goes without scope (RFC 6749 §3.3)
  const SCOPE = clientCredentialsScope(service)
  const res = await clientCredentialsRaw(ctx, service, SCOPE)
  skipUnlessScoped(ctx, service, res)
  const raw = 'client_credentials response'
  expectStatus(res, 200, raw)
  const body = expectJsonObject(res, raw)
  // RFC 6749 §5.1: token responses MUST NOT be cached; a sub-case, as the body is judged apart
  await ctx.subcase(raw, () => expectNoStore(res, raw))

  // RFC 6749 §4.4.3, §5.1; INTERFACE.md §4.2: access_token, token_type, expires_in, scope; read
  // from the raw answer, as openid-client refuses a token_type other than Bearer on its own
  expectThat(
    typeof body.access_token === 'string' && body.access_token !== '',
    `access_token: expected a non-empty string, got ${JSON.stringify(body.access_token)}`,
  )
  expectBearerLifetime({ token_type: String(body.token_type), expires_in: body.expires_in })
  // and as a client library reads it
  const config = await oidcConfig(ctx, service)
  const tokens = await oidc.clientCredentialsGrant(
    config,
    SCOPE === undefined ? {} : { scope: SCOPE },
  )
  if (SCOPE === undefined) {
    // nothing was asked for, so the granted default is only reported (CC-03 judges user scopes)
    ctx.note(
      `no scope configured or requested: the default ${JSON.stringify(body.scope ?? null)} was granted`,
    )
    return
  }
  expectScope(body.scope, SCOPE, 'scope of the client_credentials response')
  expectScope(tokens.scope, SCOPE, 'scope of the client_credentials response (openid-client)')
})

const CC_02 = check(async (ctx) => {
  const service = serviceClient(ctx)
  const SCOPE = clientCredentialsScope(service)
  // each request is its own sub-case: a token too many in one does not hide the other's
  for (const scope of SCOPE === undefined ? [undefined] : [SCOPE, undefined]) {
    const what = `client_credentials response (${asked(scope)})`
    await ctx.subcase(what, async () => {
      const res = await clientCredentialsRaw(ctx, service, scope)
      if (scope === undefined && res.status === 400) {
        skipUnlessScoped(ctx, service, res)
        return
      }
      expectStatus(res, 200, what)
      const body = expectJsonObject(res, what)
      // INTERFACE.md §4.2: no ID token, there is no end-user (OIDC Core §2)
      expectThat(!('id_token' in body), `${what}: carries an id_token`)
      // INTERFACE.md §2.2 (RFC 6749 §4.4.3: SHOULD NOT): no refresh token for client_credentials
      expectThat(!('refresh_token' in body), `${what}: carries a refresh_token`)
    })
  }
})

const CC_03 = check(async (ctx) => {
  const service = serviceClient(ctx)
  // run with or without a configured scope: a user scope granted by default is never hidden
  const SCOPE = clientCredentialsScope(service)
  // each request is its own sub-case: every scope wrongly granted is reported, not only the first
  const without = 'client_credentials without scope'
  await ctx.subcase(without, async () => {
    const none = await clientCredentialsRaw(ctx, service)
    if (none.status === 200) {
      const body = expectJsonObject(none, without)
      // RFC 6749 §3.3: a request without scope is processed with a pre-defined default, which
      // may be empty; §5.1 lets the response omit scope when it is the one requested (none)
      const granted = scopeList(body.scope)
      expectThat(
        !granted.some((s) => USER_SCOPES.includes(s)),
        `${without}: a user scope was granted ("${String(body.scope)}")`,
      )
      const claim =
        typeof body.access_token === 'string'
          ? (await unverifiedAccessTokenClaims(ctx, body.access_token, { client: service })).scope
          : ''
      expectThat(
        !scopeList(claim).some((s) => USER_SCOPES.includes(s)),
        `${without}: the access token carries a user scope ("${String(claim)}")`,
      )
      ctx.note(
        granted.length > 0
          ? `no scope requested: the default "${String(body.scope)}" was granted`
          : 'no scope requested: a token without scope was granted (an empty default, RFC 6749 §3.3)',
      )
    } else {
      about(without, () => expectOAuthError(none, 400, 'invalid_scope'))
    }
  })

  // write:documents is a scope the embedded fixtures' service client may not have; of another
  // deployment's clients nothing is known but the scopes the configuration names
  const forbidden = [
    ...USER_SCOPES,
    'no-such:scope',
    ...(ctx.target.embedded && service === ctx.target.clients.service ? ['write:documents'] : []),
  ]
  const requests = [
    ...forbidden.map((s) => ({ scope: SCOPE === undefined ? s : `${SCOPE} ${s}`, bad: s })),
    ...(SCOPE === undefined ? [] : [{ scope: 'openid', bad: 'openid' }]),
  ]
  for (const { scope, bad } of requests) {
    const what = `client_credentials with scope "${scope}"`
    await ctx.subcase(what, async () => {
      const res = await clientCredentialsRaw(ctx, service, scope)
      if (res.status !== 200) {
        // RFC 6749 §5.2: a scope the client may not have is invalid_scope
        about(what, () => expectOAuthError(res, 400, 'invalid_scope'))
        return
      }
      const body = expectJsonObject(res, what)
      // RFC 6749 §3.3: the server may drop what it will not grant, and says so in scope
      expectThat(typeof body.scope === 'string', `${what}: 200 without a scope in the response`)
      expectThat(!scopeList(body.scope).includes(bad), `${what}: "${bad}" was granted`)
      const claim = (
        await unverifiedAccessTokenClaims(ctx, String(body.access_token), { client: service })
      ).scope
      expectThat(!scopeList(claim).includes(bad), `${what}: the access token carries "${bad}"`)
      ctx.note(`${what}: "${bad}" was dropped (granted "${body.scope}")`)
    })
  }
})

const CC_04 = check(async (ctx) => {
  const service = serviceClient(ctx)
  const res = await clientCredentialsRaw(ctx, service, clientCredentialsScope(service))
  skipUnlessScoped(ctx, service, res)
  expectStatus(res, 200, 'client_credentials response')
  const token = String(expectJsonObject(res, 'client_credentials response').access_token)
  const { payload } = await verifyJwt(ctx, token, { audience: service.id })
  // each claim is its own sub-case (named as its message begins): one wrong hides no other
  // RFC 9068 §2.2: without a resource owner, sub is the client's own identifier
  const sub = 'sub of a client_credentials access token'
  await ctx.subcase(sub, () => expectEqual(payload.sub, service.id, sub))
  // INTERFACE.md §2.3: aud is the client identifier
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
  await ctx.subcase('aud', () =>
    expectThat(
      aud.length === 1 && aud[0] === service.id,
      `aud: expected "${service.id}", got ${JSON.stringify(payload.aud)}`,
    ),
  )
  const userClaims = ['name', 'email', 'email_verified', 'picture', 'updated_at']
  await ctx.subcase('user claims', () => {
    for (const claim of userClaims)
      expectThat(!(claim in payload), `user claims: a client_credentials token carries ${claim}`)
  })
})

/** How far exp - iat of an introspected token may be from the token response's expires_in. */
const LIFETIME_SLACK_S = 10

const CC_05 = check(async (ctx) => {
  const service = serviceClient(ctx)
  const SCOPE = clientCredentialsScope(service)
  const config = await oidcConfig(ctx, service)
  skipUnlessScoped(ctx, service, await clientCredentialsRaw(ctx, service, SCOPE))
  const tokens = await oidc.clientCredentialsGrant(
    config,
    SCOPE === undefined ? {} : { scope: SCOPE },
  )
  // a token that is not a JWT has no claims of its own to compare with (AT-01 and JWKS-04 judge
  // its format): introspection is judged by INTERFACE.md §2.5's field set and the token response
  const jwt = isCompactJws(tokens.access_token)
  const claims = jwt ? claimsOf(tokens.access_token) : {}
  if (!jwt)
    ctx.note(
      `the access token is not a JWT: introspection is judged by INTERFACE.md §2.5 and the token response's expires_in (${FORMAT_JUDGED_BY})`,
    )
  const result = await oidc.tokenIntrospection(config, tokens.access_token)
  // RFC 7662 §2.2; INTERFACE.md §2.5: the full field set for an active token; an inactive
  // answer has no other field to judge
  expectEqual(result.active, true, 'active')
  // each field is its own sub-case (named as its message begins): one wrong hides no other
  const field = (what: string, expectation: () => void) => ctx.subcase(what, expectation)
  await field('client_id', () => expectEqual(result.client_id, service.id, 'client_id'))
  const scope = 'scope (the granted scope)'
  // RFC 6749 §5.1: an omitted scope is the one requested; with none requested, the token's
  const granted = tokens.scope ?? SCOPE ?? (typeof claims.scope === 'string' ? claims.scope : '')
  await field(scope, () => expectScope(result.scope, granted, scope))
  if (jwt) {
    const sub = 'sub (the access token sub)'
    await field(sub, () => expectEqual(result.sub, claims.sub, sub))
    await field('exp', () => expectEqual(result.exp, claims.exp, 'exp'))
    await field('iat', () => expectEqual(result.iat, claims.iat, 'iat'))
  } else {
    // INTERFACE.md §2.5: sub, exp and iat are present for an active token
    await field('sub', () =>
      expectThat(typeof result.sub === 'string', `sub: expected a string, got ${show(result.sub)}`),
    )
    await field('exp', () => {
      expectThat(Number.isInteger(result.exp), `exp: expected an integer, got ${show(result.exp)}`)
      expectThat(Number.isInteger(result.iat), `iat: expected an integer, got ${show(result.iat)}`)
      // RFC 6749 §5.1: expires_in is the token's lifetime from the response
      const expiresIn = tokens.expires_in
      if (typeof expiresIn === 'number') {
        const lifetime = Number(result.exp) - Number(result.iat)
        expectThat(
          Math.abs(lifetime - expiresIn) <= LIFETIME_SLACK_S,
          `exp: exp - iat is ${lifetime} s, the token response's expires_in ${expiresIn}`,
        )
      }
    })
  }
  if (result.sub !== service.id)
    ctx.note(`sub is "${String(result.sub)}", not the client id (CC-04)`)
})

/** The clientCredentials checks, one per row of catalogue/client-credentials.ts. */
export const clientCredentialsChecks: AreaChecks<typeof catalogue> = {
  'CC-01': CC_01,
  'CC-02': CC_02,
  'CC-03': CC_03,
  'CC-04': CC_04,
  'CC-05': CC_05,
}
