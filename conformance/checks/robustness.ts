import { randomBytes, type JsonWebKey } from 'node:crypto'
import fc from 'fast-check'
import { exportJWK, generateKeyPair } from 'jose'
import { type AreaChecks, check } from '../harness/check.ts'
import type { robustness as catalogue } from '../catalogue/robustness.ts'
import { expectInactive } from '../harness/expect.ts'
import {
  BRANDING,
  credentials,
  endpointUrl,
  INTROSPECT,
  REVOKE,
  TOKEN,
  USER_INFO,
} from '../harness/requests.ts'
import { holds, propertyBudget } from '../harness/fuzz/property.ts'
import { pkcePair } from '../harness/flows.ts'
import {
  type Endpoint,
  expectRegisteredError,
  malformed,
  showMalformed,
  toRequest,
} from '../harness/fuzz/requests.ts'
import { type Forge, mutate, mutationArb } from '../harness/fuzz/jwt.ts'
import { expectAccepted, realTokens, userInfoRefuses } from '../harness/fuzz/tokens.ts'
import {
  AUTHORIZE,
  AUTHORIZE_ERRORS,
  expectPageAnswer,
  loginFormOf,
  LOGOUT,
  overLongEach,
  type Pairs,
  pageRequest,
  pageRequests,
  showPageRequest,
  untouched,
} from '../harness/fuzz/pages.ts'
import { expectControl } from '../harness/expect.ts'
import type { CookieJar } from 'tough-cookie'

const ROBUST_01 = check(async (ctx) => {
  const { runs, seed } = propertyBudget(ctx)
  const endpoints: Endpoint[] = [TOKEN, INTROSPECT, REVOKE, USER_INFO, BRANDING]
  const each = Math.max(1, Math.ceil(runs / endpoints.length))
  for (const path of endpoints) {
    await holds(
      path,
      malformed(path, ctx.target.clients.main),
      async (m) => expectRegisteredError(await ctx.http.request(path, toRequest(m)), path),
      each,
      seed,
      showMalformed(path),
    )
  }
})

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
  const arb = fc.record({ base: fc.nat(tokens.length - 1), m: mutationArb })
  await holds(
    'a mutated access token',
    arb,
    async ({ base, m }) => {
      const real = tokens[base] ?? tokens[0]
      if (!real) return
      const token = await mutate(m, real.token, forge)
      if (token === real.token) return
      await userInfoRefuses(ctx, token)
      // RFC 7662 §2.2: as the client it was issued to, still exactly {"active":false}
      const res = await ctx.http.postForm(INTROSPECT, { token, ...credentials(real.client) })
      expectInactive(res, 'the mutated token')
    },
    runs,
    seed,
    ({ base, m }) => `${tokens[base]?.name ?? '?'} with ${JSON.stringify(m)}`,
  )
  await expectAccepted(ctx, tokens, 'after the mutations')
})

/**
 * The most login posts within a real interaction (and as many again while shrinking): each is
 * a failed sign-in the target counts, and may throttle the run's address for later checks.
 */
const MAX_LOGIN_POSTS = 5

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
  const idp = new URL(ctx.target.baseUrl).origin
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
  let loginUrl: string | undefined
  if (!redirectUri)
    ctx.note(`client ${main.id} has no redirectUri: authorize and the login post are not fuzzed`)
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
      AUTHORIZE,
      pageRequests(names, ['GET', 'POST']),
      async (r) => {
        // RFC 6749 §4.1.2.1: an error is redirected only once client and redirect URI are
        // verified; before that the user is shown a page
        const verified = untouched(r, 'client_id') && untouched(r, 'redirect_uri')
        await expectPageAnswer(
          ctx.http,
          await send(AUTHORIZE, valid, r),
          idp,
          verified
            ? {
                uri: uriOf(redirectUri),
                errors: AUTHORIZE_ERRORS,
                why: 'the registered redirect_uri, sent with its client',
              }
            : undefined,
          page(r.method),
        )
      },
      each + examples.length,
      seed,
      showPageRequest(AUTHORIZE),
      { examples },
    )

    // the login form's post: its action and fields from a real login page (a script-rendered
    // or multi-step login has none to read, and is not fuzzed)
    const authorizeUrl = `${endpointUrl(ctx.target, 'authorization_endpoint')}?${new URLSearchParams(valid.map(([k, v]) => [k, v])).toString()}`
    const isClient = (url: URL) => url.origin !== idp
    const first = await loginFormOf(ctx, authorizeUrl, isClient)
    if (!first)
      ctx.note(
        'a valid authorization request showed no login form in its HTML (script-rendered or multi-step): the login post is not fuzzed',
      )
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
          await expectPageAnswer(
            ctx.http,
            await send(loginUrl ?? path, valid, r),
            idp,
            undefined,
            page(r.method),
          )
        },
        each + examples.length,
        seed,
        showPageRequest(path),
        { examples },
      )
      // within a real interaction (its own login page and cookies): never the real password
      await holds(
        `${path} within an interaction`,
        pageRequests(names, ['POST']),
        async (r) => {
          const fresh = await loginFormOf(ctx, authorizeUrl, isClient)
          expectControl(fresh, 'a valid authorization request no longer showed the login form')
          const action = fresh.form.action
          await expectPageAnswer(
            ctx.http,
            await send(action, fields(fresh.form), r, await cookieFor(fresh.jar, action)),
            idp,
            {
              uri: uriOf(redirectUri),
              errors: AUTHORIZE_ERRORS,
              why: 'the interaction belongs to a verified authorization request',
            },
            page(r.method),
          )
        },
        Math.min(each, MAX_LOGIN_POSTS),
        seed,
        showPageRequest(path),
        // each case is a failed sign-in the target counts: shrinking adds as few again at most
        { shrinkBudget: MAX_LOGIN_POSTS },
      )
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
      await expectPageAnswer(
        ctx.http,
        await send(LOGOUT, logoutValid, r),
        idp,
        // §3: a registered URI is never an unverified one, however the request was spoilt
        postLogout
          ? { uri: uriOf(postLogout), why: 'the registered post_logout_redirect_uri' }
          : undefined,
        page(r.method),
      )
    },
    each + logoutExamples.length,
    seed,
    showPageRequest(LOGOUT),
    { examples: logoutExamples },
  )
})

/** The robustness checks, one per row of catalogue/robustness.ts. */
export const robustnessChecks: AreaChecks<typeof catalogue> = {
  'ROBUST-01': ROBUST_01,
  'ROBUST-02': ROBUST_02,
  'ROBUST-03': ROBUST_03,
}
