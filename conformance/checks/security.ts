import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { lookup } from 'node:dns/promises'
import type { BrowserContext, Cookie } from '@playwright/test'
import { PROBE_LIMIT, PROBE_WINDOW } from '../harness/target.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { security as catalogue } from '../catalogue/security.ts'
import { estimateEntropyBits } from '../harness/entropy.ts'
import { createHttp, type Http, type HttpResponse } from '../harness/http.ts'
import {
  expectControl,
  expectJsonObject,
  expectStatus,
  expectThat,
  show,
} from '../harness/expect.ts'
import { clientOrigins } from '../harness/browser.ts'
import { followWithJar } from '../harness/form-sign-in.ts'
import { jarOf } from '../harness/session.ts'
import {
  authorize,
  codeOf,
  failedLogins,
  idTokenOf,
  type LoginAnswer,
  redeem,
  signIn,
  someAccessToken,
  unknownUsername,
  validParams,
  whereLeft,
} from '../harness/flows.ts'
import {
  authorizeRaw,
  clientCredentialsRaw,
  credentials,
  endpointUrl,
  INTROSPECT,
  introspectRaw,
  REVOKE,
  TOKEN,
  USER_INFO,
} from '../harness/requests.ts'
import { claimsOf } from '../harness/jwt.ts'
import { newWindowBegan, rateWindowOf } from '../harness/rate-window.ts'

const wrongSecret = (): string => `wrong-${randomBytes(8).toString('hex')}`

/**
 * A second HTTP client that connects from another source address, for the checks that tell a
 * client's limit from its address's. Only a loopback target can be reached from another local
 * address (127.0.0.2 beside 127.0.0.1); undefined otherwise.
 */
async function otherSource(
  ctx: CheckContext,
): Promise<{ http: Http; address: string; close(): Promise<void> } | undefined> {
  const host = new URL(ctx.target.baseUrl).hostname.replace(/^\[|\]$/g, '')
  const resolved = await lookup(host, { family: 4 }).catch(() => undefined)
  if (!resolved || !resolved.address.startsWith('127.')) return undefined
  const address = resolved.address === '127.0.0.2' ? '127.0.0.3' : '127.0.0.2'
  const http = createHttp({
    baseUrl: ctx.target.baseUrl,
    ca: ctx.target.ca,
    localAddress: address,
  })
  return {
    http,
    address,
    async close() {
      for (const e of http.exchanges) ctx.http.record(e)
      return Promise.resolve()
    },
  }
}

/** An advertised X-RateLimit-Limit, or undefined. */
const advertisedLimit = (res: HttpResponse): number | undefined => {
  const raw = res.headers.get('x-ratelimit-limit')
  return raw !== null && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : undefined
}

const SEC_01 = check({ exclusive: true }, async (ctx) => {
  // RFC 6819 §5.1.4.2.3: a limit charged to the account it names lets anyone lock that account
  // out; failed client authentications are counted against where they come from
  const client = ctx.target.clients.service ?? ctx.target.clients.main
  const attacker = await otherSource(ctx)
  if (!attacker)
    return ctx.skip(
      'the attacker must send from another source address than the real client, which the suite can only do against a loopback target',
    )
  try {
    const controls = ctx.target.controls
    controls?.setRateLimit('token', PROBE_LIMIT, PROBE_WINDOW)
    const wrong = () =>
      attacker.http.postForm(TOKEN, {
        grant_type: 'client_credentials',
        client_id: client.id,
        client_secret: wrongSecret(),
      })
    const first = await wrong()
    expectThat(
      first.status !== 200,
      `a token request with a wrong secret for ${client.id} got 200 (${first.text.slice(0, 100)})`,
    )
    const limit = advertisedLimit(first) ?? (controls ? PROBE_LIMIT : undefined)
    if (limit === undefined)
      return ctx.skip(
        'no X-RateLimit-Limit on the token endpoint, so the probe cannot size its burst',
      )
    const budget = controls ? PROBE_LIMIT + 1 : ctx.target.rateLimitBudget
    if (budget === undefined || limit + 1 > budget)
      ctx.skip(
        `exhausting a limit of ${limit} takes ${limit + 1} requests; the target config's rateLimitBudget is ${budget ?? 'unset'}`,
      )
    let sent = 1
    let limited = first.status === 429
    while (!limited && sent < limit + 1) {
      limited = (await wrong()).status === 429
      sent++
    }
    ctx.note(
      limited
        ? `the attacker at ${attacker.address} was refused with 429 after ${sent} wrong secrets`
        : `the attacker at ${attacker.address} was never refused with 429 in ${sent} wrong secrets (RATE-01 and RATE-03 judge that)`,
    )
    const real = await clientCredentialsRaw(ctx, client)
    expectThat(
      real.status !== 429,
      `client lock-out: after ${sent} token requests with a wrong secret for ${client.id} from another address (${attacker.address}), the real client with its correct secret got 429: failed authentications are charged to the client_id they name, not to their source`,
    )
    expectStatus(real, 200, `the real client ${client.id} after the attacker's wrong secrets`)
  } finally {
    await attacker.close()
  }
})

/**
 * One failed sign-in per call, each with another user name and the same password. The names
 * are shaped like a real one, so a form that checks the shape of a user name does not refuse
 * them before the credential logic (and its throttle) sees them.
 */
const sprayer = (ctx: CheckContext, context: BrowserContext, password: string) =>
  failedLogins(ctx, context, () => ({
    username: unknownUsername(ctx.target.users.primary.username),
    password,
  }))

/**
 * Against a deployment whose login answers do not say how many failed sign-ins one address may
 * make, spraying this many user names (or more: the whole rateLimitBudget is sprayed) without a
 * 429 fails the check; a smaller budget cannot tell, and the check is skipped.
 */
const SPRAY_JUDGED = 100

/**
 * The limit of failed sign-ins per address, when the login form's answers say it: their
 * X-RateLimit-Remaining dropped by one from one user name to the next (within one window), so
 * the headers count the address, not the user name, and their X-RateLimit-Limit is its limit
 * (INTERFACE.md §8). A server whose headers count each user name (as the reference server's:
 * the per-user throttle) does not say the address's limit; undefined then.
 */
function addressLimitOf(first: LoginAnswer, second: LoginAnswer): number | undefined {
  const [a, b] = [rateWindowOf((n) => first.header(n)), rateWindowOf((n) => second.header(n))]
  const limit = Number(second.header('x-ratelimit-limit') ?? NaN)
  const countsAddress =
    Number.isInteger(a.remaining) && b.remaining === a.remaining - 1 && b.reset === a.reset
  return countsAddress && Number.isInteger(limit) && limit > 0 ? limit : undefined
}

/**
 * Failed sign-ins in flight at once while spraying a deployment whose address limit is not
 * advertised, each from its own login page in its own browser context: a guesser does not wait for each answer, and a fixed
 * window is only exceeded by a spray faster than the limit allows (100 per 5 minutes is one
 * every 3 s; a password hash on a loaded server may take longer than that).
 */
const SPRAYERS = 4

const SEC_02 = check({ exclusive: true }, async (ctx) => {
  // RFC 6749 §10.10: the server MUST prevent guessing of resource owner passwords; a limit per
  // user name alone lets one address try a common password against every user
  const controls = ctx.target.controls
  controls?.setRateLimit('loginaddress', PROBE_LIMIT, PROBE_WINDOW)
  const budget = controls ? PROBE_LIMIT + 1 : (ctx.target.rateLimitBudget ?? 0)
  if (budget < 2)
    ctx.skip('the spraying probe is off because the target config sets no rateLimitBudget')
  const context = await ctx.newBrowserContext()
  const password = `Spring${new Date().getFullYear()}!`
  const spray = await sprayer(ctx, context, password)
  const refused = (at: number): void =>
    ctx.note(`spraying was refused with 429 at the ${at}th user name`)
  const started = performance.now()
  const first = await spray()
  if (first.status === 429) return refused(1)
  const second = await spray()
  if (second.status === 429) return refused(2)
  // sized from what the server says: one more than the address's advertised limit, else the
  // whole budget (the embedded server's limit is lowered for the probe)
  const addressLimit = controls ? undefined : addressLimitOf(first, second)
  const needed = controls ? PROBE_LIMIT + 1 : addressLimit !== undefined ? addressLimit + 1 : budget
  if (needed > budget)
    ctx.skip(
      `the login form's X-RateLimit-Limit says one address may fail ${String(addressLimit)} sign-ins, so a 429 takes ${needed}, more than the rateLimitBudget of ${budget}`,
    )
  // each sign-in takes what the first two took: the spray gets the time it needs (bounded)
  ctx.extendTimeout(((performance.now() - started) / 2) * needed * 2)
  // a known limit is counted in order, from one page; an unknown one is sprayed from several
  const senders = [spray]
  if (!controls && addressLimit === undefined)
    // each in a browser context of its own: a login page's interaction is the browser's, and
    // a second one in the same browser may replace the first
    for (let i = 1; i < SPRAYERS; i++)
      senders.push(await sprayer(ctx, await ctx.newBrowserContext(), password))
  let issued = 2
  let sent = 2
  // sign-ins answered since the window the answers' headers show began, and the most in one
  let counted = 2
  let most = 2
  // set by the answers (an object: the type checker does not follow assignments in callbacks)
  const seen: { rolledOver: boolean; limitedAt: number | undefined } = {
    rolledOver: false,
    limitedAt: undefined,
  }
  let previous = rateWindowOf((n) => second.header(n))
  let done = false
  // one answer: whether the spray is over
  const answered = (answer: LoginAnswer): boolean => {
    sent++
    counted++
    most = Math.max(most, counted)
    if (answer.status === 429) {
      seen.limitedAt ??= sent
      return true
    }
    // a new window of the count the headers show (newWindowBegan: Remaining up, or the same
    // with a later Reset) may have started the address's count again too
    const current = rateWindowOf((n) => answer.header(n))
    const began = newWindowBegan(previous, current)
    if (!(current.reset < previous.reset)) previous = current
    if (!began) return addressLimit !== undefined && counted >= needed
    if (addressLimit !== undefined && (seen.rolledOver || sent + needed > budget))
      throw new Error(
        `a new rate-limit window began during the spray (X-RateLimit-Remaining ${current.remaining}, X-RateLimit-Reset ${current.reset}), and the rateLimitBudget of ${budget} does not cover counting again: a missing 429 proves nothing`,
      )
    if (!seen.rolledOver)
      ctx.note('a new rate-limit window began during the spray; counted again in it')
    seen.rolledOver = true
    counted = 1
    return false
  }
  await Promise.all(
    senders.map(async (send) => {
      try {
        while (!done && issued < (addressLimit !== undefined ? budget : needed)) {
          issued++
          if (answered(await send())) done = true
        }
      } finally {
        done = true
      }
    }),
  )
  if (seen.limitedAt !== undefined) return refused(seen.limitedAt)
  if (addressLimit === undefined && !controls) {
    // the limit is not said: judged only on a spray of SPRAY_JUDGED names within one window
    if (most < SPRAY_JUDGED && seen.rolledOver)
      throw new Error(
        `no 429 in ${sent} failed sign-ins, but the login form's rate-limit window rolled over during the spray and no window saw ${SPRAY_JUDGED} of them (at most ${most}): a missing 429 proves nothing`,
      )
    if (most < SPRAY_JUDGED)
      ctx.skip(
        `no 429 within the rateLimitBudget of ${sent} sign-ins, and the login form's headers do not say the address's limit; ${SPRAY_JUDGED} are needed to tell`,
      )
  }
  expectThat(
    false,
    `password spraying is not throttled: ${sent} failed sign-ins with one password and ${sent} different user names from one address were never refused with 429${addressLimit !== undefined ? `, though X-RateLimit-Limit says ${addressLimit} (INTERFACE.md §7)` : seen.rolledOver ? ` (${most} of them within one rate-limit window)` : ''}`,
  )
})

const SEC_03 = check(async (ctx) => {
  // RFC 9207 §3: the metadata parameter tells clients to insist on iss; omitted, it means false
  // the metadata and the response are sub-cases: a provider missing both is told both
  await ctx.subcase('mix-up defense', async () => {
    const doc = await ctx.http.get('/.well-known/openid-configuration')
    const meta = expectJsonObject(doc, 'discovery')
    expectThat(
      meta.authorization_response_iss_parameter_supported === true,
      `mix-up defense: discovery must say authorization_response_iss_parameter_supported: true (RFC 9207 §3), got ${show(meta.authorization_response_iss_parameter_supported)}`,
    )
  })
  await ctx.subcase('mix-up defense', async () => {
    const auth = await authorize(ctx)
    codeOf(auth)
    const iss = auth.callback?.searchParams.get('iss')
    expectThat(
      iss === ctx.target.baseUrl,
      `mix-up defense: the authorization response must carry iss=${ctx.target.baseUrl} (RFC 9207 §2), got ${show(iss)}`,
    )
  })
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

/** Cookies of the target's origin. */
async function idpCookies(ctx: CheckContext, context: BrowserContext): Promise<Cookie[]> {
  return context.cookies(ctx.target.baseUrl)
}

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

const SEC_07 = check(async (ctx) => {
  // OWASP ASVS V3.2.1: a new session token on authentication. The attacker signs in, then plants
  // their own session cookie in the victim's browser; the victim signs in (prompt=login)
  const attacker = await ctx.newBrowserContext()
  const before = new Set((await idpCookies(ctx, attacker)).map((c) => `${c.name}=${c.value}`))
  codeOf(await authorize(ctx, { context: attacker }))
  const session = (await idpCookies(ctx, attacker)).filter(
    (c) => !before.has(`${c.name}=${c.value}`),
  )
  expectThat(session.length > 0, 'signing in set no cookie at the IdP: no session to examine')
  // each attribute of each cookie, and the fixation below, are sub-cases: every one missing is
  // reported, not only the first
  for (const c of session) {
    const cookie = `the session cookie ${c.name}`
    await ctx.subcase(cookie, () => expectThat(c.secure, `${cookie}: not Secure`))
    await ctx.subcase(cookie, () => expectThat(c.httpOnly, `${cookie}: not HttpOnly`))
    // SameSite=None is a provider's legitimate choice (a session sent to prompt=none in a
    // cross-site iframe, as node-oidc-provider does); CSRF then rests on LOGIN-03's form tokens
    if (c.sameSite !== 'Lax' && c.sameSite !== 'Strict')
      ctx.note(
        `the session cookie ${c.name} has SameSite=${c.sameSite}: it is sent on cross-site requests`,
      )
  }
  await ctx.subcase('session fixation', async () => {
    const victim = await ctx.newBrowserContext()
    await victim.addCookies(session)
    const planted = new Map(session.map((c) => [c.name, c.value]))
    codeOf(await authorize(ctx, { context: victim, params: { prompt: 'login' } }))
    const after = await idpCookies(ctx, victim)
    for (const c of after) {
      expectThat(
        planted.get(c.name) !== c.value,
        `session fixation: after signing in, the victim's browser still holds the planted session cookie ${c.name}: the identifier was not replaced at sign-in`,
      )
    }
  })
})

/** Referrer policies that send at most the origin to another site (W3C Referrer Policy §3). */
const SAFE_POLICIES = new Set([
  'no-referrer',
  'same-origin',
  'origin',
  'strict-origin',
  'origin-when-cross-origin',
  'strict-origin-when-cross-origin',
])

/** The policy in force: the last recognised token of the header, else a meta referrer. */
function referrerPolicy(res: HttpResponse): string | undefined {
  const tokens = (res.headers.get('referrer-policy') ?? '')
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '')
  const header = tokens.at(-1)
  if (header) return header
  return /<meta[^>]+name=["']?referrer["']?[^>]*content=["']?([\w-]+)/i
    .exec(res.text)?.[1]
    ?.toLowerCase()
}

const SEC_08 = check(async (ctx) => {
  // RFC 9700 §4.2.4: suppress the Referer header with a Referrer Policy on these pages
  const client = ctx.target.clients.main
  const valid = {
    client_id: client.id,
    redirect_uri: client.redirectUri ?? '',
    response_type: 'code',
    scope: 'openid',
    state: randomBytes(8).toString('hex'),
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbqGJSstw-cM',
    code_challenge_method: 'S256',
  }
  const pages: [string, HttpResponse][] = [
    ['login page', await authorizeRaw(ctx, valid)],
    ['error page', await authorizeRaw(ctx, { ...valid, client_id: `unknown-${valid.state}` })],
    [
      'logged-out page',
      await ctx.http.request('/auth/logout', { headers: { accept: 'text/html' } }),
    ],
  ]
  let checked = 0
  // each page is its own sub-case: a leak from one page does not hide another's
  for (const [what, res] of pages)
    await ctx.subcase(what, () => {
      if (res.status >= 300 && res.status < 400) {
        ctx.note(`${what}: a ${res.status} redirect, no page to examine`)
        return
      }
      if (!/text\/html/i.test(res.headers.get('content-type') ?? '')) {
        ctx.note(`${what}: not an HTML page (${res.status})`)
        return
      }
      checked++
      const policy = referrerPolicy(res)
      if (policy !== undefined && SAFE_POLICIES.has(policy)) return
      // RFC 9700 §4.2.4's other countermeasure: a page that loads and links nothing of another
      // origin sends no Referer to a third party whatever its policy
      const origin = new URL(ctx.target.baseUrl).origin
      const foreign = [
        ...res.text.matchAll(/(?:src|href|action)\s*=\s*["']?(https?:\/\/[^"'\s>]+)/gi),
      ]
        .map((m) => m[1] ?? '')
        .filter((u) => !u.startsWith(`${origin}/`) && u !== origin)
      if (foreign.length === 0) {
        ctx.note(
          `${what}: Referrer-Policy ${show(policy ?? null)}, but the page loads and links nothing of another origin`,
        )
        return
      }
      expectThat(
        false,
        `${what}: Referrer-Policy ${show(policy ?? null)} lets the URL of the authorization request leak in the Referer to ${show(foreign[0])} (RFC 9700 §4.2.4); expected no-referrer, same-origin or an origin-only policy`,
      )
    })
  expectThat(checked > 0, 'neither the login page nor the error page was served as HTML')
})

/** What an error body must not show: stack frames, source paths, SQL and driver errors. */
const INTERNALS: readonly [string, RegExp][] = [
  ['a stack trace', /\bat (?:async )?[\w$.<>[\] ]+ \(?[^()\s]+:\d+:\d+\)?|\n\s+at \S/],
  ['a source file path', /(?:\/[\w.@-]+){2,}\.(?:[cm]?[jt]s|py|java|rb|go|php)\b|node_modules/],
  ['a file system path', /(?:^|[\s"'(])(?:\/home|\/usr|\/srv|\/opt|\/var|\/app|[A-Z]:\\)[\\/]/],
  [
    'SQL or a database error',
    /\b(?:SELECT\s.+\sFROM|INSERT INTO|UPDATE\s\S+\sSET|SQLITE_\w+|syntax error at or near|duplicate key value|ER_\w+|knex:)/i,
  ],
  ['a runtime error name', /\b(?:TypeError|ReferenceError|RangeError|ECONNREFUSED|ENOENT):/],
]

const SEC_09 = check(async (ctx) => {
  const client = ctx.target.clients.main
  const junk = 'x'.repeat(5000)
  const requests: [string, () => Promise<HttpResponse>][] = [
    [
      'token, a JSON body',
      () =>
        ctx.http.request(TOKEN, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"grant_type":',
        }),
    ],
    [
      'token, bad percent-encoding',
      () =>
        ctx.http.request(TOKEN, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=%zz&client_id=%E0%A4%A',
        }),
    ],
    [
      'token, a NUL in the code',
      () =>
        ctx.http.postForm(TOKEN, {
          grant_type: 'authorization_code',
          code: 'a\u0000b',
          code_verifier: junk,
          redirect_uri: 'https://x/\u0000',
          ...credentials(client),
        }),
    ],
    [
      'token, repeated parameters',
      () =>
        ctx.http.postForm(TOKEN, {
          grant_type: ['client_credentials', 'refresh_token'],
          ...credentials(client),
        }),
    ],
    [
      'token, a quote in the refresh token',
      () =>
        ctx.http.postForm(TOKEN, {
          grant_type: 'refresh_token',
          refresh_token: `' OR 1=1 --`,
          ...credentials(client),
        }),
    ],
    [
      'token, a huge client_id',
      () =>
        ctx.http.postForm(TOKEN, {
          grant_type: 'client_credentials',
          client_id: junk,
          client_secret: junk,
        }),
    ],
    [
      'introspection, a bad content type',
      () =>
        ctx.http.request(INTROSPECT, {
          method: 'POST',
          headers: { 'content-type': 'text/xml' },
          body: '<token/>',
        }),
    ],
    [
      'introspection, a quote in the token',
      () => ctx.http.postForm(INTROSPECT, { token: `'";--`, ...credentials(client) }),
    ],
    [
      'revocation, an array token',
      () => ctx.http.postForm(REVOKE, { token: ['a', 'b'], ...credentials(client) }),
    ],
    [
      'user-info, a malformed JWT',
      () => ctx.http.request(USER_INFO, { headers: { authorization: 'Bearer eyJ.eyJ.%%%' } }),
    ],
    [
      'user-info, a broken scheme',
      () =>
        ctx.http.request(USER_INFO, { headers: { authorization: `Bearer ${'a'.repeat(9000)}` } }),
    ],
    [
      'branding, a strange client_id',
      () => ctx.http.get('/auth/branding', { client_id: `'; DROP TABLE clients; --` }),
    ],
    [
      'authorize, bad percent-encoding',
      () =>
        ctx.http.request('/auth/authorize?client_id=%zz&redirect_uri=%E0%A4', {
          headers: { accept: 'text/html' },
        }),
    ],
    [
      'logout, a garbage id_token_hint',
      () =>
        ctx.http.get('/auth/logout', {
          id_token_hint: 'eyJhbGciOiJub25lIn0.%%%.',
          post_logout_redirect_uri: 'javascript:alert(1)',
        }),
    ],
  ]
  // each request is its own sub-case: a leak at one endpoint does not hide another's
  for (const [what, send] of requests)
    await ctx.subcase(what, async () => {
      const res = await send()
      for (const [leak, pattern] of INTERNALS) {
        const m = pattern.exec(res.text)
        expectThat(
          !m,
          `${what}: the ${res.status} answer reveals ${leak}: ${show(res.text.slice(Math.max(0, (m?.index ?? 0) - 40), (m?.index ?? 0) + 80))}`,
        )
      }
    })
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
    const sub = claimsOf(String(expectJsonObject(res, 'token').access_token)).sub
    expectThat(
      typeof sub !== 'string' || !userSubs.has(sub),
      `the client_credentials token of ${client.id} has sub ${show(sub)}, the sub of a user: a resource server would take the client for that user (RFC 9700 §4.15)`,
    )
  }
  if (tried === 0) ctx.skip('no configured client was granted a client_credentials token')
})

/** The longest SEC-11 waits for a login session to expire on a target whose clock it cannot move. */
const MAX_SESSION_WAIT_S = 40
/**
 * The clock tolerance a provider may apply to an expiry (node-oidc-provider's clockTolerance
 * defaults to 15 s): on a target whose clock it cannot move, SEC-11 waits this much past the
 * lifetime, so a session within that tolerance is not taken for one that never ends.
 */
const EXPIRY_TOLERANCE_S = 15

type Jar = NonNullable<Awaited<ReturnType<typeof jarOf>>>

/**
 * A prompt=none authorization request sent over HTTP with a copy of `jar`'s cookies, following
 * the IdP's own redirects: the parameters of the redirect to the client, or the answer that
 * stopped at the IdP.
 */
async function silentRequest(
  ctx: CheckContext,
  jar: Jar,
): Promise<{ params: URLSearchParams; state: string } | { stopped: HttpResponse }> {
  const params = await validParams(ctx)
  const url = new URL(endpointUrl(ctx.target, 'authorization_endpoint'))
  for (const [k, v] of Object.entries({ ...params, prompt: 'none' })) url.searchParams.set(k, v)
  const cookies = await jar.clone()
  const cookie = await cookies.getCookieString(url.toString())
  const first = await ctx.http.request(url.toString(), {
    headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) },
  })
  const redirect = new URL(params.redirect_uri)
  const end = await followWithJar(
    ctx.http,
    cookies,
    first,
    new URL(ctx.target.baseUrl).origin,
    (next) =>
      (next.origin === redirect.origin && next.pathname === redirect.pathname) ||
      (clientOrigins(ctx.target).includes(next.origin) &&
        next.origin !== new URL(ctx.target.baseUrl).origin),
  )
  if ('stopped' in end) return end
  // an error for the fragment response mode may come back there (as expectErrorRedirect reads)
  const query = end.client.searchParams
  const fragment = new URLSearchParams(end.client.hash.slice(1))
  return {
    params: query.has('error') || query.has('code') || !fragment.has('error') ? query : fragment,
    state: params.state,
  }
}

const SEC_11 = check({ exclusive: true }, async (ctx) => {
  const lifetime = ctx.target.sessionLifetime
  if (lifetime === undefined)
    return ctx.skip(
      'the login-session lifetime is not in the target configuration (sessionLifetime), so no session can be presented expired',
    )
  const controls = ctx.target.controls
  // past the lifetime: by a second on the embedded server's clock, by the tolerance elsewhere
  const wait = controls ? lifetime + 1 : lifetime + EXPIRY_TOLERANCE_S
  if (!controls && wait > MAX_SESSION_WAIT_S)
    ctx.skip(
      `login sessions live ${lifetime} s: with ${EXPIRY_TOLERANCE_S} s of clock tolerance longer than this check waits (${MAX_SESSION_WAIT_S} s), and only the embedded server's clock can be moved`,
    )
  // its own browser: the subject is this session
  const context = await ctx.newBrowserContext()
  codeOf(await authorize(ctx, { context, byFormPost: true }))
  const jar = await jarOf(context)
  expectControl(jar, 'the sign-in left no cookies in the browser: there is no session to age')
  // the control: while the session lives, prompt=none with its cookies gets a code, so what
  // changes below is the session's age alone
  const live = await silentRequest(ctx, jar)
  expectControl(
    'params' in live && live.params.has('code') && !live.params.has('error'),
    `control: prompt=none with the live session's cookies got no code (${
      'params' in live
        ? `error=${show(live.params.get('error'))}`
        : `HTTP ${live.stopped.status} at the IdP`
    }): the session cannot be observed`,
  )
  if (controls) controls.advanceClock(wait)
  else await sleep(wait * 1000)
  const what = `a session past its ${lifetime} s lifetime (${wait} s later)`

  // OWASP ASVS 4.0 V3.3.1, V3.3.2: past its lifetime the session no longer authenticates: the user is
  // asked to sign in again (INTERFACE.md §4.1: without a session the login page is shown)
  const again = await authorize(ctx, { context, user: null })
  expectThat(
    !again.callback?.searchParams.has('code'),
    `${what}: the authorization request returned a code without a new sign-in (the session never expired)`,
  )
  expectControl(
    again.outcome.loginShown,
    `${what}: the authorization request ended at ${whereLeft(again)}, not at a login page the harness recognises`,
  )

  // OIDC Core §3.1.2.6: prompt=none without a (live) session answers login_required
  const silent = await silentRequest(ctx, jar)
  expectThat(
    'params' in silent,
    `${what}: prompt=none with the session's cookies stayed at the IdP (HTTP ${'stopped' in silent ? silent.stopped.status : '?'}) instead of redirecting with login_required (OIDC Core §3.1.2.1: no user interface)`,
  )
  expectThat(
    !silent.params.has('code'),
    `${what}: prompt=none with the session's cookies still returned a code`,
  )
  expectThat(
    silent.params.get('error') === 'login_required',
    `${what}: prompt=none answered error=${show(silent.params.get('error'))}, expected login_required`,
  )
  expectThat(
    silent.params.get('state') === silent.state,
    `${what}: the login_required redirect lost the request's state`,
  )
})

/** The security checks, one per row of catalogue/security.ts. */
export const securityChecks: AreaChecks<typeof catalogue> = {
  'SEC-01': SEC_01,
  'SEC-02': SEC_02,
  'SEC-03': SEC_03,
  'SEC-04': SEC_04,
  'SEC-05': SEC_05,
  'SEC-06': SEC_06,
  'SEC-07': SEC_07,
  'SEC-08': SEC_08,
  'SEC-09': SEC_09,
  'SEC-10': SEC_10,
  'SEC-11': SEC_11,
}
