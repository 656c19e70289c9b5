import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { accessToken as catalogue } from '../catalogue/access-token.ts'
import type { TargetClient } from '../harness/target.ts'
import { expectEqual, expectSameSet, expectThat, show, SKEW } from '../harness/expect.ts'
import {
  clientCredentials,
  nextRefreshToken,
  refresh,
  serviceClient,
  tokensFor,
} from '../harness/flows.ts'
import { userInfoRaw } from '../harness/requests.ts'
import { decodeJws, nowSeconds, verifySignature } from '../harness/jwt.ts'

type Json = Record<string, unknown>

// ---------------------------------------------------------------------------------------------

const AT_01 = check(async (ctx) => {
  const { body } = await tokensFor(ctx, { scope: 'openid' })
  // RFC 9068 §4: the resource server verifies with the key named by kid, RS256 only
  await verifySignature(ctx, body.access_token, 'access token (authorization_code)')
  const cc = await clientCredentials(ctx, serviceClient(ctx))
  await verifySignature(ctx, cc.access_token, 'access token (client_credentials)')
})

// RFC 9068 §2.1, RFC 7515 §4.1.9: "at+jwt", the "application/" prefix may be written out
const AT_JWT = /^(application\/)?at\+jwt$/i

const AT_02 = check(async (ctx) => {
  const { body } = await tokensFor(ctx, { scope: 'openid' })
  const tokens = [
    ['access token (authorization_code)', body.access_token],
    [
      'access token (client_credentials)',
      (await clientCredentials(ctx, serviceClient(ctx))).access_token,
    ],
  ] as const
  // each token is its own sub-case: one wrong typ does not hide another
  for (const [what, token] of tokens)
    await ctx.subcase(what, async () => {
      const { header } = await verifySignature(ctx, token, what)
      expectThat(
        typeof header.typ === 'string' && AT_JWT.test(header.typ),
        `${what}: header typ: expected "at+jwt", got ${show(header.typ)}`,
      )
    })
  // RFC 9068 §4 (C4): the typ is what tells the two apart, so the ID token must not share it
  await ctx.subcase('the ID token', () => {
    const id = decodeJws(body.id_token, 'ID token')
    expectThat(
      !(typeof id.header.typ === 'string' && AT_JWT.test(id.header.typ)),
      `the ID token header also has typ ${show(id.header.typ)}: an ID token would pass as an access token`,
    )
  })
})

async function checkTimes(ctx: CheckContext, body: Json, what: string): Promise<void> {
  const { payload } = await verifySignature(ctx, body.access_token, what)
  // INTERFACE.md §2.3, §5.6: iss equals the base URL exactly
  expectEqual(payload.iss, ctx.target.baseUrl, `${what} iss`)
  const { exp, iat } = payload
  // RFC 7519 §2 NumericDate: integers here (INTERFACE.md §2.3)
  expectThat(Number.isInteger(exp), `${what}: exp must be an integer, got ${show(exp)}`)
  expectThat(Number.isInteger(iat), `${what}: iat must be an integer, got ${show(iat)}`)
  expectThat(
    typeof body.expires_in === 'number',
    `token response expires_in must be a number, got ${show(body.expires_in)}`,
  )
  const lifetime = (exp as number) - (iat as number)
  expectThat(
    Math.abs(lifetime - body.expires_in) <= 5,
    `${what}: exp - iat is ${lifetime} s but the token response says expires_in ${body.expires_in}`,
  )
  const drift = Math.round((iat as number) - nowSeconds())
  expectThat(
    Math.abs(drift) <= SKEW,
    `${what}: iat is ${drift} s away from the harness clock (more than ${SKEW} s)`,
  )
}

const AT_03 = check(async (ctx) => {
  const { body } = await tokensFor(ctx, { scope: 'openid' })
  await checkTimes(ctx, body, 'access token (authorization_code)')
  await checkTimes(
    ctx,
    await clientCredentials(ctx, serviceClient(ctx)),
    'access token (client_credentials)',
  )
})

const audienceIs = (aud: unknown, clientId: string): boolean =>
  aud === clientId || (Array.isArray(aud) && aud.length === 1 && aud[0] === clientId)

const AT_04 = check(async (ctx) => {
  const main = ctx.target.clients.main
  const { body } = await tokensFor(ctx, { scope: 'openid' })
  const machine = serviceClient(ctx)
  const cc = await clientCredentials(ctx, machine)
  for (const [what, token, client] of [
    ['access token (authorization_code)', body.access_token, main],
    ['access token (client_credentials)', cc.access_token, machine],
  ] as const)
    // each token is its own sub-case: one wrong aud does not hide the other
    await ctx.subcase(what, async () => {
      const { payload } = await verifySignature(ctx, token, what)
      // INTERFACE.md §2.3 and §5.6: aud is the client identifier
      expectThat(
        audienceIs(payload.aud, client.id),
        `${what}: aud: expected ${show(client.id)}, got ${show(payload.aud)}`,
      )
    })
  ctx.note(
    'aud is the client identifier as INTERFACE.md §2.3 says; RFC 9068 §3 would have it identify the resource server',
  )
})

/** Compares two space-separated scope strings as sets; notes a different order. */
function expectSameScope(ctx: CheckContext, claim: unknown, granted: unknown, what: string): void {
  // RFC 9068 §2.2.3: a space-separated string, like RFC 6749 §3.3
  expectThat(
    typeof claim === 'string' && /^[\x21-\x7e]+( [\x21-\x7e]+)*$/.test(claim),
    `${what} scope claim: expected a space-separated string, got ${show(claim)}`,
  )
  expectThat(
    typeof granted === 'string',
    `the token response has no scope string to compare with (INTERFACE.md §2.2), got ${show(granted)}`,
  )
  expectSameSet(claim.split(' '), granted.split(' '), `${what} scope claim vs the granted scope`)
  if (claim !== granted)
    ctx.note(`${what}: scope ${show(claim)} lists ${show(granted)} in another order`)
}

const AT_05 = check(async (ctx) => {
  const { body } = await tokensFor(ctx, { scope: 'openid profile' })
  const at = (await verifySignature(ctx, body.access_token, 'access token')).payload
  const id = (await verifySignature(ctx, body.id_token, 'ID token')).payload
  // the claims are compared one by one as sub-cases: every one that differs is reported
  await ctx.subcase('access token sub', () => {
    expectThat(
      typeof at.sub === 'string' && at.sub.length > 0,
      `access token sub: expected a non-empty string, got ${show(at.sub)}`,
    )
  })
  await ctx.subcase('access token sub vs the ID token sub', () => {
    // RFC 9068 §2.2: the same subject identifier as the ID token for the same user
    expectEqual(at.sub, id.sub, 'access token sub vs the ID token sub')
  })
  await ctx.subcase('access token sub vs the user-info sub', async () => {
    const ui = await userInfoRaw(ctx, body.access_token as string)
    if (ui.status === 200 && ui.json !== null && typeof ui.json === 'object') {
      expectEqual(at.sub, (ui.json as Json).sub, 'access token sub vs the user-info sub')
    } else {
      ctx.note(
        `user-info answered HTTP ${ui.status}, so its sub was not compared (UI-01 checks the endpoint)`,
      )
    }
  })
  const code = 'access token (authorization_code)'
  await ctx.subcase(`${code} scope claim vs the granted scope`, () => {
    expectSameScope(ctx, at.scope, body.scope, code)
  })
  const cc = await clientCredentials(ctx, serviceClient(ctx))
  const ccAt = (await verifySignature(ctx, cc.access_token, 'access token (client_credentials)'))
    .payload
  const machine = 'access token (client_credentials)'
  await ctx.subcase(`${machine} scope claim vs the granted scope`, () => {
    expectSameScope(ctx, ccAt.scope, cc.scope, machine)
  })
})

/** The authorization claims INTERFACE.md §2.3 gives their types. */
interface AuthzClaims {
  readonly roles: string[]
  readonly permissions: string[]
  readonly org_id: string
}

const stringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((x) => typeof x === 'string')

function authzClaims(payload: Json, what: string): AuthzClaims {
  expectThat(
    stringArray(payload.roles),
    `${what}: roles: expected an array of strings, got ${show(payload.roles)}`,
  )
  expectThat(
    stringArray(payload.permissions),
    `${what}: permissions: expected an array of strings, got ${show(payload.permissions)}`,
  )
  expectThat(
    typeof payload.org_id === 'string',
    `${what}: org_id: expected a string, got ${show(payload.org_id)}`,
  )
  return { roles: payload.roles, permissions: payload.permissions, org_id: payload.org_id }
}

/**
 * The fixture users' authorization in conformance-client (REQUIREMENTS.md AT-06; the
 * permissions are what ARCHITECTURE.md's role definitions grant). Only the embedded target is
 * known to hold these fixtures.
 */
const FIXTURE_AUTHZ: Record<string, AuthzClaims> = {
  alice: {
    roles: ['admin'],
    permissions: ['read:documents', 'write:documents', 'admin:users'],
    org_id: 'org-1',
  },
  bob: { roles: ['viewer'], permissions: ['read:documents'], org_id: 'org-2' },
}

/** OIDC Core §5.1 user claims and secrets: none belongs in an access token (RFC 9068 §6). */
const PERSONAL = [
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'email',
  'email_verified',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'phone_number',
  'phone_number_verified',
  'address',
  'updated_at',
  'password',
  'client_secret',
  'secret',
]
const KNOWN = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'client_id',
  'scope',
  'roles',
  'permissions',
  'org_id',
  'auth_time',
  'acr',
  'amr',
])

function expectNoPersonalData(
  ctx: CheckContext,
  payload: Json,
  what: string,
  secrets: readonly string[],
): void {
  const personal = PERSONAL.filter((c) => c in payload)
  expectThat(
    personal.length === 0,
    `${what}: carries personal data or secrets: ${personal.join(', ')}`,
  )
  const text = JSON.stringify(payload)
  // short values would match by accident
  for (const secret of secrets.filter((s) => s.length >= 6))
    expectThat(!text.includes(secret), `${what}: contains a password or client secret in a claim`)
  const extra = Object.keys(payload).filter((c) => !KNOWN.has(c))
  if (extra.length > 0)
    ctx.note(`${what} has claims beyond INTERFACE.md §2.3 and RFC 9068: ${extra.join(', ')}`)
}

function expectSameAuthz(actual: AuthzClaims, expected: AuthzClaims, what: string): void {
  expectSameSet(actual.roles, expected.roles, `${what}: roles`)
  expectSameSet(actual.permissions, expected.permissions, `${what}: permissions`)
  expectEqual(actual.org_id, expected.org_id, `${what}: org_id`)
}

const AT_06 = check(async (ctx) => {
  const { main } = ctx.target.clients
  const { primary, secondary } = ctx.target.users
  const secrets = [primary.password, main.secret, ...(secondary ? [secondary.password] : [])]
  const { body } = await tokensFor(ctx, { scope: 'openid offline_access', offline: true })
  const mine = `access token of ${primary.username}`
  const first = (await verifySignature(ctx, body.access_token, 'access token')).payload
  // the first token's claims are what the refreshed one is compared with
  const claims = authzClaims(first, mine)
  // each token is its own sub-case: personal data in one does not hide wrong roles in another
  await ctx.subcase(mine, () => {
    expectNoPersonalData(ctx, first, mine, secrets)
    const fixture = ctx.target.embedded ? FIXTURE_AUTHZ[primary.username] : undefined
    if (fixture) expectSameAuthz(claims, fixture, mine)
  })

  // ARCHITECTURE.md (roles): a refresh re-reads the same assignment
  const renewed = 'refreshed access token'
  await ctx.subcase(renewed, async () => {
    const refreshed = await refresh(ctx, main, body.refresh_token)
    const again = (await verifySignature(ctx, refreshed.access_token, renewed)).payload
    expectSameAuthz(authzClaims(again, renewed), claims, renewed)
    expectNoPersonalData(ctx, again, renewed, secrets)
  })

  if (!secondary) {
    ctx.note('no secondary user in the target configuration: only the primary user was checked')
  } else {
    const theirs = `access token of ${secondary.username}`
    await ctx.subcase(theirs, async () => {
      const other = await tokensFor(ctx, { scope: 'openid', user: secondary })
      const payload = (await verifySignature(ctx, other.body.access_token, 'access token')).payload
      const authz = authzClaims(payload, theirs)
      expectNoPersonalData(ctx, payload, theirs, secrets)
      const expected = ctx.target.embedded ? FIXTURE_AUTHZ[secondary.username] : undefined
      if (expected) expectSameAuthz(authz, expected, theirs)
    })
  }
  if (!ctx.target.embedded)
    ctx.note(
      'the exact fixture values (alice: admin, org-1; bob: viewer, org-2) are checked on the embedded target only; here types, stability across refresh and the absence of personal data were checked',
    )
})

const TOKENS_FOR_JTI = 50

const AT_07 = check(async (ctx) => {
  const { main } = ctx.target.clients
  const seen = new Map<string, string>()
  const add = async (token: unknown, client: TargetClient, what: string): Promise<void> => {
    const { payload } = await verifySignature(ctx, token, what)
    // RFC 9068 §2.2: client_id names the client the token was issued to
    expectEqual(payload.client_id, client.id, `${what} client_id`)
    const jti = payload.jti
    expectThat(
      typeof jti === 'string' && jti.length > 0,
      `${what}: jti must be a non-empty string, got ${show(jti)}`,
    )
    // RFC 7519 §4.1.7: unique, so that replays and revocations can be told apart
    const earlier = seen.get(jti)
    expectThat(earlier === undefined, `${what} repeats the jti ${show(jti)} of ${earlier ?? ''}`)
    seen.set(jti, what)
  }
  let refreshToken: unknown
  for (let i = 1; i <= 3; i++) {
    const { body } = await tokensFor(ctx, { scope: 'openid offline_access', offline: true })
    await add(body.access_token, main, `access token #${seen.size + 1} (authorization_code)`)
    refreshToken ??= body.refresh_token
  }
  if (typeof refreshToken === 'string') {
    let current = refreshToken
    for (let i = 0; i < 17; i++) {
      const r = await refresh(ctx, main, current)
      await add(r.access_token, main, `access token #${seen.size + 1} (refresh_token)`)
      // a rotating server gets the new refresh token back, never the one it replaced
      current = nextRefreshToken(r, current)
    }
  } else {
    ctx.note('no refresh_token was issued: the jti sample uses client_credentials tokens instead')
  }
  const machines = [main, ...(ctx.target.clients.service ? [ctx.target.clients.service] : [])]
  for (let i = 0; seen.size < TOKENS_FOR_JTI; i++) {
    const client = machines[i % machines.length] ?? main
    const cc = await clientCredentials(ctx, client)
    await add(
      cc.access_token,
      client,
      `access token #${seen.size + 1} (client_credentials, ${client.id})`,
    )
  }
})

/** The accessToken checks, one per row of catalogue/access-token.ts. */
export const accessTokenChecks: AreaChecks<typeof catalogue> = {
  'AT-01': AT_01,
  'AT-02': AT_02,
  'AT-03': AT_03,
  'AT-04': AT_04,
  'AT-05': AT_05,
  'AT-06': AT_06,
  'AT-07': AT_07,
}
