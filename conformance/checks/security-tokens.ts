import { type AreaChecks, check } from '../harness/check.ts'
import type { security as catalogue } from '../catalogue/security.ts'
import { estimateEntropyBits } from '../harness/entropy.ts'
import type { HttpResponse } from '../harness/http.ts'
import { expectJsonObject, expectStatus, expectThat, show } from '../harness/expect.ts'
import { idpCookies } from '../harness/session.ts'
import { authorize, codeOf, idTokenOf, redeem, signIn, someAccessToken } from '../harness/flows.ts'
import {
  clientCredentialsRaw,
  credentials,
  INTROSPECT,
  introspectRaw,
  REVOKE,
  TOKEN,
} from '../harness/requests.ts'
import { claimsOf } from '../harness/jwt.ts'
import { unverifiedAccessTokenClaims } from '../harness/access-token.ts'

const SEC_03 = check(async (ctx) => {
  // RFC 9207 binds a server that supports it: §2 "an authorization server supporting this
  // specification MUST indicate its identity by including the iss parameter in the response",
  // §2.3 "The server MUST indicate its support … by setting the metadata parameter
  // authorization_response_iss_parameter_supported … to true" (omitted, it means false). Either
  // sign of support makes both MUSTs apply; the response is judged by its own iss, whatever a
  // client library would make of it
  const doc = await ctx.http.get('/.well-known/openid-configuration')
  const advertised = expectJsonObject(
    doc,
    'discovery',
  ).authorization_response_iss_parameter_supported
  const auth = await authorize(ctx)
  codeOf(auth)
  const iss = auth.callback?.searchParams.get('iss') ?? null
  if (advertised !== true && iss === null)
    return ctx.skip(
      `the provider does not support RFC 9207: its authorization response carries no iss and discovery says authorization_response_iss_parameter_supported: ${show(advertised)}, so its MUSTs do not apply (clients need another mix-up defense, RFC 9700 §4.4.2)`,
    )
  // the metadata and the response are sub-cases: a provider wrong in both is told both
  await ctx.subcase('mix-up defense', () =>
    expectThat(
      advertised === true,
      `mix-up defense: the authorization response carries iss, so discovery must say authorization_response_iss_parameter_supported: true (RFC 9207 §2.3), got ${show(advertised)}`,
    ),
  )
  await ctx.subcase('mix-up defense', () =>
    expectThat(
      iss === ctx.target.baseUrl,
      `mix-up defense: the authorization response must carry iss=${ctx.target.baseUrl} (RFC 9207 §2), got ${show(iss)}`,
    ),
  )
})

/** A response that must not have honoured credentials: a 4xx without a token or token data. */
function expectRefusedCredentials(res: HttpResponse, what: string): void {
  // the body is not quoted when it holds a token: messages are not redacted like exchanges
  const leaked = /"(access_token|refresh_token|id_token)"|"active"\s*:\s*true/.test(res.text)
  const shown = leaked ? 'with a token or token data' : res.text.slice(0, 150)
  expectThat(
    res.status >= 400 && res.status < 500,
    `${what}: expected a 4xx refusal, got ${res.status} ${shown}`,
  )
  expectThat(!leaked, `${what}: the ${res.status} refusal carries a token or token data`)
}

const SEC_04 = check(async (ctx) => {
  // RFC 6749 §2.3.1: client credentials MUST NOT be included in the request URI
  const { token, client } = await someAccessToken(ctx)
  // whether a refused revocation revoked anything can only be seen on a token that introspects
  // active (some providers introspect their JWT access tokens as inactive)
  const before = await introspectRaw(ctx, token, { client })
  const observable = (before.json as { active?: unknown } | null)?.active === true
  if (!observable) ctx.note('the token does not introspect active, so revocation is not observed')
  const query = credentials(client)
  const endpoints: { path: string; body: Record<string, string> }[] = [
    { path: INTROSPECT, body: { token } },
    { path: REVOKE, body: { token } },
  ]
  // the token request must be valid in every respect but where its credentials are: only a
  // client granted client_credentials (as the body form shows) makes a refusal mean anything
  const control =
    client === ctx.target.clients.service ? undefined : await clientCredentialsRaw(ctx, client)
  if (control === undefined || control.status === 200)
    endpoints.unshift({ path: TOKEN, body: { grant_type: 'client_credentials' } })
  else
    ctx.note(
      `the token endpoint was not tried: client ${client.id} is refused client_credentials with its credentials in the body too (${control.status}), so a refusal with them in the URL would prove nothing`,
    )
  // each request is its own sub-case: every endpoint that takes credentials from the URL is reported
  for (const { path, body } of endpoints) {
    const posted = `credentials in the URL query of POST ${path}`
    await ctx.subcase(posted, async () => {
      const inQuery = await ctx.http.request(path, { method: 'POST', query, form: body })
      expectRefusedCredentials(inQuery, posted)
    })
    const got = `GET ${path} with every parameter in the URL`
    await ctx.subcase(got, async () => {
      // RFC 6749 §3.2, RFC 7662 §2.1, RFC 7009 §2.1: these endpoints take POST only
      expectRefusedCredentials(await ctx.http.get(path, { ...body, ...query }), got)
    })
  }
  // neither refused revocation may have revoked the token
  if (!observable) return
  const still = await introspectRaw(ctx, token, { client })
  expectStatus(still, 200, 'introspection of the token afterwards')
  expectThat(
    (still.json as { active?: unknown } | null)?.active === true,
    'a revocation request with its credentials in the URL revoked the token',
  )
})

const SEC_05 = check(async (ctx) => {
  // RFC 9700 §2.4: the resource owner password credentials grant MUST NOT be used
  const user = ctx.target.users.primary
  const res = await ctx.http.postForm(TOKEN, {
    grant_type: 'password',
    username: user.username,
    password: user.password,
    scope: 'openid',
    ...credentials(ctx.target.clients.main),
  })
  expectThat(
    !/"(access_token|refresh_token|id_token)"/.test(res.text),
    `the password grant issued a token (RFC 9700 §2.4: it MUST NOT be used): ${res.status}`,
  )
  expectStatus(res, [400, 401], 'password grant')
  const body = expectJsonObject(res, 'password grant error')
  expectThat(
    body.error === 'unsupported_grant_type' || body.error === 'unauthorized_client',
    `the password grant must be refused with unsupported_grant_type or unauthorized_client, got error=${show(body.error)}`,
  )
})

/** How many codes, refresh tokens and sessions SEC-06 samples. */
const SAMPLES = 8
/** How many of SEC-06's sign-ins run at once. */
const SIGN_INS_AT_ONCE = 4

const SEC_06 = check(async (ctx) => {
  // RFC 6749 §10.10: guessing a generated token MUST have a probability of at most 2^-128
  const codes: string[] = []
  const refreshTokens: string[] = []
  for (let i = 0; i < SAMPLES; i++) {
    const auth = await authorize(ctx, { scope: 'openid offline_access', offline: true })
    const code = codeOf(auth)
    codes.push(code)
    const res = await redeem(ctx, auth)
    expectStatus(res, 200, 'token response')
    const rt = (res.json as { refresh_token?: unknown }).refresh_token
    if (typeof rt === 'string') refreshTokens.push(rt)
  }
  const judge = (what: string, samples: readonly string[]) => {
    expectThat(
      new Set(samples).size === samples.length,
      `${what}: ${samples.length - new Set(samples).size} repeated among ${samples.length} samples`,
    )
    const bits = estimateEntropyBits(samples)
    ctx.note(`${what}: an estimated ${Math.round(bits)} bits each (${samples.length} samples)`)
    // a few samples can make a random position look less varied than it is: an estimate within
    // two symbols of 128 bits cannot tell 126 from 130, so only a clear shortfall fails
    const slack = 2 * Math.log2(Math.max(2, new Set(samples.join('')).size))
    expectThat(
      bits >= 128 - slack,
      `${what} carry an estimated ${Math.round(bits)} bits of entropy, fewer than the 128 RFC 6749 §10.10 requires`,
    )
    if (bits < 128)
      ctx.note(
        `${what}: ${Math.round(bits)} bits is within the estimate's error of 128; not judged a failure`,
      )
  }
  // codes, refresh tokens and session identifiers are made independently: each is a sub-case
  await ctx.subcase('authorization codes', () => judge('authorization codes', codes))
  if (refreshTokens.length >= 2)
    await ctx.subcase('refresh tokens', () => judge('refresh tokens', refreshTokens))
  else ctx.note('no refresh tokens were issued for offline_access, so none were sampled')
  // session identifiers: the HttpOnly cookies a fresh sign-in sets, compared across sign-ins.
  // Its subject is the session a sign-in creates, so each sample is a sign-in of its own (a
  // shared session has one value): the login form posted over HTTP, the cookies the IdP set
  // handed to a fresh context (through the browser when the form post cannot sign in). The
  // sign-ins are independent, so they run a few at a time.
  const values = new Map<string, string[]>()
  const sample = async (): Promise<void> => {
    const fresh = await ctx.newBrowserContext()
    codeOf(await authorize(ctx, { context: fresh, byFormPost: true }))
    for (const c of await idpCookies(ctx, fresh))
      if (c.httpOnly) values.set(c.name, [...(values.get(c.name) ?? []), c.value])
    await fresh.close()
  }
  for (let i = 0; i < SAMPLES; i += SIGN_INS_AT_ONCE)
    await Promise.all(
      Array.from({ length: Math.min(SIGN_INS_AT_ONCE, SAMPLES - i) }, () => sample()),
    )
  const sessionCookies = [...values].filter(([, v]) => v.length === SAMPLES && new Set(v).size > 1)
  if (sessionCookies.length === 0)
    ctx.note('no HttpOnly cookie varies across sign-ins, so no session identifier was sampled')
  for (const [name, samples] of sessionCookies)
    await ctx.subcase(`session cookie ${name}`, () => judge(`session cookie ${name}`, samples))
})

const SEC_10 = check(async (ctx) => {
  // RFC 9700 §4.15.1: a client's own token must not be taken for a resource owner's
  const users = [ctx.target.users.primary, ctx.target.users.secondary].filter(
    (u) => u !== undefined,
  )
  const userSubs = new Set<string>()
  for (const user of users) {
    const set = await signIn(ctx, { scope: 'openid', user })
    const sub = claimsOf(idTokenOf(set)).sub
    expectThat(typeof sub === 'string', `the ID token of ${user.username} has no sub`)
    userSubs.add(sub)
  }
  const clients = [ctx.target.clients.service, ctx.target.clients.main].filter(
    (c) => c !== undefined,
  )
  let tried = 0
  for (const client of clients) {
    const res = await clientCredentialsRaw(ctx, client)
    if (res.status !== 200) {
      ctx.note(`client ${client.id}: client_credentials answered ${res.status}`)
      continue
    }
    tried++
    const token = String(expectJsonObject(res, 'token').access_token)
    const { sub } = await unverifiedAccessTokenClaims(ctx, token, { client })
    expectThat(
      typeof sub !== 'string' || !userSubs.has(sub),
      `the client_credentials token of ${client.id} has sub ${show(sub)}, the sub of a user: a resource server would take the client for that user (RFC 9700 §4.15)`,
    )
  }
  if (tried === 0) ctx.skip('no configured client was granted a client_credentials token')
})

/**
 * The security checks of codes, tokens and client credentials: iss against mix-up, no
 * credentials in the URL, no password grant, unguessable codes and tokens, a client's token
 * never a user's (the other rows of catalogue/security.ts: security-throttling.ts, security-sessions.ts, security-leaks.ts).
 */
export const securityTokenChecks = {
  'SEC-03': SEC_03,
  'SEC-04': SEC_04,
  'SEC-05': SEC_05,
  'SEC-06': SEC_06,
  'SEC-10': SEC_10,
} satisfies Partial<AreaChecks<typeof catalogue>>
