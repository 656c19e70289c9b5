import type { CheckContext } from './check.ts'
import type { HttpResponse } from './http.ts'
import type { TargetClient } from './target.ts'
import { DISCOVERY, DISCOVERY_ENDPOINTS, endpointLabel, endpointUrl } from './endpoints.ts'

/**
 * One raw request per endpoint of the interface (INTERFACE.md §4), for the negative cases a
 * good client library refuses to send, and the endpoint paths. Each returns the response
 * uninspected: the expectations are the caller's. An endpoint's path stands for the URL the
 * target's discovery document advertises for it: the check's HTTP client sends it there
 * (endpoints.ts).
 */

export const AUTHORIZE = DISCOVERY_ENDPOINTS.authorization_endpoint
export const TOKEN = DISCOVERY_ENDPOINTS.token_endpoint
export const USER_INFO = DISCOVERY_ENDPOINTS.userinfo_endpoint
export const INTROSPECT = DISCOVERY_ENDPOINTS.introspection_endpoint
export const REVOKE = DISCOVERY_ENDPOINTS.revocation_endpoint
/** INTERFACE.md §4.6 (the end_session_endpoint of §2.7). */
export const LOGOUT = DISCOVERY_ENDPOINTS.end_session_endpoint
export const BRANDING = '/auth/branding'
export const JWKS = DISCOVERY_ENDPOINTS.jwks_uri
export { DISCOVERY, DISCOVERY_ENDPOINTS, endpointLabel, endpointUrl }

/** Client credentials in the form body (client_secret_post), the only method INTERFACE.md has. */
export const credentials = (client: TargetClient): Record<string, string> => ({
  client_id: client.id,
  client_secret: client.secret,
})

/** A raw authorization request (no browser): the response is inspected, never followed. */
export function authorizeRaw(
  ctx: Pick<CheckContext, 'http'>,
  params: Record<string, string | readonly string[]>,
  headers?: Record<string, string>,
): Promise<HttpResponse> {
  return ctx.http.request(AUTHORIZE, {
    query: params,
    headers: { accept: 'text/html', ...headers },
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
  return ctx.http.postForm(TOKEN, body)
}

/** A raw refresh_token grant request (RFC 6749 §6), by default as the main client. */
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

/** An authorization URL with exactly these parameters in this order. */
export function authorizeUrl(
  ctx: Pick<CheckContext, 'target'>,
  params: [string, string][],
): string {
  const endpoint = endpointUrl(ctx.target, 'authorization_endpoint')
  return `${endpoint}${endpoint.includes('?') ? '&' : '?'}${new URLSearchParams(params).toString()}`
}

/** Requests that no endpoint takes, and the status each must get (ERR-01, ERR-02). */
export const ERROR_PROBES = [
  { path: '/auth/no-such-endpoint', method: 'GET', status: 404 },
  { path: '/.well-known/no-such-document', method: 'GET', status: 404 },
  { path: JWKS, method: 'POST', status: 405 },
  { path: DISCOVERY, method: 'DELETE', status: 405 },
] as const
