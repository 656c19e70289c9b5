import { OAuthError, type OAuthErrorCode } from '../errors.ts'
import type { Client, Store } from '../store/store.ts'
import { safeName } from './params.ts'
import { S256_CHALLENGE } from './pkce.ts'
import { isRegisteredRedirectUri } from './redirect-uri.ts'
import { parseScope, withinScope } from './scope.ts'

/** A validated authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, OIDC Core §3.1.2.1). */
export interface AuthorizationRequest {
  readonly clientId: string
  readonly redirectUri: string
  readonly scope: readonly string[]
  readonly state: string | undefined
  readonly nonce: string | undefined
  readonly codeChallenge: string
  readonly prompt: readonly string[]
  readonly maxAge: number | undefined
}

/** Where an authorize error goes: an HTML page (no safe redirect) or the client's redirect URI. */
export type AuthorizeError =
  | { readonly kind: 'page'; readonly error: OAuthError }
  | {
      readonly kind: 'redirect'
      readonly error: OAuthError
      readonly redirectUri: string
      readonly state: string | undefined
    }

export type AuthorizeValidation =
  | { readonly kind: 'ok'; readonly request: AuthorizationRequest; readonly client: Client }
  | AuthorizeError

/** The longest `state` accepted, in characters. */
export const MAX_STATE = 2048
const MAX_NONCE = 512
const PROMPTS = ['none', 'login', 'consent', 'select_account']

const fail = (code: OAuthErrorCode, description: string) => new OAuthError(code, description)

/**
 * Validates an authorization request. Client and redirect_uri come first: until both are
 * known good, every error is shown as a page and never redirected (RFC 6749 §4.1.2.1,
 * §3.1.2.4); after that, errors go back to the client with `state`.
 */
export async function validateAuthorizationRequest(
  raw: Readonly<Record<string, unknown>>,
  store: Pick<Store, 'clients'>,
): Promise<AuthorizeValidation> {
  const page = (code: OAuthErrorCode, description: string): AuthorizeError => ({
    kind: 'page',
    error: fail(code, description),
  })
  const clientId = raw.client_id
  if (typeof clientId !== 'string' || clientId === '') {
    return page(
      'invalid_request',
      Array.isArray(clientId) ? 'client_id is repeated' : 'missing required parameter client_id',
    )
  }
  const client = await store.clients.get(clientId)
  if (!client)
    return page(
      'invalid_client',
      `client_id '${safeName(clientId)}' is not registered: register it in the clients file given to serve --clients, or use a fixture client`,
    )
  const redirectUri = raw.redirect_uri
  if (typeof redirectUri !== 'string' || redirectUri === '') {
    return page(
      'invalid_request',
      Array.isArray(redirectUri)
        ? 'redirect_uri is repeated'
        : 'missing required parameter redirect_uri',
    )
  }
  // RFC 9700 §2.1, §4.1.3: exact string comparison, no normalisation; RFC 8252 §7.3: any
  // port on a loopback IP
  if (!isRegisteredRedirectUri(client.redirectUris, redirectUri))
    return page(
      'invalid_request',
      `redirect_uri '${safeName(redirectUri)}' is not registered for client '${safeName(client.id)}': it must equal a registered redirect URI character for character (RFC 6749 section 3.1.2.3); only the port of an http://127.0.0.1 or http://[::1] URI may differ (RFC 8252 section 7.3)`,
    )

  const rawState = raw.state
  const state =
    typeof rawState === 'string' && rawState !== '' && rawState.length <= MAX_STATE
      ? rawState
      : undefined
  const redirect = (code: OAuthErrorCode, description: string): AuthorizeError => ({
    kind: 'redirect',
    error: fail(code, description),
    redirectUri,
    state,
  })

  // RFC 6749 §3.1: parameters MUST NOT be included more than once
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value))
      return redirect(
        'invalid_request',
        `parameter ${name.replace(/[^\w.-]/g, '?').slice(0, 64)} is repeated`,
      )
  }
  const str = (name: string): string | undefined => {
    const v = raw[name]
    return typeof v === 'string' && v !== '' ? v : undefined
  }
  if (typeof rawState === 'string' && rawState.length > MAX_STATE)
    return redirect('invalid_request', 'state is too long')
  if (!client.grantTypes.includes('authorization_code'))
    return redirect(
      'unauthorized_client',
      'the client is not registered for the authorization_code grant: add it to its grant_types',
    )

  const responseType = str('response_type')
  if (!responseType) return redirect('invalid_request', 'missing required parameter response_type')
  if (responseType !== 'code')
    return redirect('unsupported_response_type', 'only response_type=code is supported')
  const responseMode = str('response_mode')
  if (responseMode && responseMode !== 'query')
    return redirect('invalid_request', 'only response_mode=query is supported')
  // OIDC Core §6: request objects are not supported, and say so rather than ignore them
  if (str('request'))
    return redirect('request_not_supported', 'the request parameter is not supported')
  if (str('request_uri'))
    return redirect('request_uri_not_supported', 'the request_uri parameter is not supported')

  // RFC 7636 §4.3, §4.4.1; INTERFACE.md §5.2: PKCE is mandatory and S256 is the only method
  const codeChallenge = str('code_challenge')
  if (!codeChallenge)
    return redirect(
      'invalid_request',
      'code_challenge is required: PKCE with S256 is mandatory here (RFC 7636 section 4.2, RFC 9700 section 2.1.1)',
    )
  const method = str('code_challenge_method')
  // RFC 7636 §4.3: an omitted method means plain, which is refused
  if (method !== 'S256')
    return redirect(
      'invalid_request',
      method === undefined
        ? 'code_challenge_method is missing, which means plain (RFC 7636 section 4.3); send code_challenge_method=S256'
        : 'code_challenge_method must be S256, the only method supported (RFC 7636 section 4.2)',
    )
  if (!S256_CHALLENGE.test(codeChallenge))
    return redirect(
      'invalid_request',
      'code_challenge must be BASE64URL(SHA-256(code_verifier)) without padding: 43 characters of A-Z a-z 0-9 - _ (RFC 7636 section 4.2)',
    )

  const scopeParam = str('scope')
  // INTERFACE.md §4.1: scope is optional; RFC 6749 §3.3: without it, the client's pre-defined
  // default scopes apply, and only a client without any is refused
  if (!scopeParam && client.defaultScopes.length === 0)
    return redirect(
      'invalid_scope',
      `no scope was requested and client '${safeName(client.id)}' has no default scope: send a scope parameter`,
    )
  const scope = scopeParam ? parseScope(scopeParam) : [...client.defaultScopes]
  if (!scope || scope.length === 0) return redirect('invalid_scope', 'scope is malformed')
  if (!withinScope(scope, client.scopes))
    return redirect(
      'invalid_scope',
      `the requested scope is unknown or not allowed for client '${safeName(client.id)}': request only scopes listed in its registration`,
    )

  const nonce = str('nonce')
  if (nonce && nonce.length > MAX_NONCE) return redirect('invalid_request', 'nonce is too long')
  const prompt = (str('prompt') ?? '').split(' ').filter(Boolean)
  if (!prompt.every((p) => PROMPTS.includes(p)))
    return redirect('invalid_request', 'prompt has an unsupported value')
  if (prompt.includes('none') && prompt.length > 1)
    return redirect('invalid_request', 'prompt=none cannot be combined with other values')
  const maxAgeParam = str('max_age')
  let maxAge: number | undefined
  if (maxAgeParam !== undefined) {
    if (!/^\d{1,9}$/.test(maxAgeParam))
      return redirect('invalid_request', 'max_age must be a non-negative integer')
    maxAge = Number(maxAgeParam)
  }
  return {
    kind: 'ok',
    client,
    request: { clientId, redirectUri, scope, state, nonce, codeChallenge, prompt, maxAge },
  }
}

/** The redirect back to the client (RFC 6749 §4.1.2, RFC 9207 §2: `iss` names the issuer). */
export function clientRedirect(
  redirectUri: string,
  params: Record<string, string | undefined>,
): string {
  // built by concatenation so the registered URI is sent back byte for byte
  const query = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.append(k, v)
  const encoded = query.toString()
  if (encoded === '') return redirectUri
  return `${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${encoded}`
}
