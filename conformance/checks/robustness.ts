import { randomBytes, type JsonWebKey } from 'node:crypto'
import fc from 'fast-check'
import { exportJWK, generateKeyPair } from 'jose'
import { type AreaChecks, type CheckContext, check } from '../harness/check.ts'
import type { robustness as catalogue } from '../catalogue/robustness.ts'
import { expectInactive } from '../harness/expect.ts'
import {
  BRANDING,
  credentials,
  endpointLabel,
  endpointUrl,
  INTROSPECT,
  REVOKE,
  TOKEN,
  USER_INFO,
} from '../harness/requests.ts'
import { holds, propertyBudget } from '../harness/fuzz/property.ts'
import { endpointNamed } from '../harness/endpoints.ts'
import { pkcePair } from '../harness/flows.ts'
import { idpOrigins } from '../harness/idp-origins.ts'
import { clientOrigins } from '../harness/browser.ts'
import {
  type Endpoint,
  expectRegisteredError,
  malformed,
  showMalformed,
  toRequest,
} from '../harness/fuzz/requests.ts'
import { type Forge, mutate, mutationArb, type TokenMutation } from '../harness/fuzz/jwt.ts'
import { mutateOpaque, opaqueMutationArb, type OpaqueMutation } from '../harness/fuzz/opaque.ts'
import { FORMAT_JUDGED_BY, isCompactJws } from '../harness/access-token.ts'
import { expectAccepted, realTokens, userInfoRefuses } from '../harness/fuzz/tokens.ts'
import {
  AUTHORIZE,
  AUTHORIZE_ERRORS,
  encoded,
  expectPageAnswer,
  loginFormOf,
  LOGOUT,
  overLongEach,
  OVER_LONG_LENGTHS,
  type Pairs,
  pageRequest,
  type PageRequest,
  pageRequests,
  refusable,
  refusedUnread,
  showPageRequest,
  type Spoil,
  dropped,
  untouched,
} from '../harness/fuzz/pages.ts'
import { CheckFailure, expectControl } from '../harness/expect.ts'
import type { CookieJar } from 'tough-cookie'
import { captureSignIn, describeSignIn, replaySignIn } from '../harness/credential-replay.ts'

/**
 * The parts of a check, or cases of a part, that were not judged: a case answered unread
 * (throttled or overloaded: `refusedUnread`), a part the harness could not drive. Not judged is
 * never a pass: once the rest ran (a failure among it stands), `end` makes the check
 * inconclusive, naming each.
 */
function unjudgedParts(ctx: Pick<CheckContext, 'note'>) {
  const cases = new Map<string, { count: number; first: string }>()
  const parts: string[] = []
  return {
    /** One case of `part` answered unread (`why`); its first is named. */
    unread(part: string, what: string, why: string): void {
      const seen = cases.get(part)
      if (seen) seen.count++
      else cases.set(part, { count: 1, first: `${why} to ${what}` })
    },
    /** A whole part not judged, and why (also noted). */
    part(part: string, why: string): void {
      ctx.note(`${part}: not judged: ${why}`)
      parts.push(`${part} (${why})`)
    },
    /** Ends the check inconclusive if anything was not judged. */
    end(): void {
      const unread = [...cases].map(([part, { count, first }]) => {
        ctx.note(
          `${part}: ${String(count)} case(s) answered unread, not judged; the first: ${first}`,
        )
        return `${part} (${String(count)} case(s) answered unread, the first ${first})`
      })
      const all = [...parts, ...unread]
      if (all.length > 0) throw new Error(`not judged: ${all.join('; ')} (see the notes)`)
    },
  }
}

const ROBUST_01 = check(async (ctx) => {
  const { runs, seed } = propertyBudget(ctx)
  const endpoints: Endpoint[] = [TOKEN, INTROSPECT, REVOKE, USER_INFO, BRANDING]
  const each = Math.max(1, Math.ceil(runs / endpoints.length))
  const unjudged = unjudgedParts(ctx)
  for (const path of endpoints) {
    await holds(
      path,
      malformed(path, ctx.target.clients.main),
      async (m) => {
        const res = await ctx.http.request(path, toRequest(m))
        // RFC 6585 §4: a 429 refuses the request for the client's rate, not for what it sent
        // (its temporarily_unavailable is no answer to the malformation): the case is not judged
        const why = refusedUnread(res)
        if (why !== undefined) return unjudged.unread(path, showMalformed(path)(m), why)
        expectRegisteredError(res, path, m)
      },
      each,
      seed,
      showMalformed(path),
    )
  }
  unjudged.end()
})

/**
 * The signature segment with '=' padding (one and two), a space and a stray character: each
 * decodes to the same signature in a lenient base64url decoder, so only a strict one refuses it.
 */
/** The same for a token that is not a JWS: padding and a stray character. */
const LENIENT_OPAQUE: readonly OpaqueMutation[] = [
  { kind: 'padding', pad: '=' },
  { kind: 'padding', pad: '==' },
  { kind: 'padding', pad: '.' },
  { kind: 'insert', at: 0, char: '!' },
]

const LENIENT_SIGNATURES: readonly TokenMutation[] = [
  { kind: 'shape', shape: 'padding', segment: 'signature', at: 0 },
  { kind: 'shape', shape: 'padding', segment: 'signature', at: 1 },
  { kind: 'shape', shape: 'whitespace', segment: 'signature', at: 5 },
  { kind: 'shape', shape: 'invalid-char', segment: 'signature', at: 0 },
]

const ROBUST_02 = check(async (ctx) => {
  const { runs, seed } = propertyBudget(ctx)
  const { tokens, idToken } = await realTokens(ctx)
  await expectAccepted(ctx, tokens, 'before the mutations', true)
  const jwks = (await ctx.http.get('/.well-known/jwks.json')).json as { keys?: JsonWebKey[] }
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  const forge: Forge = {
    attacker: { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'attacker' } },
    published: jwks.keys ?? [],
    others: [idToken, ...tokens.map((t) => t.token)],
  }
  // a token that is not a JWS (AT-01 and JWKS-04 judge the format) gets mutations that assume
  // nothing of its contents: a refused mutation is the subject whatever the token's format
  const opaque = tokens.filter((t) => !isCompactJws(t.token)).map((t) => t.name)
  if (opaque.length > 0)
    ctx.note(
      `${opaque.join(' and ')}: not a JWT, so mutated by characters, not by JWS segments (${FORMAT_JUDGED_BY})`,
    )
  const arb = fc.record({
    base: fc.nat(tokens.length - 1),
    m: mutationArb,
    o: opaqueMutationArb,
  })
  // what a lenient base64url decoder drops from the signature, whatever the seed: refusing it is
  // a MUST (RFC 7519 §7.2 through RFC 7515 §5.2 step 7; the citation in fuzz/jwt.ts)
  const lenient = LENIENT_SIGNATURES.map(
    (m, i): [{ base: number; m: TokenMutation; o: OpaqueMutation }] => [
      { base: 0, m, o: LENIENT_OPAQUE[i % LENIENT_OPAQUE.length] ?? { kind: 'padding', pad: '=' } },
    ],
  )
  await holds(
    'a mutated access token',
    arb,
    async ({ base, m, o }) => {
      const real = tokens[base] ?? tokens[0]
      if (!real) return
      const token = isCompactJws(real.token)
        ? await mutate(m, real.token, forge)
        : mutateOpaque(o, real.token)
      if (token === real.token) return
      await userInfoRefuses(ctx, token)
      // RFC 7662 §2.2: as the client it was issued to, still exactly {"active":false}
      const res = await ctx.http.postForm(INTROSPECT, { token, ...credentials(real.client) })
      expectInactive(res, 'the mutated token')
    },
    runs + lenient.length,
    seed,
    ({ base, m, o }) => {
      const real = tokens[base]
      const applied = real && !isCompactJws(real.token) ? o : m
      return `${real?.name ?? '?'} with ${JSON.stringify(applied)}`
    },
    { examples: lenient },
  )
  await expectAccepted(ctx, tokens, 'after the mutations')
})

/**
 * The most generated login posts within a real interaction (and as many again while shrinking):
 * each is a failed sign-in the target counts, and may throttle the run's address for later checks.
 */
const MAX_LOGIN_POSTS = 5

/**
 * What each field of the login form gets alone, within a real interaction, whatever the seed:
 * one character past a VARCHAR(255) column, 1,000 and 10,000 characters (the form stays under
 * 16 KiB), and NUL with other control characters (which PostgreSQL refuses in text). The
 * generated cases reach such values only by chance, and a failed sign-in is too dear to leave
 * them to it.
 */
const LOGIN_FIELD_SPOILS: readonly Spoil[] = [
  { kind: 'long', length: 256 },
  { kind: 'long', length: 1_000 },
  { kind: 'long', length: 10_000 },
  { kind: 'malformed', value: 'robust-\u0000\u0001\b\t\r\n\u001b\u007f-end' },
]

/**
 * The most of those posts ROBUST-03 sends: every one of a form of six fields (the reference
 * server's has five: interaction, csrf, username, password, action). Each that reaches the
 * password check is a failed sign-in the target counts against the run's address.
 */
const MAX_FIELD_POSTS = 24

const GENERATED_WITHIN = 'the generated cases within an interaction'

const random = (): string => randomBytes(12).toString('base64url')

/** Origin and path: what a redirect is compared by. */
const uriOf = (uri: string): string => {
  const u = new URL(uri)
  return `${u.origin}${u.pathname}`
}

const cookieFor = async (jar: CookieJar, url: string): Promise<string | undefined> =>
  (await jar.getCookieString(url)) || undefined

const ROBUST_03 = check(async (ctx) => {
  const { runs, seed } = propertyBudget(ctx)
  const main = ctx.target.clients.main
  // the IdP's origins: a login app on an origin of its own is the IdP's (idp-origins.ts)
  const idp = idpOrigins(ctx.target)
  // a redirect to a client's origin is judged whatever the request named (never the IdP's)
  const clients = clientOrigins(ctx.target)
  const declared = ctx.target.idpOrigins !== undefined
  // authorize, the login post without and within an interaction, logout
  const each = Math.max(1, Math.ceil(runs / 4))
  const page = (method: string) => method === 'GET' || method === 'POST'
  const send = async (
    path: string,
    valid: Pairs,
    r: Parameters<typeof pageRequest>[2],
    cookie?: string,
  ) => {
    const { url, options } = pageRequest(path, valid, r, cookie)
    return ctx.http.request(url, options)
  }

  const redirectUri = main.redirectUri
  // messages name the endpoint the requests went to (discovery's), not the interface's path
  const named = endpointNamed(AUTHORIZE)
  const authorizeLabel = named ? endpointLabel(ctx.target, named) : AUTHORIZE
  let loginUrl: string | undefined
  // what was not judged leaves the check inconclusive once the rest was judged (a failure
  // among the rest still stands). The catalogue's statement names authorize, the login post
  // and logout each as the check's subject: a PASS would claim all three, so a part that could
  // not be driven makes the check ERROR, never a PASS with a note.
  const parts = unjudgedParts(ctx)
  // the login posts within an interaction not sent (the sign-in budget used up, or past the cap)
  const unjudged: string[] = []
  if (!redirectUri)
    parts.part(
      `${authorizeLabel} and the login post`,
      `client ${main.id} has no redirectUri, so no valid authorization request can be spoilt`,
    )
  else {
    const { challenge } = await pkcePair()
    const valid: Pairs = [
      ['client_id', main.id],
      ['redirect_uri', redirectUri],
      ['response_type', 'code'],
      ['scope', 'openid'],
      ['state', random()],
      ['nonce', random()],
      ['code_challenge', challenge],
      ['code_challenge_method', 'S256'],
    ]
    const names = valid.map(([k]) => k)
    const examples = overLongEach(names, 'GET')
    await holds(
      authorizeLabel,
      pageRequests(names, ['GET', 'POST']),
      async (r) => {
        // RFC 6749 §4.1.2.1: an error is redirected only once client and redirect URI are
        // verified; before that the user is shown a page. A request without redirect_uri may be
        // answered at the client's registered URI (RFC 6749 §3.1.2.3 lets a client with one
        // registered URI omit it): that URI is the client's own, no destination the request
        // chose; that the parameter is required here is AUTHZ-06's to judge
        const omitted = dropped(r, 'redirect_uri')
        const verified = untouched(r, 'client_id') && (untouched(r, 'redirect_uri') || omitted)
        const why = await expectPageAnswer(
          ctx.http,
          await send(AUTHORIZE, valid, r),
          idp,
          verified
            ? {
                uri: uriOf(redirectUri),
                errors: AUTHORIZE_ERRORS,
                why: omitted
                  ? "the client's registered redirect_uri, the request having none"
                  : 'the registered redirect_uri, sent with its client',
              }
            : undefined,
          page(r.method),
          refusable(r, ['GET', 'POST']),
          { sent: encoded(valid, r), clients, declared },
        )
        if (why !== undefined) parts.unread(authorizeLabel, showPageRequest(AUTHORIZE)(r), why)
      },
      each + examples.length,
      seed,
      showPageRequest(AUTHORIZE),
      { examples },
    )

    // the login form's post: its action and fields from a real login page (a script-rendered
    // login has none to read: its own sign-in request is replayed instead, scriptSignInCases)
    const authorizeUrl = `${endpointUrl(ctx.target, 'authorization_endpoint')}?${new URLSearchParams(valid.map(([k, v]) => [k, v])).toString()}`
    const isClient = (url: URL) => !idp.has(url.origin)
    let leftTo: URL | undefined
    const first = await loginFormOf(ctx, authorizeUrl, isClient, (to) => (leftTo = to))
    // a login the page's script sends (fetch/XHR, JSON or form) is reached through the
    // browser's own credential request, recorded once and replayed with over-long and control
    // credentials (credential-replay.ts); a sign-in over several requests has none to replay
    if (!first && leftTo && !clients.includes(leftTo.origin))
      parts.part(
        'the login post',
        `a valid authorization request sent the browser to ${leftTo.origin}${leftTo.pathname}, an origin not known as the IdP's (a login UI on an origin of its own is declared with idpOrigins), so its login form was not read`,
      )
    else if (!first) await scriptSignInCases(ctx, parts)
    else {
      loginUrl = first.form.action
      const fields = (form: typeof first.form): Pairs => [
        ...form.hidden,
        [form.usernameField, `robust-${random()}`],
        [form.passwordField, random()],
        ...form.submit,
      ]
      const valid = fields(first.form)
      const names = [...new Set(valid.map(([k]) => k))]
      const path = new URL(loginUrl).pathname
      const examples = overLongEach(names, 'POST')
      // without the interaction: the form's fields, but none of its cookies (RFC 6749 §10.12)
      await holds(
        `${path} without the interaction`,
        pageRequests(names, ['POST']),
        async (r) => {
          const why = await expectPageAnswer(
            ctx.http,
            await send(loginUrl ?? path, valid, r),
            idp,
            undefined,
            page(r.method),
            refusable(r, ['POST']),
            { sent: encoded(valid, r), clients, declared },
          )
          if (why !== undefined)
            parts.unread(`${path} without the interaction`, showPageRequest(path)(r), why)
        },
        each + examples.length,
        seed,
        showPageRequest(path),
        { examples },
      )
      // within a real interaction (its own login page and cookies), never the real password:
      // each field alone over-long or with control characters, then generated cases
      const within = `${path} within an interaction`
      const interactionAnswer = {
        uri: uriOf(redirectUri),
        errors: AUTHORIZE_ERRORS,
        why: 'the interaction belongs to a verified authorization request',
      }
      const fieldsFirst = [
        first.form.usernameField,
        first.form.passwordField,
        ...names.filter((n) => n !== first.form.usernameField && n !== first.form.passwordField),
      ]
      const fieldCases = fieldsFirst.flatMap((name) =>
        LOGIN_FIELD_SPOILS.map((s): PageRequest => ({
          method: 'POST',
          spoils: [[name, s]],
          noise: [],
          body: 'form',
        })),
      )
      let posted = 0
      let refused: string | undefined
      for (const r of fieldCases) {
        const what = showPageRequest(path)(r)
        if (refused !== undefined || posted >= MAX_FIELD_POSTS) {
          unjudged.push(what)
          continue
        }
        const fresh = await loginFormOf(ctx, authorizeUrl, isClient)
        expectControl(fresh, 'a valid authorization request no longer showed the login form')
        const action = fresh.form.action
        posted++
        const sent = fields(fresh.form)
        const res = await send(action, sent, r, await cookieFor(fresh.jar, action))
        if (refusedUnread(res)) {
          refused = `HTTP ${String(res.status)} at post ${String(posted)}`
          unjudged.push(what)
          continue
        }
        try {
          const why = await expectPageAnswer(
            ctx.http,
            res,
            idp,
            interactionAnswer,
            true,
            refusable(r, ['POST']),
            { sent: encoded(sent, r), clients, declared },
          )
          if (why !== undefined) parts.unread(within, what, why)
        } catch (err) {
          if (!(err instanceof CheckFailure)) throw err
          throw new CheckFailure(`${within}: ${err.message} — ${what}`, err.exchange, err.aside)
        }
      }
      if (unjudged.length > 0)
        ctx.note(
          `${within}: ${String(unjudged.length)} of ${String(fieldCases.length)} over-long or control-character posts not judged: ${
            refused === undefined
              ? `past the ${String(MAX_FIELD_POSTS)} sign-in posts ROBUST-03 may send`
              : `the target refused sign-ins from this address (${refused}): its sign-in budget is used up`
          }`,
        )
      // a throttled address would answer the generated cases 429, which judges nothing
      if (refused !== undefined) unjudged.push(GENERATED_WITHIN)
      else
        await holds(
          within,
          pageRequests(names, ['POST']),
          async (r) => {
            // a throttled address judges nothing more: the cases left are not sent
            if (refused !== undefined) return
            const fresh = await loginFormOf(ctx, authorizeUrl, isClient)
            expectControl(fresh, 'a valid authorization request no longer showed the login form')
            const action = fresh.form.action
            const sent = fields(fresh.form)
            const res = await send(action, sent, r, await cookieFor(fresh.jar, action))
            if (refusedUnread(res)) {
              refused = `HTTP ${String(res.status)} to a generated case`
              return
            }
            const why = await expectPageAnswer(
              ctx.http,
              res,
              idp,
              interactionAnswer,
              page(r.method),
              refusable(r, ['POST']),
              { sent: encoded(sent, r), clients, declared },
            )
            if (why !== undefined) parts.unread(within, showPageRequest(path)(r), why)
          },
          Math.min(each, MAX_LOGIN_POSTS),
          seed,
          showPageRequest(path),
          // each case is a failed sign-in the target counts: shrinking adds as few again at most
          { shrinkBudget: MAX_LOGIN_POSTS },
        )
      if (refused !== undefined && !unjudged.includes(GENERATED_WITHIN)) {
        ctx.note(
          `${within}: the target refused sign-ins from this address (${refused}): its sign-in budget is used up, and the generated cases after it were not sent`,
        )
        unjudged.push(`${GENERATED_WITHIN} (${refused}, and those after it)`)
      }
    }
  }

  // RP-Initiated Logout §2 (GET and POST), §3: redirected only to a registered URI
  const postLogout = main.postLogoutRedirectUri
  const logoutValid: Pairs = [
    ['id_token_hint', `${random()}.${random()}.${random()}`],
    ['post_logout_redirect_uri', postLogout ?? 'https://client.example/logged-out'],
    ['state', random()],
    ['client_id', main.id],
  ]
  const logoutNames = logoutValid.map(([k]) => k)
  const logoutExamples = overLongEach(logoutNames, 'GET')
  await holds(
    LOGOUT,
    pageRequests(logoutNames, ['GET', 'POST']),
    async (r) => {
      const why = await expectPageAnswer(
        ctx.http,
        await send(LOGOUT, logoutValid, r),
        idp,
        // §3: a registered URI is never an unverified one, however the request was spoilt
        postLogout
          ? { uri: uriOf(postLogout), why: 'the registered post_logout_redirect_uri' }
          : undefined,
        page(r.method),
        refusable(r, ['GET', 'POST']),
        { sent: encoded(logoutValid, r), clients, declared },
      )
      if (why !== undefined) parts.unread(LOGOUT, showPageRequest(LOGOUT)(r), why)
    },
    each + logoutExamples.length,
    seed,
    showPageRequest(LOGOUT),
    { examples: logoutExamples },
  )
  // what the sign-in budget left unjudged leaves the check inconclusive, after what it did show
  if (unjudged.length > 0)
    parts.part('the login post within an interaction', `not sent: ${unjudged.join('; ')}`)
  parts.end()
})

/** The credentials ROBUST-03 sends through a script's sign-in request: each field alone. */
const SCRIPT_SIGN_IN_VALUES: readonly [string, string][] = [
  ...OVER_LONG_LENGTHS.map((n): [string, string] => [`${String(n)} characters`, 'x'.repeat(n)]),
  ['NUL and control characters', 'robust\u0000\u0001\u001f\u007f\r\n'],
]

/**
 * ROBUST-03's login post on a login page its script renders: the browser's own credential
 * request (captureSignIn), replayed with each credential over-long or holding control
 * characters (RFC 9110 §15.6: a 5xx is the server's fault, never the request's). A throttled or
 * overloaded answer (refusedUnread) judges nothing; a request that cannot be recorded or
 * replayed leaves the part not judged, with why.
 */
async function scriptSignInCases(
  ctx: CheckContext,
  parts: ReturnType<typeof unjudgedParts>,
): Promise<void> {
  const part = 'the login post'
  const form = await captureSignIn(ctx).catch((err: unknown) => {
    parts.part(
      part,
      `a valid authorization request showed no login form in its HTML, and its script's sign-in could not be recorded: ${(err as Error).message.split('\n')[0] ?? ''}`,
    )
    return undefined
  })
  if (!form) return
  ctx.note(`${part}: replayed the page's own sign-in request, ${describeSignIn(form)}`)
  // never the real user's name: failed sign-ins must not lock a user the other checks sign in
  const nobody = `robust-${randomBytes(6).toString('hex')}`
  for (const field of ['username', 'password'] as const)
    for (const [what, value] of SCRIPT_SIGN_IN_VALUES) {
      const user =
        field === 'username'
          ? { username: value, password: 'robust-not-the-password' }
          : { username: nobody, password: value }
      const sent = `${form.method} ${new URL(form.action).pathname} with a ${field} of ${what}`
      const res = await replaySignIn(ctx, form, user).catch((err: unknown) => err as Error)
      if (res instanceof Error)
        throw new CheckFailure(
          `${sent}: the connection failed (${res.message.split('\n')[0] ?? ''}): the server dropped a sign-in it should answer (RFC 9110 §15.6)`,
        )
      const unread = refusedUnread(res)
      if (unread !== undefined) {
        // the sign-in budget is used up: the cases after it are not sent
        parts.unread(part, sent, unread)
        return
      }
      if (res.status >= 500)
        throw new CheckFailure(
          `${sent}: HTTP ${String(res.status)}: a server error for a sign-in with a malformed ${field} (RFC 9110 §15.6: the request was the client's to get wrong, a 4xx)`,
        )
    }
}

/** The robustness checks, one per row of catalogue/robustness.ts. */
export const robustnessChecks: AreaChecks<typeof catalogue> = {
  'ROBUST-01': ROBUST_01,
  'ROBUST-02': ROBUST_02,
  'ROBUST-03': ROBUST_03,
}
