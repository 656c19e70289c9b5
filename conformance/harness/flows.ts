import type { decodeProtectedHeader } from 'jose'
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose'
import type { CheckContext } from './check.ts'
import { browse, type BrowserOutcome } from './browser.ts'
import { expectJsonObject, expectStatus, expectThat } from './expect.ts'
import type { HttpResponse } from './http.ts'
import { oidc, oidcConfig } from './oidc.ts'
import type { TargetClient, TargetUser } from './target.ts'

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
  readonly outcome: BrowserOutcome
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
  const context = options.context ?? (await ctx.newBrowserContext())
  const user = options.user === null ? undefined : (options.user ?? ctx.target.users.primary)
  const outcome = await browse(context, ctx.target, url.toString(), ctx.http, {
    ...(user ? { user } : {}),
    ...(options.cancel ? { cancel: true } : {}),
    onLoginPage: async (page) => {
      if (options.screenshot)
        ctx.screenshot('login page', await page.screenshot({ fullPage: true }))
    },
  })
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
  }
}

/** The code of a successful authorization, or a check failure saying what came back instead. */
export function codeOf(result: AuthorizeResult): string {
  expectThat(
    result.callback,
    `the IdP never redirected to ${result.redirectUri} (page at ${result.outcome.page.url()})`,
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
