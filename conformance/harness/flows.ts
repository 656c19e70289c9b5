import type { decodeProtectedHeader } from 'jose'
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose'
import type { CheckContext } from './check.ts'
import { browse, clientOrigins, type BrowserOutcome } from './browser.ts'
import { expectJsonObject, expectStatus, expectThat } from './expect.ts'
import type { HttpResponse } from './http.ts'
import { oidc, oidcConfig } from './oidc.ts'
import type { TargetClient, TargetUser } from './target.ts'
import type { Page } from '@playwright/test'

/** The result of driving an authorization request through the browser. */
export interface AuthorizeResult {
  readonly client: TargetClient
  readonly redirectUri: string
  readonly config: oidc.Configuration
  readonly verifier: string
  readonly challenge: string
  readonly state: string
  readonly nonce: string | undefined
  /** The authorization request URL. */
  readonly url: string
  /** The URL the IdP sent the browser to at the client, if any. */
  readonly callback: URL | undefined
  /**
   * How the flow ended. When the code came from a replay of the user's IdP session over HTTP
   * (`via: 'session'`) there is no page: reading `page` then throws (a harness error, so the
   * check is inconclusive, never judged). Requests that need the page (a check's own context,
   * `user: null`, `cancel`, `screenshot`, interaction parameters) always go through the browser.
   */
  readonly outcome: BrowserOutcome
  /** Whether the code came through the browser or from a replay of the IdP session. */
  readonly via: 'browser' | 'session'
}

export interface AuthorizeOptions {
  readonly client?: TargetClient
  /** The scope parameter (default openid); null sends none. */
  readonly scope?: string | null
  /** Extra or overriding authorization request parameters. */
  readonly params?: Record<string, string>
  /** The user to sign in as (default: the primary user); null to stop at the login form. */
  readonly user?: TargetUser | null
  readonly cancel?: boolean
  /** Browser context to reuse (keeps the IdP session cookie). */
  readonly context?: Awaited<ReturnType<CheckContext['newBrowserContext']>>
  /** Keep a screenshot of the login page as evidence. */
  readonly screenshot?: boolean
  readonly nonce?: boolean
}

type BrowserContext = Awaited<ReturnType<CheckContext['newBrowserContext']>>

/** The main client, which every target configuration names. */
export const mainClient = (ctx: Pick<CheckContext, 'target'>): TargetClient =>
  ctx.target.clients.main

export function redirectUriOf(ctx: Pick<CheckContext, 'skip'>, client: TargetClient): string {
  if (!client.redirectUri)
    ctx.skip(`client ${client.id} has no redirectUri in the target configuration`)
  return client.redirectUri
}

/**
 * Builds an authorization request with openid-client (PKCE S256, state, nonce), opens it in a
 * fresh browser context and signs in through the login page.
 */
export async function authorize(
  ctx: CheckContext,
  options: AuthorizeOptions = {},
): Promise<AuthorizeResult> {
  const client = options.client ?? mainClient(ctx)
  const redirectUri = redirectUriOf(ctx, client)
  const config = await oidcConfig(ctx, client)
  const verifier = oidc.randomPKCECodeVerifier()
  const challenge = await oidc.calculatePKCECodeChallenge(verifier)
  const state = oidc.randomState()
  // a null scope sends none (INTERFACE.md §4.1: scope is optional)
  const scope = options.scope === null ? '' : (options.scope ?? 'openid')
  // OIDC Core §3.1.2.1: nonce is an OpenID Connect parameter; providers rightly refuse it in
  // a request without the openid scope
  const nonce =
    options.nonce === false || !scope.split(' ').includes('openid') ? undefined : oidc.randomNonce()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    ...(options.scope === null ? {} : { scope }),
    state,
    ...(nonce ? { nonce } : {}),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    // OIDC Core §11: an OP MUST ignore offline_access unless prompt contains consent (or other
    // conditions permit it), so a request for offline access asks the way the standard says
    ...(scope.split(' ').includes('offline_access') ? { prompt: 'consent' } : {}),
    ...options.params,
  })
  const user = options.user === null ? undefined : (options.user ?? ctx.target.users.primary)
  const base = {
    client,
    redirectUri,
    config,
    verifier,
    challenge,
    state,
    nonce,
    url: url.toString(),
  }
  const sessions = replayable(ctx, options) && user ? ctx.sessions : undefined
  let establish: ((context: BrowserContext | undefined) => Promise<void>) | undefined
  if (sessions && user) {
    // one wait for a sign-in in flight, one replay; anything else goes to the browser
    const jar = await sessions.current(user)
    if (jar) {
      const replayed = await sessions.replay(
        ctx.http,
        jar,
        url.toString(),
        clientOrigins(ctx.target),
        LOGIN_FORM,
      )
      if (replayed.kind === 'callback') {
        ctx.note(`sign-in: authorization code from ${user.username}'s IdP session (HTTP replay)`)
        return {
          ...base,
          callback: new URL(replayed.callback),
          outcome: {
            callback: replayed.callback,
            get page(): Page {
              throw new Error('no browser page: the code came from a replay of the IdP session')
            },
            loginShown: false,
            loginPostStatus: undefined,
          },
          via: 'session',
        }
      }
      if (replayed.kind === 'login') {
        sessions.forget(user, jar)
        ctx.note(`sign-in: ${user.username}'s IdP session was gone; signing in again`)
      } else ctx.note(`sign-in: the session replay did not reach the client (${replayed.why})`)
    }
    establish = sessions.claim(user)
  }
  // the sign-in that establishes the user's session skips the browser pool: checks that hold a
  // place in it may be waiting for this session
  const context =
    options.context ?? (await ctx.newBrowserContext(establish ? { outsidePool: true } : undefined))
  const outcome = await browse(context, ctx.target, url.toString(), ctx.http, {
    ...(user ? { user } : {}),
    ...(options.cancel ? { cancel: true } : {}),
    onLoginPage: async (page) => {
      if (options.screenshot)
        ctx.screenshot('login page', await page.screenshot({ fullPage: true }))
    },
  })
  if (establish) {
    // the session is shared only when this sign-in went through the login page to the client
    await establish(outcome.loginShown && outcome.callback ? context : undefined)
    if (outcome.loginShown && outcome.callback)
      ctx.note(
        `sign-in: through the login page in the browser (full PKCE flow); ${user?.username ?? ''}'s session is shared with later checks`,
      )
  }
  if (!establish && ctx.sessions)
    ctx.note(
      `sign-in: through the browser (${options.context || !replayable(ctx, options) ? 'the check drives the browser itself' : 'no reusable session'})`,
    )
  return {
    client,
    redirectUri,
    config,
    verifier,
    challenge,
    state,
    nonce,
    url: url.toString(),
    callback: outcome.callback ? new URL(outcome.callback) : undefined,
    outcome,
    via: 'browser',
  }
}

/** A login form in an HTML page the replay received: the session was not honoured. */
const LOGIN_FORM = /<input\b[^>]*\btype\s*=\s*["']?password\b/i

/**
 * Parameters that make the request about the login interaction itself (a forced or aged
 * login, a hint, a silent request): such a request always goes through the browser.
 */
const INTERACTION_PARAMS = ['prompt', 'max_age', 'login_hint', 'id_token_hint', 'acr_values']

/**
 * Whether an authorization request may take its code from the user's IdP session: not when the
 * check brings its own browser context (it tests the session or the page), stops at or cancels
 * the form, wants the page as evidence, or asks for an interaction by its parameters.
 */
function replayable(ctx: CheckContext, options: AuthorizeOptions): boolean {
  if (!ctx.sessions) return false
  if (options.context || options.user === null || options.cancel || options.screenshot) return false
  return !Object.keys(options.params ?? {}).some((k) => INTERACTION_PARAMS.includes(k))
}

/** The code of a successful authorization, or a check failure saying what came back instead. */
export function codeOf(result: AuthorizeResult): string {
  expectThat(
    result.callback,
    `the IdP never redirected to ${result.redirectUri} (${whereLeft(result)})`,
  )
  const error = result.callback.searchParams.get('error')
  expectThat(
    !error,
    `the authorization failed with error=${error ?? ''} (${result.callback.searchParams.get('error_description') ?? ''})`,
  )
  const code = result.callback.searchParams.get('code')
  expectThat(code, `no code in the redirect to ${result.redirectUri}`)
  return code
}

/** Where a flow that did not reach the client was left, for messages. */
export function whereLeft(result: AuthorizeResult): string {
  return result.via === 'session'
    ? 'the replay of the IdP session ended elsewhere'
    : `page at ${result.outcome.page.url()}`
}

/** Redeems through openid-client, which checks state, nonce and the response's shape. */
export async function redeemWithClient(
  result: AuthorizeResult,
): Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> {
  expectThat(result.callback, `the IdP never redirected to ${result.redirectUri}`)
  return oidc.authorizationCodeGrant(result.config, result.callback, {
    pkceCodeVerifier: result.verifier,
    expectedState: result.state,
    ...(result.nonce ? { expectedNonce: result.nonce } : {}),
    idTokenExpected: false,
  })
}

/** A raw token request for an authorization code (the negative checks). */
export function redeemRaw(
  ctx: Pick<CheckContext, 'http'>,
  form: {
    code: string
    verifier?: string | undefined
    client: TargetClient
    redirectUri?: string | undefined
    extra?: Record<string, string>
  },
): Promise<HttpResponse> {
  const body: Record<string, string> = {
    grant_type: 'authorization_code',
    code: form.code,
    client_id: form.client.id,
    client_secret: form.client.secret,
    ...(form.redirectUri !== undefined ? { redirect_uri: form.redirectUri } : {}),
    ...(form.verifier !== undefined ? { code_verifier: form.verifier } : {}),
    ...form.extra,
  }
  return ctx.http.postForm('/auth/token', body)
}

/** Signs in and redeems the code with a raw request; returns the parsed 200 body. */
export async function tokensFor(
  ctx: CheckContext,
  options: AuthorizeOptions = {},
): Promise<{ body: Record<string, unknown>; res: HttpResponse; auth: AuthorizeResult }> {
  const auth = await authorize(ctx, options)
  const code = codeOf(auth)
  const res = await redeemRaw(ctx, {
    code,
    verifier: auth.verifier,
    client: auth.client,
    redirectUri: auth.redirectUri,
  })
  expectStatus(res, 200, 'token response')
  return { body: expectJsonObject(res, 'token response'), res, auth }
}

/** Fetches the JWKS and verifies a JWT with RS256 only, independently of openid-client. */
export async function verifyJwt(
  ctx: Pick<CheckContext, 'http' | 'target'>,
  token: string,
  options: { audience?: string; typ?: string } = {},
): Promise<{ payload: JWTPayload; header: ReturnType<typeof decodeProtectedHeader> }> {
  const res = await ctx.http.get('/.well-known/jwks.json')
  const jwks = createLocalJWKSet(res.json as Parameters<typeof createLocalJWKSet>[0])
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    algorithms: ['RS256'],
    issuer: ctx.target.baseUrl,
    ...(options.audience ? { audience: options.audience } : {}),
    ...(options.typ ? { typ: options.typ } : {}),
    clockTolerance: 300,
  })
  return { payload, header: protectedHeader }
}

/** A raw authorization request (no browser): the response is inspected, never followed. */
export function authorizeRaw(
  ctx: Pick<CheckContext, 'http'>,
  params: Record<string, string | readonly string[]>,
  headers?: Record<string, string>,
): Promise<HttpResponse> {
  return ctx.http.request('/auth/authorize', {
    query: params,
    headers: { accept: 'text/html', ...headers },
  })
}
