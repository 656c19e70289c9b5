import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { endpointOf, type Explain } from '../explain/findings.ts'
import { loginRequired, type OAuthError } from '../errors.ts'
import { issueCode } from '../grants/issue-code.ts'
import {
  clientRedirect,
  validateAuthorizationRequest,
  type AuthorizationRequest,
} from '../protocol/authorization-request.ts'
import { randomToken, sha256Hex } from '../protocol/digest.ts'
import { rawParams } from '../protocol/params.ts'
import { currentSession, INTERACTION_COOKIE } from '../sessions.ts'
import type { Branding } from '../store/store.ts'
import { errorPage } from '../views/error.ts'
import { loginPage } from '../views/login.ts'
import { newNonce, page } from '../views/respond.ts'

/** How long a rendered login form stays usable, seconds. */
export const INTERACTION_TTL = 600

/** Redirects to the client; never cached (RFC 6749 §4.1.2 responses carry codes). */
export function redirectToClient(
  h: ResponseToolkit,
  redirectUri: string,
  params: Record<string, string | undefined>,
  status: 302 | 303 | 307,
): ResponseObject {
  return h
    .redirect(clientRedirect(redirectUri, params))
    .code(status)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
}

export function errorRedirect(
  h: ResponseToolkit,
  target: { redirectUri: string; state: string | undefined },
  error: OAuthError,
  deps: Pick<Deps, 'config'>,
  status: 302 | 303 = 302,
): ResponseObject {
  return redirectToClient(
    h,
    target.redirectUri,
    {
      error: error.code,
      error_description: error.message,
      state: target.state,
      iss: deps.config.baseUrl,
    },
    status,
  )
}

export function errorPageResponse(
  h: ResponseToolkit,
  error: OAuthError,
  branding: Branding | undefined,
  status = error.status,
  title: 'Sign-in error' | 'Sign-out error' = 'Sign-in error',
): ResponseObject {
  const nonce = newNonce()
  return page(
    h,
    errorPage({ error: error.code, description: error.message, branding, nonce, title }),
    {
      nonce,
      status,
    },
  )
}

/**
 * Issues a code for a signed-in user and returns the success redirect's parameters
 * (RFC 6749 §4.1.2: code and the state exactly as received; RFC 9207 §2: iss).
 */
export async function issueCodeParams(
  ar: AuthorizationRequest,
  user: { userId: string; authTime: number },
  deps: Parameters<typeof issueCode>[2],
): Promise<Record<string, string | undefined>> {
  const code = await issueCode(ar, user, deps)
  return { code, state: ar.state, iss: deps.config.baseUrl }
}

/** Renders the login page for a validated request, bound to this browser by a cookie. */
export async function showLogin(
  h: ResponseToolkit,
  request: AuthorizationRequest,
  deps: Pick<Deps, 'store' | 'clock'>,
): Promise<ResponseObject> {
  const interaction = randomToken()
  const csrf = randomToken()
  await deps.store.interactions.insert({
    id: interaction,
    request: { ...request },
    csrfDigest: sha256Hex(csrf),
    expiresAt: deps.clock() + INTERACTION_TTL,
  })
  const nonce = newNonce()
  const branding = await deps.store.clients.branding(request.clientId)
  const view = loginPage({ interaction, csrf, branding, nonce })
  return page(h, view, { nonce, formTargets: [request.redirectUri] }).state(
    INTERACTION_COOKIE,
    interaction,
    { ttl: INTERACTION_TTL * 1000 },
  )
}

/** Client-check mode: what the authorize request did that a careful client would not. */
function explainAuthorize(
  explain: Explain,
  request: Request,
  raw: Readonly<Record<string, unknown>>,
  validation: Awaited<ReturnType<typeof validateAuthorizationRequest>>,
): void {
  const context = {
    clientId: typeof raw.client_id === 'string' ? raw.client_id : undefined,
    endpoint: endpointOf(request),
  }
  const method = raw.code_challenge_method
  if (method === 'plain' || (typeof raw.code_challenge === 'string' && method === undefined))
    explain.record('pkce.plain', {
      ...context,
      detail:
        method === 'plain'
          ? 'code_challenge_method=plain'
          : 'code_challenge without code_challenge_method',
    })
  if (raw.code_challenge === undefined || raw.code_challenge === '')
    explain.record('pkce.missing', context)
  if (validation.kind !== 'ok') return
  if (validation.request.state === undefined) explain.record('authorize.no-state', context)
  if (validation.request.scope.includes('openid') && validation.request.nonce === undefined)
    explain.record('authorize.no-nonce', context)
}

/**
 * GET and POST /auth/authorize (OIDC Core §3.1.2.1 requires both): validate, then either issue
 * a code from a live session, answer prompt=none with login_required, or show the login page.
 */
export const authorize = (deps: Deps): ServerRoute[] => {
  const handler = async (request: Request, h: ResponseToolkit) => {
    const raw = rawParams(request.method === 'post' ? request.payload : request.query)
    const validation = await validateAuthorizationRequest(raw, deps.store)
    if (deps.explain) explainAuthorize(deps.explain, request, raw, validation)
    if (validation.kind === 'page') return errorPageResponse(h, validation.error, undefined)
    if (validation.kind === 'redirect') return errorRedirect(h, validation, validation.error, deps)
    const ar = validation.request
    const session = await currentSession(request, deps)
    const now = deps.clock()
    // OIDC Core §3.1.2.1: prompt=login and an exceeded max_age both demand a new login
    const forceLogin =
      ar.prompt.includes('login') ||
      (session !== undefined && ar.maxAge !== undefined && now - session.authTime > ar.maxAge)
    if (session !== undefined && !forceLogin) {
      const user = { userId: session.userId, authTime: session.authTime }
      return redirectToClient(h, ar.redirectUri, await issueCodeParams(ar, user, deps), 302)
    }
    if (ar.prompt.includes('none')) {
      // OIDC Core §3.1.2.6: prompt=none never shows UI
      return errorRedirect(h, ar, loginRequired('the user is not signed in'), deps)
    }
    return showLogin(h, ar, deps)
  }
  return [
    { method: 'GET', path: '/auth/authorize', options: { handler } },
    {
      method: 'POST',
      path: '/auth/authorize',
      options: {
        handler,
        payload: { allow: 'application/x-www-form-urlencoded', maxBytes: 16 * 1024 },
      },
    },
  ]
}
