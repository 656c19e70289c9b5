import { createHmac, createPublicKey, type JsonWebKey } from 'node:crypto'
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import type { CheckContext } from './check.ts'
import {
  CheckFailure,
  expectEqual,
  expectJsonObject,
  expectOAuthError,
  expectStatus,
  expectThat,
} from './expect.ts'
import { tokensFor, type AuthorizeOptions, type AuthorizeResult } from './flows.ts'
import type { HttpResponse } from './http.ts'
import type { TargetClient } from './target.ts'

/**
 * Shared steps of the refresh, client credentials, user-info, introspection and revocation
 * checks: raw requests (the negative cases a good client library refuses to send), the
 * expectations they share, and forged tokens.
 */

export const TOKEN = '/auth/token'
export const USER_INFO = '/auth/user-info'
export const INTROSPECT = '/auth/introspect'
export const REVOKE = '/auth/revoke'

/** The tokens of one authorization code redemption. */
export interface TokenSet {
  readonly accessToken: string
  readonly refreshToken: string | undefined
  readonly idToken: string | undefined
  readonly scope: string
  readonly body: Record<string, unknown>
  readonly auth: AuthorizeResult
}

/** Signs in through the browser, redeems the code and returns the tokens. */
export async function signIn(ctx: CheckContext, options: AuthorizeOptions): Promise<TokenSet> {
  const { body, auth } = await tokensFor(ctx, options)
  expectThat(
    typeof body.access_token === 'string' && body.access_token !== '',
    `token response without an access_token: ${JSON.stringify(Object.keys(body))}`,
  )
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
  return {
    accessToken: body.access_token,
    refreshToken: str(body.refresh_token),
    idToken: str(body.id_token),
    // RFC 6749 §5.1: an omitted scope means the requested one
    scope: str(body.scope) ?? options.scope ?? 'openid',
    body,
    auth,
  }
}

/** The refresh token of a token set, or a failure saying it is missing. */
export function refreshTokenOf(set: TokenSet): string {
  expectThat(
    set.refreshToken,
    `no refresh_token in the token response for scope "${set.scope}" (offline_access granted)`,
  )
  return set.refreshToken
}

export function idTokenOf(set: TokenSet): string {
  expectThat(set.idToken, `no id_token in the token response for scope "${set.scope}"`)
  return set.idToken
}

/**
 * The client_credentials client: the service client when configured, else the main client,
 * which has all three grants (TargetConfig), as other checks do.
 */
export function serviceClient(ctx: Pick<CheckContext, 'target' | 'skip'>): TargetClient {
  return ctx.target.clients.service ?? ctx.target.clients.main
}

/**
 * The scope a client_credentials request asks for: the client's configured `scope`, never a
 * name guessed from the reference server's fixtures; without it the check is skipped.
 */
export function clientCredentialsScope(
  ctx: Pick<CheckContext, 'skip'>,
  client: TargetClient,
): string {
  if (!client.scope)
    ctx.skip(
      `the target configuration gives client ${client.id} no scope (clients.*.scope: the scopes it may ask for with client_credentials)`,
    )
  return client.scope
}

/** The second client for cross-client checks, or the check is skipped. */
export function otherClient(ctx: Pick<CheckContext, 'target' | 'skip'>): TargetClient {
  const client = ctx.target.clients.other
  if (!client) ctx.skip('the target configuration names no second (other) client')
  return client
}

/** Client credentials in the form body (client_secret_post), the only method INTERFACE.md has. */
export const credentials = (client: TargetClient): Record<string, string> => ({
  client_id: client.id,
  client_secret: client.secret,
})

/** A raw refresh_token grant request. */
export function refreshRaw(
  ctx: Pick<CheckContext, 'http' | 'target'>,
  refreshToken: string,
  options: { client?: TargetClient; scope?: string; extra?: Record<string, string> } = {},
): Promise<HttpResponse> {
  return ctx.http.postForm(TOKEN, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    ...(options.scope !== undefined ? { scope: options.scope } : {}),
    ...credentials(options.client ?? ctx.target.clients.main),
    ...options.extra,
  })
}

/** A raw client_credentials grant request. */
export function clientCredentialsRaw(
  ctx: Pick<CheckContext, 'http'>,
  client: TargetClient,
  scope?: string,
): Promise<HttpResponse> {
  return ctx.http.postForm(TOKEN, {
    grant_type: 'client_credentials',
    ...(scope !== undefined ? { scope } : {}),
    ...credentials(client),
  })
}

/** A raw introspection request (RFC 7662 §2.1), by default as the main client. */
export function introspectRaw(
  ctx: Pick<CheckContext, 'http' | 'target'>,
  token: string,
  options: { client?: TargetClient; hint?: string; form?: Record<string, string> } = {},
): Promise<HttpResponse> {
  return ctx.http.postForm(
    INTROSPECT,
    options.form ?? {
      token,
      ...(options.hint !== undefined ? { token_type_hint: options.hint } : {}),
      ...credentials(options.client ?? ctx.target.clients.main),
    },
  )
}

/** A raw revocation request (RFC 7009 §2.1), by default as the main client. */
export function revokeRaw(
  ctx: Pick<CheckContext, 'http' | 'target'>,
  token: string,
  options: { client?: TargetClient; hint?: string; form?: Record<string, string> } = {},
): Promise<HttpResponse> {
  return ctx.http.postForm(
    REVOKE,
    options.form ?? {
      token,
      ...(options.hint !== undefined ? { token_type_hint: options.hint } : {}),
      ...credentials(options.client ?? ctx.target.clients.main),
    },
  )
}

/** A user-info request with `Authorization: <scheme> <token>` (no header when token is undefined). */
export function userInfoRaw(
  ctx: Pick<CheckContext, 'http'>,
  token: string | undefined,
  options: { method?: 'GET' | 'POST'; scheme?: string; form?: Record<string, string> } = {},
): Promise<HttpResponse> {
  const headers: Record<string, string> =
    token === undefined ? {} : { authorization: `${options.scheme ?? 'Bearer'} ${token}` }
  return ctx.http.request(USER_INFO, {
    method: options.method ?? 'GET',
    headers,
    ...(options.form ? { form: options.form } : {}),
  })
}

/** An access token for the credential checks: the service client's, else the main client's. */
export async function someAccessToken(
  ctx: CheckContext,
): Promise<{ token: string; client: TargetClient }> {
  const service = ctx.target.clients.service
  if (service) {
    const res = await clientCredentialsRaw(ctx, service)
    expectStatus(res, 200, 'client_credentials token for the check')
    return { token: String(expectJsonObject(res, 'token').access_token), client: service }
  }
  const set = await signIn(ctx, { scope: 'openid' })
  return { token: set.accessToken, client: ctx.target.clients.main }
}

/** A failed client authentication: 401 invalid_client and nothing about the token. */
export function expectNoTokenData(res: HttpResponse, what: string): void {
  about(what, () => expectOAuthError(res, 401, 'invalid_client'))
  const body = res.json as Record<string, unknown>
  for (const field of ['active', 'sub', 'scope', 'client_id', 'exp'])
    expectThat(!(field in body), `${what}: the error body carries "${field}"`)
}

/**
 * ARCHITECTURE.md (C1): a Basic header instead of the body is a SHOULD-level note; either way
 * a 4xx must be 401 invalid_client with a challenge (RFC 6749 §5.2).
 */
export async function probeBasic(
  ctx: CheckContext,
  path: string,
  token: string,
  client: TargetClient,
): Promise<void> {
  const basic = Buffer.from(
    `${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`,
  ).toString('base64')
  const res = await ctx.http.request(path, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}` },
    form: { token },
  })
  if (res.status === 200) {
    ctx.note(`${path}: client_secret_basic is accepted (RFC 6749 §2.3.1)`)
    return
  }
  const what = `${path} with an Authorization: Basic header instead of the body`
  about(what, () => expectOAuthError(res, 401, 'invalid_client'))
  expectThat(
    res.headers.get('www-authenticate'),
    `${what}: 401 without WWW-Authenticate (RFC 6749 §5.2)`,
  )
  ctx.note(`${path}: client_secret_basic is refused (INTERFACE.md allows client_secret_post only)`)
}

/** The scope string as a sorted list of distinct values. */
export const scopeList = (scope: unknown): string[] =>
  typeof scope === 'string' ? [...new Set(scope.split(' ').filter(Boolean))].sort() : []

/** The scope must be a space-separated string holding exactly `expected` (any order). */
export function expectScope(actual: unknown, expected: string, what: string): void {
  expectThat(typeof actual === 'string', `${what}: expected a scope string, got ${show(actual)}`)
  expectEqual(scopeList(actual).join(' '), scopeList(expected).join(' '), what)
}

/** RFC 6749 §5.1: token responses MUST NOT be cached. */
export function expectNoStore(res: HttpResponse, what: string): void {
  const cacheControl = res.headers.get('cache-control') ?? ''
  expectThat(
    /(^|[\s,])no-store($|[\s,])/i.test(cacheControl),
    `${what}: expected Cache-Control: no-store, got ${show(cacheControl)}`,
  )
  expectThat(
    /no-cache/i.test(res.headers.get('pragma') ?? ''),
    `${what}: expected Pragma: no-cache, got ${show(res.headers.get('pragma'))}`,
  )
}

/** INTERFACE.md §2.5: an inactive token is exactly `{"active":false}`, with status 200. */
export function expectInactive(res: HttpResponse, what: string): void {
  expectStatus(res, 200, `introspection of ${what}`)
  const body = expectJsonObject(res, `introspection of ${what}`)
  expectThat(
    body.active === false,
    `introspection of ${what}: expected active false, got ${show(body)}`,
  )
  expectThat(
    Object.keys(body).length === 1,
    `introspection of ${what}: an inactive answer holds only "active" (INTERFACE.md §2.5), got ${show(body)}`,
  )
}

/** RFC 7662 §2.2: an active token is 200 with active true; returns the body. */
export function expectActive(res: HttpResponse, what: string): Record<string, unknown> {
  expectStatus(res, 200, `introspection of ${what}`)
  const body = expectJsonObject(res, `introspection of ${what}`)
  expectThat(
    body.active === true,
    `introspection of ${what}: expected active true, got ${show(body)}`,
  )
  return body
}

/** INTERFACE.md §3, §4.5: every revocation with valid credentials is 200 with a message. */
export function expectRevoked(res: HttpResponse, what: string): void {
  expectStatus(res, 200, `revocation of ${what}`)
  const body = expectJsonObject(res, `revocation of ${what}`)
  expectThat(
    typeof body.message === 'string' && body.message !== '',
    `revocation of ${what}: expected a "message" string, got ${show(body)}`,
  )
}

/** The scheme and auth-params of a WWW-Authenticate challenge (RFC 9110 §11.6.1). */
export function parseChallenge(
  header: string | null,
): { scheme: string; params: Record<string, string> } | undefined {
  if (!header) return undefined
  const m = /^\s*([A-Za-z][\w!#$%&'*+.^`|~-]*)(.*)$/s.exec(header)
  if (!m?.[1]) return undefined
  const params: Record<string, string> = {}
  const re = /(?:^|,)\s*([\w!#$%&'*+.^`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g
  for (const p of (m[2] ?? '').matchAll(re)) {
    if (p[1]) params[p[1].toLowerCase()] = (p[2] ?? p[3] ?? '').replace(/\\(.)/g, '$1')
  }
  return { scheme: m[1], params }
}

/**
 * RFC 6750 §3: a user-info refusal with `status` carries a Bearer challenge; with `error`
 * given, the challenge names it (and the JSON body, when there is one, agrees).
 */
export function expectBearerChallenge(
  res: HttpResponse,
  status: number | readonly number[],
  error: string | undefined,
  what: string,
): Record<string, string> {
  expectStatus(res, status, what)
  const header = res.headers.get('www-authenticate')
  const challenge = parseChallenge(header)
  expectThat(
    challenge?.scheme.toLowerCase() === 'bearer',
    `${what}: expected WWW-Authenticate: Bearer …, got ${show(header)}`,
  )
  if (error !== undefined) {
    expectThat(
      challenge.params.error === error,
      `${what}: expected WWW-Authenticate with error="${error}", got ${show(header)}`,
    )
  }
  return challenge.params
}

/** Claims of a JWT without verifying it (the checks verify separately where it matters). */
export function claimsOf(token: string): JWTPayload {
  try {
    return decodeJwt(token)
  } catch {
    throw new Error(`not a JWT: ${token.slice(0, 20)}…`)
  }
}

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/** The same claims with alg none and no signature (RFC 8725 §2.1). */
export function forgeAlgNone(token: string): string {
  const header = { ...decodeProtectedHeader(token), alg: 'none' }
  return `${b64(header)}.${b64(claimsOf(token))}.`
}

/** One claim changed, header and signature kept. */
export function forgeTampered(token: string): string {
  const [header, , signature] = token.split('.')
  const claims = { ...claimsOf(token), sub: 'attacker' }
  return `${header ?? ''}.${b64(claims)}.${signature ?? ''}`
}

/**
 * HS256 keyed with the target's own RSA public key (PEM), the algorithm-confusion attack of
 * RFC 8725 §2.1: a verifier that lets the token choose the algorithm accepts it.
 */
export async function forgeHs256WithPublicKey(
  ctx: Pick<CheckContext, 'http'>,
  token: string,
): Promise<string> {
  const header = decodeProtectedHeader(token)
  const res = await ctx.http.get('/.well-known/jwks.json')
  const keys = ((res.json as { keys?: JsonWebKey[] } | undefined)?.keys ?? []) as (JsonWebKey & {
    kid?: string
  })[]
  const jwk = keys.find((k) => k.kid === header.kid) ?? keys[0]
  expectThat(jwk, 'the JWKS has no key to build the HS256 forgery from')
  const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' })
  const input = `${b64({ ...header, alg: 'HS256' })}.${b64(claimsOf(token))}`
  const mac = createHmac('sha256', pem).update(input).digest('base64url')
  return `${input}.${mac}`
}

/** The same claims and kid, validly signed with a key the target never published. */
export async function forgeForeign(token: string): Promise<string> {
  const header = decodeProtectedHeader(token)
  const { privateKey } = await generateKeyPair('RS256')
  return new SignJWT(claimsOf(token))
    .setProtectedHeader({ ...header, alg: 'RS256' })
    .sign(privateKey)
}

/** Every forgery of a real access token, by name. */
export async function forgeries(
  ctx: Pick<CheckContext, 'http'>,
  token: string,
): Promise<[string, string][]> {
  return [
    ['garbage', 'not-a-token-0123456789'],
    ['a truncated token', token.slice(0, -12)],
    ['the token with alg none', forgeAlgNone(token)],
    ['the token re-signed HS256 with the public key', await forgeHs256WithPublicKey(ctx, token)],
    ['the token signed by another key', await forgeForeign(token)],
    ['the token with a changed sub (signature kept)', forgeTampered(token)],
  ]
}

/**
 * Moves the embedded server's clock past an access token's expiry (for the rest of the check:
 * the harness puts it back afterwards); elsewhere notes why the expiry part is left out and
 * returns false.
 */
export function expireTokens(ctx: CheckContext, expiresIn: unknown, what: string): boolean {
  const controls = ctx.target.controls
  if (!controls) {
    ctx.note(`${what}: not checked, because only the embedded server's clock can be moved`)
    return false
  }
  controls.advanceClock((typeof expiresIn === 'number' ? expiresIn : 3600) + 1)
  return true
}

/** Runs expectations with `what` in front of their failure message. */
export function about<T>(what: string, expectations: () => T): T {
  try {
    return expectations()
  } catch (err) {
    if (err instanceof CheckFailure) throw new CheckFailure(`${what}: ${err.message}`)
    throw err
  }
}

/** Polls `probe` until it holds or `ms` have passed; returns whether it held. */
export async function within(ms: number, probe: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + ms
  for (;;) {
    if (await probe()) return true
    if (performance.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function show(v: unknown): string {
  const s = (JSON.stringify(v) as string | undefined) ?? String(v)
  return s.length > 300 ? `${s.slice(0, 300)}…` : s
}
