import { randomBytes } from 'node:crypto'
import { estimateEntropyBits } from '../harness/entropy.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { token as catalogue } from '../catalogue/token.ts'
import type { HttpResponse } from '../harness/http.ts'
import type { TargetClient } from '../harness/target.ts'
import {
  about,
  expectControl,
  expectJsonObject,
  expectOAuthError,
  expectStatus,
  expectThat,
  scopeTokens,
  show,
  wrongMethod,
} from '../harness/expect.ts'
import { tokensFor } from '../harness/flows.ts'
import {
  clientCredentialsRaw,
  credentials,
  DISCOVERY,
  endpointLabel,
  refreshRaw,
  TOKEN,
} from '../harness/requests.ts'
import { DEFAULT_ACCESS_TOKEN_LIFETIME_S } from '../harness/needs.ts'
import { accessTokenFacts } from '../harness/access-token.ts'

/**
 * The positive control of a check whose subject is a refusal at the token endpoint: the same
 * client's well-formed request gets tokens there. Refused, the refusals below prove nothing and
 * the check is inconclusive (CC-01 judges a client_credentials grant that fails).
 */
function grantedForTheCheck(res: HttpResponse, what: string): void {
  expectControl(
    res.status === 200,
    `${what}: expected HTTP 200, got ${res.status} ${show(res.json ?? res.text.slice(0, 200))}`,
  )
}

/** One successful token response per grant of INTERFACE.md §4.2. */
async function oneResponsePerGrant(
  ctx: CheckContext,
): Promise<{ grant: string; res: HttpResponse }[]> {
  const { body, res, auth } = await tokensFor(ctx, {
    scope: 'openid profile offline_access',
    offline: true,
  })
  const refreshToken = body.refresh_token
  expectThat(
    typeof refreshToken === 'string',
    'no refresh_token for scope offline_access, so the refresh grant cannot be tried',
  )
  const refreshed = await refreshRaw(ctx, refreshToken, { client: auth.client })
  expectStatus(refreshed, 200, 'refresh_token grant')
  const cc = await clientCredentialsRaw(ctx, ctx.target.clients.main)
  expectStatus(cc, 200, 'client_credentials grant')
  return [
    { grant: 'authorization_code', res },
    { grant: 'refresh_token', res: refreshed },
    { grant: 'client_credentials', res: cc },
  ]
}

/** The comma-separated directives of a header, lower-cased. */
const directives = (res: HttpResponse, name: string): string[] =>
  (res.headers.get(name) ?? '')
    .toLowerCase()
    .split(',')
    .map((d) => d.trim())

const TOK_01 = check(async (ctx) => {
  // each grant's response is its own sub-case: every one that may be cached is reported
  for (const { grant, res } of await oneResponsePerGrant(ctx))
    await ctx.subcase(grant, () => {
      // RFC 6749 §5.1: MUST include Cache-Control: no-store and Pragma: no-cache
      expectThat(
        directives(res, 'cache-control').includes('no-store'),
        `${grant}: Cache-Control ${JSON.stringify(res.headers.get('cache-control'))} lacks no-store`,
      )
      expectThat(
        directives(res, 'pragma').includes('no-cache'),
        `${grant}: Pragma ${JSON.stringify(res.headers.get('pragma'))} is not no-cache`,
      )
    })
  // RFC 6749 §5.2 shows the same headers on errors: a SHOULD, so only noted
  const error = await clientCredentialsRaw(ctx, {
    ...ctx.target.clients.main,
    secret: `${ctx.target.clients.main.secret}-wrong`,
  })
  const errorCached =
    !directives(error, 'cache-control').includes('no-store') ||
    !directives(error, 'pragma').includes('no-cache')
  if (errorCached)
    ctx.note(
      `error responses lack Cache-Control: no-store / Pragma: no-cache (HTTP ${error.status})`,
    )
})

/** RFC 6749 §3.3: scope = scope-token *( SP scope-token ), scope-token = 1*NQCHAR. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/

const TOK_02 = check(async (ctx) => {
  // each grant's response is its own sub-case: every one that deviates is reported
  for (const { grant, res } of await oneResponsePerGrant(ctx))
    await ctx.subcase(grant, async () => {
      // RFC 6749 §5.1: application/json
      const body = expectJsonObject(res, `${grant}: token response`)
      // RFC 6749 §5.1, §7.1: token_type is compared case-insensitively
      expectThat(
        typeof body.token_type === 'string' && body.token_type.toLowerCase() === 'bearer',
        `${grant}: token_type ${JSON.stringify(body.token_type)} is not Bearer`,
      )
      if (body.token_type !== 'Bearer')
        ctx.note(`${grant}: token_type is ${JSON.stringify(body.token_type)}, the seed says Bearer`)
      const expiresIn = body.expires_in
      expectThat(
        typeof expiresIn === 'number' && Number.isInteger(expiresIn),
        `${grant}: expires_in ${JSON.stringify(expiresIn)} is not a JSON integer`,
      )
      expectThat(
        expiresIn > 0 && expiresIn <= 31_536_000,
        `${grant}: expires_in ${expiresIn} is outside 1 s to one year`,
      )
      const declared = ctx.target.accessTokenLifetime
      if (expiresIn !== (declared ?? DEFAULT_ACCESS_TOKEN_LIFETIME_S))
        ctx.note(
          declared === undefined
            ? `${grant}: expires_in ${expiresIn}, the interface's default is ${DEFAULT_ACCESS_TOKEN_LIFETIME_S} (declare another lifetime as accessTokenLifetime in the target configuration)`
            : `${grant}: expires_in ${expiresIn}, the target configuration's accessTokenLifetime is ${declared}`,
        )
      expectThat(
        typeof body.scope === 'string' && SCOPE.test(body.scope),
        `${grant}: scope ${JSON.stringify(body.scope)} is not a space-delimited scope string`,
      )
      // the granted scope is what the access token carries
      // (a token that is not a JWT is read through introspection)
      const { claims: payload } = await accessTokenFacts(ctx, String(body.access_token))
      const granted = new Set(scopeTokens(payload.scope) ?? [])
      const said = scopeTokens(body.scope) ?? []
      expectThat(
        said.length === granted.size && said.every((s) => granted.has(s)),
        `${grant}: response scope ${JSON.stringify(body.scope)} differs from the access token's ${JSON.stringify(payload.scope)}`,
      )
    })
})

/** A token request's client credentials, named as the check's messages begin. */
interface Credentials {
  readonly what: string
  readonly form: Record<string, string>
}

/**
 * The requests TOK-03 refuses; TOK-08 compares the first two (a wrong secret and an unknown
 * client_id).
 */
function badCredentials(main: TargetClient): [Credentials, Credentials, ...Credentials[]] {
  const unknownId = `no-such-client-${randomBytes(6).toString('hex')}`
  return [
    { what: 'a wrong secret', form: { client_id: main.id, client_secret: `${main.secret}x` } },
    { what: 'an unknown client_id', form: { client_id: unknownId, client_secret: main.secret } },
    { what: 'an empty secret', form: { client_id: main.id, client_secret: '' } },
    { what: 'no secret', form: { client_id: main.id } },
  ]
}

const TOK_03 = check(async (ctx) => {
  const main = ctx.target.clients.main
  // the control: the same request with the right secret gets tokens
  grantedForTheCheck(await clientCredentialsRaw(ctx, main), 'control with the right secret')
  // each request is its own sub-case: one accepted does not hide another refused wrongly
  for (const c of badCredentials(main))
    await ctx.subcase(c.what, async () => {
      const res = await ctx.http.postForm(TOKEN, { grant_type: 'client_credentials', ...c.form })
      expectThat(res.status !== 200, `${c.what}: got tokens (HTTP 200)`)
      // RFC 6749 §5.2: invalid_client, 401 (400 tolerated when no Authorization header was sent)
      about(c.what, () => expectOAuthError(res, [400, 401], 'invalid_client'))
      if (res.status === 400) ctx.note(`${c.what}: 400 instead of 401 for invalid_client (WARN)`)
    })
})

const TOK_08 = check(async (ctx) => {
  const main = ctx.target.clients.main
  grantedForTheCheck(await clientCredentialsRaw(ctx, main), 'control with the right secret')
  const [wrong, unknown] = badCredentials(main)
  const answer = async (c: Credentials) => {
    const res = await ctx.http.postForm(TOKEN, { grant_type: 'client_credentials', ...c.form })
    // what is compared is two refusals; whether each is the right one is TOK-03's subject
    expectControl(
      res.status === 400 || res.status === 401,
      `${c.what} was not refused with 400 or 401 (HTTP ${res.status}): TOK-03 judges that; there are no two refusals to compare`,
    )
    const body = res.json as { error?: unknown } | undefined
    return {
      full: `${res.status} ${JSON.stringify(res.json ?? res.text)}`,
      code: `${res.status} ${JSON.stringify(body?.error ?? null)}`,
    }
  }
  const [a, again, b] = [await answer(wrong), await answer(wrong), await answer(unknown)]
  // hardening (RFC 6819 §4.1.1: online guessing of client credentials): an unknown client and
  // a wrong secret are not told apart. No MUST asks for it (RFC 6749 §2.2: a client identifier
  // "is not a secret"), hence SHOULD. A body that differs between two identical requests (a
  // request id, a timestamp) tells nothing apart: then only the status and error are compared
  const same = a.full === again.full
  if (!same)
    ctx.note(
      'two identical wrong-secret requests got different bodies (per-request values): only the status and error code are compared',
    )
  const [x, y] = same ? [a.full, b.full] : [a.code, b.code]
  expectThat(x === y, `wrong secret and unknown client answer differently: ${x} vs ${y}`)
})

/** RFC 6749 §2.3.1: form-urlencode id and secret, then Base64 of "id:secret". */
const basic = (client: TargetClient): string =>
  `Basic ${Buffer.from(
    `${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`,
  ).toString('base64')}`

const TOK_04 = check(async (ctx) => {
  const main = ctx.target.clients.main
  const res = await ctx.http.postForm(
    TOKEN,
    { grant_type: 'client_credentials' },
    { authorization: basic(main) },
  )
  if (res.status === 200) {
    const body = expectJsonObject(res, 'token response')
    expectThat(typeof body.access_token === 'string', 'a 200 without an access_token')
    // flagged, not failed: RFC 6749 §2.3.1 says the AS MUST support Basic, and INTERFACE.md
    // §1, §5.3 name client_secret_post without forbidding another method (ARCHITECTURE.md C1);
    // discovery listing every method the endpoint takes is OIDC Discovery §3's
    const doc = (await ctx.http.get(DISCOVERY)).json as Record<string, unknown> | undefined
    const declared = doc?.token_endpoint_auth_methods_supported
    const listed = Array.isArray(declared) && declared.includes('client_secret_basic')
    ctx.note(
      `HTTP Basic client authentication is accepted (client_secret_basic), beside the client_secret_post that INTERFACE.md §1, §5.3 name (RFC 6749 §2.3.1: the AS MUST support Basic); discovery's token_endpoint_auth_methods_supported ${JSON.stringify(declared ?? null)} ${listed ? 'lists it' : 'does not list it (OIDC Discovery §3: the methods this endpoint supports)'}`,
    )
    return
  }
  // RFC 6749 §5.2: an Authorization header that fails gets 401 and a matching WWW-Authenticate
  expectOAuthError(res, 401, 'invalid_client')
  const challenge = res.headers.get('www-authenticate')
  expectThat(
    challenge !== null && /^Basic(\s|$)/i.test(challenge.trim()),
    `401 to a Basic request without WWW-Authenticate: Basic (got ${JSON.stringify(challenge)})`,
  )
  ctx.note(
    'HTTP Basic client authentication is refused (401 invalid_client with WWW-Authenticate: Basic), as INTERFACE.md §1, §5.3 (client_secret_post) decide; RFC 6749 §2.3.1 says the AS MUST support it (ARCHITECTURE.md C1)',
  )
})

const TOK_05 = check(async (ctx) => {
  const main = ctx.target.clients.main
  grantedForTheCheck(await clientCredentialsRaw(ctx, main), 'control: a well-formed request')
  const noTokens = (res: HttpResponse, what: string) =>
    expectThat(
      res.status !== 200 && !/access_token/.test(res.text),
      `${what}: tokens were issued (HTTP ${res.status})`,
    )

  // the sub-cases below are independent: each is run and each deviation reported

  // RFC 6749 §2.3: the client MUST NOT use more than one authentication method per request
  await ctx.subcase('Basic header plus body credentials', async () => {
    const both = await ctx.http.postForm(
      TOKEN,
      { grant_type: 'client_credentials', ...credentials(main) },
      { authorization: basic(main) },
    )
    noTokens(both, 'Basic header plus body credentials')
    const bothBody = expectOAuthError(both, [400, 401], ['invalid_request', 'invalid_client'])
    expectThat(
      (both.status === 400) === (bothBody.error === 'invalid_request'),
      `Basic header plus body credentials: ${both.status} with ${String(bothBody.error)}`,
    )
  })

  // RFC 6749 §2.3.1: credentials MUST NOT be included in the request URI
  await ctx.subcase('client_id and client_secret in the query string', async () => {
    const inUrl = await ctx.http.request(TOKEN, {
      method: 'POST',
      query: credentials(main),
      form: { grant_type: 'client_credentials' },
    })
    noTokens(inUrl, 'client_id and client_secret in the query string')
    expectOAuthError(inUrl, [400, 401])
  })

  // RFC 6749 §3.2: the client MUST use POST
  const viaGet = `GET ${endpointLabel(ctx.target, 'token_endpoint')}`
  await ctx.subcase(viaGet, async () => {
    const get = await ctx.http.get(TOKEN, {
      grant_type: 'client_credentials',
      ...credentials(main),
    })
    noTokens(get, viaGet)
    // the MUST is a refusal in the JSON error shape (never 2xx, never 5xx); RFC 9110 lets it be
    // 404 as well as 400 or 405 (405 is a SHOULD, noted)
    wrongMethod(ctx, get, viaGet)
  })

  // RFC 6749 §4.1.3, App. B: the body is application/x-www-form-urlencoded
  await ctx.subcase('a JSON body', async () => {
    const json = await ctx.http.request(TOKEN, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', ...credentials(main) }),
    })
    noTokens(json, 'a JSON body')
    expectOAuthError(json, 400, 'invalid_request')
  })

  // RFC 6749 §3.2: request parameters MUST NOT be included more than once
  await ctx.subcase('grant_type sent twice', async () => {
    const repeated = await ctx.http.postForm(TOKEN, {
      grant_type: ['client_credentials', 'client_credentials'],
      ...credentials(main),
    })
    noTokens(repeated, 'grant_type sent twice')
    expectOAuthError(repeated, 400, 'invalid_request')
  })
})

const TOK_06 = check(async (ctx) => {
  const main = ctx.target.clients.main
  // each refusal below is of a request that is valid in every respect but the one under test:
  // the control shows the main client's credentials and this grant form get tokens
  grantedForTheCheck(await clientCredentialsRaw(ctx, main), 'control: client_credentials of main')

  // the requests are independent sub-cases: one refused wrongly hides none of the others
  await ctx.subcase('no grant_type', async () => {
    const missing = await ctx.http.postForm(TOKEN, { ...credentials(main) })
    // RFC 6749 §5.2: a missing required parameter is invalid_request
    about('no grant_type', () => expectOAuthError(missing, 400, 'invalid_request'))
  })

  const user = ctx.target.users.primary
  const random = () => randomBytes(32).toString('base64url')
  const unsupported: Record<string, Record<string, string>> = {
    // RFC 9700 §2.4: the password grant MUST NOT be used; a working one would issue tokens here
    password: { username: user.username, password: user.password, scope: 'openid' },
    implicit: {},
    'urn:ietf:params:oauth:grant-type:device_code': { device_code: random() },
    'urn:ietf:params:oauth:grant-type:jwt-bearer': { assertion: random() },
  }
  for (const [grantType, extra] of Object.entries(unsupported))
    await ctx.subcase(`grant_type=${grantType}`, async () => {
      const res = await ctx.http.postForm(TOKEN, {
        grant_type: grantType,
        ...extra,
        ...credentials(main),
      })
      expectThat(res.status !== 200, `grant_type=${grantType} issued tokens`)
      // INTERFACE.md §1 supports three grants; RFC 6749 §5.2: any other is unsupported_grant_type
      about(`grant_type=${grantType}`, () => expectOAuthError(res, 400, 'unsupported_grant_type'))
    })

  // RFC 6749 §5.2: a client not authorized for this grant type is unauthorized_client. Only a
  // client_credentials request can be valid in every other respect (a code or a refresh token
  // of a client that may not hold one cannot be had), so that is the one tried.
  const codeOnly = ctx.target.clients.codeOnly
  if (!codeOnly) {
    ctx.note(
      'no client without the client_credentials grant (clients.codeOnly): unauthorized_client not tried',
    )
    return
  }
  // the control: its credentials are good at this endpoint, sent the same way, so a refusal
  // below is not invalid_client in disguise. A grant it is registered for with a code that was
  // never issued is answered invalid_grant (RFC 6749 §5.2: "The provided authorization grant
  // ... is invalid"), or invalid_request; invalid_client or a 401 means the credentials were
  // refused, and then unauthorized_client cannot be told apart: inconclusive, never a failure
  // (TOK-03 judges a client's credentials refused)
  const redirectUri = codeOnly.redirectUri ?? ctx.target.clients.main.redirectUri
  const probe = await ctx.http.postForm(TOKEN, {
    grant_type: 'authorization_code',
    code: random(),
    ...(redirectUri !== undefined ? { redirect_uri: redirectUri } : {}),
    code_verifier: random(),
    ...credentials(codeOnly),
  })
  const probeError = (probe.json as { error?: unknown } | undefined)?.error
  expectControl(
    probe.status === 400 && probeError !== 'invalid_client' && probeError !== 'unauthorized_client',
    `control: ${codeOnly.id} redeeming a code that was never issued: expected HTTP 400 invalid_grant (its credentials accepted), got ${probe.status} ${show(probe.json ?? probe.text.slice(0, 200))}, so its client_credentials refusal cannot be told from a refusal of its credentials`,
  )
  const res = await clientCredentialsRaw(ctx, codeOnly)
  const what = `client_credentials by ${codeOnly.id}, which is not registered for it`
  expectThat(res.status !== 200, `${what}: tokens were issued (HTTP 200)`)
  about(what, () => expectOAuthError(res, 400, 'unauthorized_client'))
})

/** How many refresh tokens TOK-07 collects (the row's 20). */
const ISSUANCES = 20
/** How far below its true value the entropy estimate of 128 random bits can land. */
const ESTIMATE_MARGIN = 8
/** RFC 6749 App. A.12, A.17: access-token and refresh-token = 1*VSCHAR (%x20-7E). */
const VSCHAR = /^[\x20-\x7E]+$/

const TOK_07 = check(async (ctx) => {
  const refreshTokens: string[] = []
  for (let i = 0; i < ISSUANCES; i++) {
    const started = performance.now()
    const { body } = await tokensFor(ctx, { scope: 'openid offline_access', offline: true })
    // the time budget scales with this target's time for one issuance, measured on the first
    // (a replay of the IdP session, or a sign-in in the browser when there is none): a slow
    // provider gets the time its remaining issuances need (thrice, for noise), and a timeout
    // is inconclusive, never a failure
    if (i === 0) ctx.extendTimeout((ISSUANCES - 1) * (performance.now() - started) * 3)
    const { access_token: at, refresh_token: rt } = body
    expectThat(
      typeof at === 'string' && VSCHAR.test(at),
      `access_token outside %x20-7E: ${String(at)}`,
    )
    expectThat(
      typeof rt === 'string' && VSCHAR.test(rt),
      `refresh_token missing or outside %x20-7E: ${JSON.stringify(rt)}`,
    )
    refreshTokens.push(rt)
  }
  // distinct and random are sub-cases: tokens that repeat may still look random, and the reverse
  await ctx.subcase('distinct refresh tokens', () =>
    expectThat(
      new Set(refreshTokens).size === ISSUANCES,
      `only ${new Set(refreshTokens).size} distinct refresh tokens among ${ISSUANCES}`,
    ),
  )
  // RFC 6749 §10.10: guessing probability ≤ 2^-128. On 20 samples the estimate of a token of
  // exactly 128 random bits lands between about 123 and 128, hence the margin.
  const bits = estimateEntropyBits(refreshTokens)
  ctx.note(`estimated entropy per refresh token: ${Math.round(bits)} bits`)
  await ctx.subcase('refresh token entropy', () =>
    expectThat(
      bits >= 128 - ESTIMATE_MARGIN,
      `refresh tokens carry an estimated ${Math.round(bits)} bits (128 required)`,
    ),
  )
})

/** The token checks, one per row of catalogue/token.ts. */
export const tokenChecks: AreaChecks<typeof catalogue> = {
  'TOK-01': TOK_01,
  'TOK-02': TOK_02,
  'TOK-03': TOK_03,
  'TOK-04': TOK_04,
  'TOK-05': TOK_05,
  'TOK-06': TOK_06,
  'TOK-07': TOK_07,
  'TOK-08': TOK_08,
}
