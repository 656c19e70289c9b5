import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { idToken as catalogue } from '../catalogue/id-token.ts'
import { expectEqual, expectThat, show, SKEW } from '../harness/expect.ts'
import {
  type AuthorizeOptions,
  clientCredentials,
  codeOf,
  serviceClient,
  tokensFor,
} from '../harness/flows.ts'
import { decodeJws, halfHash, nowSeconds, verifySignature } from '../harness/jwt.ts'

type Json = Record<string, unknown>

/** Signs in, redeems the code and returns the signature-verified ID token claims. */
async function idTokenFor(
  ctx: CheckContext,
  options: AuthorizeOptions,
  what = 'ID token',
): Promise<{ claims: Json; body: Json; code: string; loginShown: boolean; nonce?: string }> {
  const { body, auth } = await tokensFor(ctx, options)
  const { payload } = await verifySignature(ctx, body.id_token, what)
  return {
    claims: payload,
    body,
    code: codeOf(auth),
    loginShown: auth.outcome.loginShown,
    ...(auth.nonce !== undefined ? { nonce: auth.nonce } : {}),
  }
}

const IDT_01 = check(async (ctx) => {
  const { body } = await tokensFor(ctx, { scope: 'openid' })
  // OIDC Core §3.1.3.3: the token response to an openid request carries an ID token
  decodeJws(body.id_token, 'id_token of an openid request')
  const plain = await tokensFor(ctx, { scope: 'profile' })
  const granted = typeof plain.body.scope === 'string' ? plain.body.scope.split(' ') : []
  expectThat(
    !granted.includes('openid'),
    `a request for scope "profile" was granted ${show(plain.body.scope)}`,
  )
  expectThat(
    !('id_token' in plain.body),
    'an ID token was issued although openid was not granted (scope "profile")',
  )
  const machine = serviceClient(ctx)
  const cc = await clientCredentials(ctx, machine)
  // there is no end user to authenticate in client_credentials (INTERFACE.md §4.2)
  expectThat(!('id_token' in cc), `client_credentials (${machine.id}) returned an id_token`)
})

const IDT_02 = check(async (ctx) => {
  const { body } = await tokensFor(ctx, { scope: 'openid' })
  const { header } = decodeJws(body.id_token, 'ID token')
  // OIDC Core §3.1.3.7 step 7, §15.1: RS256, never none or a MAC keyed with the client secret
  expectThat(
    header.alg === 'RS256',
    `ID token header alg: expected "RS256", got ${show(header.alg)}`,
  )
  await verifySignature(ctx, body.id_token, 'ID token')
})

const IDT_03 = check(async (ctx) => {
  const { claims } = await idTokenFor(ctx, { scope: 'openid' })
  const clientId = ctx.target.clients.main.id
  // OIDC Core §3.1.3.7 step 2: exactly the issuer, no normalisation
  expectEqual(claims.iss, ctx.target.baseUrl, 'ID token iss')
  const aud = claims.aud
  const audiences =
    typeof aud === 'string'
      ? [aud]
      : Array.isArray(aud) && aud.every((a) => typeof a === 'string')
        ? aud
        : undefined
  expectThat(
    audiences !== undefined && audiences.includes(clientId),
    `ID token aud: expected ${show(clientId)} or an array holding it, got ${show(aud)}`,
  )
  // OIDC Core §2: several audiences need azp naming the client the token was issued to
  if (audiences.length > 1) expectEqual(claims.azp, clientId, `ID token azp (aud is ${show(aud)})`)
  else if ('azp' in claims) expectEqual(claims.azp, clientId, 'ID token azp')
})

// OIDC Core §2: sub is at most 255 ASCII characters
const isSubject = (sub: unknown): sub is string =>
  typeof sub === 'string' &&
  sub.length > 0 &&
  sub.length <= 255 &&
  Buffer.from(sub, 'utf8').length === sub.length

function subjectOf(claims: Json, what: string): string {
  const sub = claims.sub
  expectThat(isSubject(sub), `${what} sub: expected 1 to 255 ASCII characters, got ${show(sub)}`)
  return sub
}

const IDT_04 = check(async (ctx) => {
  const { primary, secondary } = ctx.target.users
  // the first login is the user's session of the run (a code from it, when it is shared)
  const a1 = subjectOf((await idTokenFor(ctx, {})).claims, 'first login')
  // a browser context of its own is a second, independent login of the same user
  const second = await ctx.newBrowserContext()
  const a2 = subjectOf((await idTokenFor(ctx, { context: second })).claims, 'second login')
  expectEqual(a2, a1, `sub of ${primary.username} at the second login`)
  const other = ctx.target.clients.other
  if (other) {
    // OIDC Core §8.1 public subject type: the same sub for every client
    const b = subjectOf(
      (await idTokenFor(ctx, { client: other, context: second })).claims,
      `login at ${other.id}`,
    )
    expectEqual(b, a1, `sub of ${primary.username} at client ${other.id} (subject type public)`)
  } else {
    ctx.note('no other client in the target configuration: sub was not compared across clients')
  }
  if (secondary) {
    const s = subjectOf(
      (await idTokenFor(ctx, { user: secondary })).claims,
      `login of ${secondary.username}`,
    )
    expectThat(
      s !== a1,
      `${primary.username} and ${secondary.username} got the same sub ${show(s)}`,
    )
  } else {
    ctx.note('no secondary user in the target configuration: distinct users were not compared')
  }
})

const FIFTY_YEARS = 50 * 365.25 * 24 * 3600

const IDT_05 = check(async (ctx) => {
  const { claims } = await idTokenFor(ctx, { scope: 'openid' })
  const { exp, iat } = claims
  const now = nowSeconds()
  // OIDC Core §2: NumericDate, seconds since the epoch
  expectThat(Number.isInteger(exp), `ID token exp: expected an integer, got ${show(exp)}`)
  expectThat(Number.isInteger(iat), `ID token iat: expected an integer, got ${show(iat)}`)
  const e = exp as number
  const i = iat as number
  expectThat(e > now - SKEW, `ID token exp ${e} is in the past (now ${Math.floor(now)})`)
  // a millisecond value lands thousands of years ahead
  expectThat(
    e < now + FIFTY_YEARS,
    `ID token exp ${e} is more than 50 years ahead: milliseconds instead of seconds?`,
  )
  expectThat(
    Math.abs(i - now) <= SKEW,
    `ID token iat ${i} is ${Math.round(i - now)} s from the harness clock (more than ${SKEW} s)`,
  )
  expectThat(e > i, `ID token exp ${e} is not after iat ${i}`)
})

const IDT_06 = check(async (ctx) => {
  const sent = await idTokenFor(ctx, {})
  expectThat(sent.nonce, 'the harness sent no nonce')
  // OIDC Core §3.1.3.7 step 11: the nonce of the authentication request, unchanged
  expectEqual(sent.claims.nonce, sent.nonce, 'ID token nonce')
  const none = await idTokenFor(ctx, { nonce: false }, 'ID token (no nonce sent)')
  // OIDC Core §2: the nonce claim only carries a value the client sent
  expectThat(
    !('nonce' in none.claims),
    `no nonce was sent, but the ID token has nonce ${show(none.claims.nonce)}`,
  )
})

function authTimeOf(claims: Json, serverNow: number, what: string): number {
  const t = claims.auth_time
  // OIDC Core §3.1.2.1: with max_age, auth_time is REQUIRED
  expectThat(Number.isInteger(t), `${what}: auth_time must be an integer, got ${show(t)}`)
  const at = t as number
  expectThat(
    at <= serverNow + SKEW,
    `${what}: auth_time ${at} is in the future (now ${Math.floor(serverNow)})`,
  )
  expectThat(
    at >= serverNow - 365 * 24 * 3600,
    `${what}: auth_time ${at} is more than a year ago (now ${Math.floor(serverNow)})`,
  )
  return at
}

const IDT_07 = check({ exclusive: true }, async (ctx) => {
  const controls = ctx.target.controls
  let offset = 0
  // time must pass between sign-ins for auth_time (whole seconds) to move: the embedded
  // server's clock is moved, any other target is waited for
  const elapse = async (seconds: number): Promise<void> => {
    if (controls) controls.advanceClock(seconds)
    else await new Promise((r) => setTimeout(r, seconds * 1000 + 100))
    if (controls) offset += seconds
  }
  const serverNow = (): number => nowSeconds() + offset
  const context = await ctx.newBrowserContext()
  const first = await idTokenFor(ctx, { context, params: { max_age: '3600' } }, 'first ID token')
  const t1 = authTimeOf(first.claims, serverNow(), 'first login with max_age=3600')

  await elapse(2)
  const relogin = await idTokenFor(ctx, { context, params: { prompt: 'login', max_age: '3600' } })
  const t2 = authTimeOf(relogin.claims, serverNow(), 'prompt=login')
  // OIDC Core §3.1.2.1 prompt=login: the user is authenticated again, so auth_time moves
  expectThat(
    t2 > t1,
    `auth_time did not increase after prompt=login re-authentication: ${t1} then ${t2} (login page ${relogin.loginShown ? 'shown' : 'not shown'})`,
  )

  const silent = await idTokenFor(ctx, {
    context,
    user: null,
    params: { prompt: 'none', max_age: '3600' },
  })
  const t3 = authTimeOf(silent.claims, serverNow(), 'prompt=none')
  // no authentication took place, so the time of the last one stands
  expectEqual(t3, t2, 'auth_time after prompt=none (the session was only reused)')

  await elapse(2)
  const aged = await idTokenFor(ctx, { context, params: { max_age: '1' } })
  const t4 = authTimeOf(aged.claims, serverNow(), 'max_age=1')
  // OIDC Core §3.1.2.1 max_age: an older authentication forces a new one
  expectThat(
    t4 > t3,
    `auth_time did not increase after max_age=1 forced re-authentication: ${t3} then ${t4} (login page ${aged.loginShown ? 'shown' : 'not shown'})`,
  )
  expectThat(
    t4 >= serverNow() - 1 - SKEW,
    `auth_time ${t4} after max_age=1 is older than max_age allows`,
  )
})

const IDT_08 = check(async (ctx) => {
  const { claims, body, code } = await idTokenFor(ctx, { scope: 'openid' })
  const checked: string[] = []
  // each claim is its own sub-case (named as its message begins): one wrong does not hide another
  const claim = async (name: string, what: string, expectation: () => void): Promise<void> => {
    if (!(name in claims)) return
    checked.push(name)
    await ctx.subcase(what, expectation)
  }
  const atHash = 'ID token at_hash (left half of SHA-256 of the access token it came with)'
  await claim('at_hash', atHash, () =>
    expectEqual(claims.at_hash, halfHash(String(body.access_token)), atHash),
  )
  const cHash = 'ID token c_hash (of the authorization code)'
  await claim('c_hash', cHash, () => expectEqual(claims.c_hash, halfHash(code), cHash))
  await claim('acr', 'ID token acr', () =>
    expectThat(
      typeof claims.acr === 'string' && claims.acr.length > 0,
      `ID token acr: expected a non-empty string, got ${show(claims.acr)}`,
    ),
  )
  await claim('amr', 'ID token amr', () =>
    expectThat(
      Array.isArray(claims.amr) && claims.amr.every((m) => typeof m === 'string'),
      `ID token amr: expected an array of strings, got ${show(claims.amr)}`,
    ),
  )
  ctx.note(
    checked.length > 0
      ? `checked: ${checked.join(', ')}`
      : 'the ID token has none of at_hash, c_hash, acr, amr (all optional in the code flow)',
  )
})

/** INTERFACE.md §2.4: the user claims each scope releases. */
const SCOPE_CLAIMS: Record<string, readonly string[]> = {
  profile: ['name', 'picture', 'updated_at'],
  email: ['email', 'email_verified'],
}

const IDT_09 = check(async (ctx) => {
  const present: string[] = []
  // each scope is its own sub-case: claims leaked for one do not hide another's
  for (const scope of ['openid profile email', 'openid profile', 'openid email', 'openid'])
    await ctx.subcase(`the ID token for scope ${show(scope)}`, async () => {
      const { claims } = await idTokenFor(ctx, { scope }, 'ID token')
      const granted = scope.split(' ')
      for (const [s, names] of Object.entries(SCOPE_CLAIMS)) {
        const found = names.filter((c) => c in claims)
        // OIDC Core §5.4: scopes request claims; a scope not granted releases none of its claims
        expectThat(
          granted.includes(s) || found.length === 0,
          `carries ${found.join(', ')} without the ${s} scope`,
        )
        if (granted.includes(s)) present.push(...found.filter((c) => !present.includes(c)))
      }
    })
  if (present.length > 0)
    ctx.note(
      `the ID token carries ${present.join(', ')} for their scopes, as INTERFACE.md §2.4 and ARCHITECTURE.md (C8) decide; OIDC Core §5.4 would return them from user-info only, and OIDF warns about it`,
    )
})

/** The idToken checks, one per row of catalogue/id-token.ts. */
export const idTokenChecks: AreaChecks<typeof catalogue> = {
  'IDT-01': IDT_01,
  'IDT-02': IDT_02,
  'IDT-03': IDT_03,
  'IDT-04': IDT_04,
  'IDT-05': IDT_05,
  'IDT-06': IDT_06,
  'IDT-07': IDT_07,
  'IDT-08': IDT_08,
  'IDT-09': IDT_09,
}
