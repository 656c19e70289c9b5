import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import { clients as fixtureClients } from '../../fixtures/clients.ts'
import type { Deps } from '../deps.ts'
import { endpointOf, type Explain } from '../explain/findings.ts'
import { invalidRequest, loginRequired, type OAuthError } from '../errors.ts'
import { issueCode } from '../grants/issue-code.ts'
import {
  clientRedirect,
  validateAuthorizationRequest,
  type AuthorizationRequest,
} from '../protocol/authorization-request.ts'
import { randomToken, sha256Hex } from '../protocol/digest.ts'
import { rawParams } from '../protocol/params.ts'
import { currentSession, INTERACTION_COOKIE, sessionCookie } from '../sessions.ts'
import type { Branding } from '../store/store.ts'
import { errorPage } from '../views/error.ts'
import { html, SafeHtml } from '../views/html.ts'
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

/** The self-test's broken error page: the client_id it was given, shown as markup. */
function reflectingErrorPage(h: ResponseToolkit, error: OAuthError, clientId: string) {
  const nonce = newNonce()
  const description = new SafeHtml(`The application ${clientId} is not registered.`)
  return page(h, errorPage({ error: error.code, description, nonce }), {
    nonce,
    status: error.status,
  })
}

/**
 * Issues a code for a signed-in user and returns the success redirect's parameters
 * (RFC 6749 §4.1.2: code and the state exactly as received; RFC 9207 §2: iss).
 */
export async function issueCodeParams(
  ar: AuthorizationRequest,
  user: { userId: string; authTime: number },
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'faults'>,
): Promise<Record<string, string | undefined>> {
  const bound = deps.faults.has('authorize-drops-nonce') ? { ...ar, nonce: undefined } : ar
  // AUTHZ-02's sabotage: a code is issued but the success redirect leaves it out
  const issued = await issueCode(bound, user, deps)
  const code = deps.faults.has('authorize-success-drops-code') ? undefined : issued
  let state = ar.state
  if (deps.faults.has('authorize-success-drops-state')) state = undefined
  else if (deps.faults.has('authorize-truncates-state')) state = state?.slice(0, 64)
  // SEC-03's sabotage: the success response leaves out iss (RFC 9207 §2)
  const iss = deps.faults.has('authorize-success-drops-iss') ? undefined : deps.config.baseUrl
  // AUTHZ-02's sabotage: a hybrid-flow parameter in the code flow's success redirect
  const leaked = deps.faults.has('authorize-success-carries-token-type') ? 'Bearer' : undefined
  return { code, state, iss, token_type: leaked }
}

/** Renders the login page for a validated request, bound to this browser by a cookie. */
export async function showLogin(
  h: ResponseToolkit,
  request: AuthorizationRequest,
  deps: Pick<Deps, 'store' | 'clock' | 'faults'>,
  /** Test-only (LOGIN-06's sabotage): the login_hint, put in the username field unescaped. */
  hint?: SafeHtml,
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
  const branding = deps.faults.has('login-page-unbranded')
    ? undefined
    : await deps.store.clients.branding(request.clientId)
  const view = loginPage({ interaction, csrf, branding, nonce, username: hint })
  const evalsHint = deps.faults.has('login-page-evals-hint')
  // LOGIN-05's sabotage: the page that takes the password loads a script of another origin;
  // LOGIN-06's: the page evaluates the login_hint (HINT_BY_EVAL); and a variant LOGIN-06 must
  // pass: the request embedded as JSON (requestJson)
  const body = deps.faults.has('login-page-loads-third-party-script')
    ? html`${view}
        <script src="https://analytics.example/track.js"></script>`
    : evalsHint
      ? html`${view}
          <script nonce="${nonce}">
            ${HINT_BY_EVAL}
          </script>`
      : deps.faults.has('login-page-embeds-request-json')
        ? html`${view}
            <script type="application/json" id="request">
              ${requestJson(request)}
            </script>`
        : view
  return page(h, body, {
    nonce,
    formTargets: [request.redirectUri],
    scripts: evalsHint,
  }).state(INTERACTION_COOKIE, interaction, { ttl: INTERACTION_TTL * 1000 })
}

/**
 * LOGIN-06's sabotage (DOM-based XSS): the login page's own script fills in the username from
 * the address's login_hint by building a statement around it and evaluating it. The markup the
 * server sent never holds the hint, so only the script running shows the injection.
 */
const HINT_BY_EVAL = new SafeHtml(
  "const hint = new URLSearchParams(location.search).get('login_hint'); if (hint) eval(\"document.querySelector('input[name=username]').value = '\" + hint + \"'\")",
)

/**
 * A variant, not a deviation (LOGIN-06 must pass it): the request embedded in the login page
 * as a page script would read it, JSON with every < encoded so that nothing in it ends the
 * script element.
 */
const requestJson = (request: AuthorizationRequest): SafeHtml =>
  new SafeHtml(
    JSON.stringify({ client_id: request.clientId, state: request.state ?? null }).replace(
      /</g,
      '\\u003c',
    ),
  )

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

/** Scopes some fixture client is registered for (what the test-only scope faults tell apart). */
const FIXTURE_SCOPES: ReadonlySet<string> = new Set(fixtureClients.flatMap((c) => c.scopes))

/**
 * Test-only (AUTHZ-11): the scopes a broken server grants beyond the client's registration,
 * scopes no client has (authorize-grants-unknown-scope) or another client's
 * (authorize-grants-foreign-scope); undefined for a sound server.
 */
function scopesGrantedBeyond(faults: Deps['faults']): ((scope: string) => boolean) | undefined {
  const unknown = faults.has('authorize-grants-unknown-scope')
  const foreign = faults.has('authorize-grants-foreign-scope')
  if (!unknown && !foreign) return undefined
  return (scope) => (FIXTURE_SCOPES.has(scope) ? foreign : unknown)
}

/**
 * GET and POST /auth/authorize (OIDC Core §3.1.2.1 requires both): validate, then either issue
 * a code from a live session, answer prompt=none with login_required, or show the login page.
 */
export const authorize = (deps: Deps): ServerRoute[] => {
  const handler = async (request: Request, h: ResponseToolkit) => {
    const fromBody = request.method === 'post' && !deps.faults.has('authorize-post-reads-query')
    let raw = rawParams(fromBody ? request.payload : request.query)
    // AUTHZ-08's sabotage: a parser that reads the query in order and takes a
    // code_challenge_method that comes before its code_challenge as absent
    if (deps.faults.has('authorize-reads-pkce-method-after-challenge') && !fromBody) {
      const names = [...request.url.searchParams.keys()]
      if (names.indexOf('code_challenge_method') < names.indexOf('code_challenge'))
        raw = { ...raw, code_challenge_method: undefined }
    }
    const validation = await validateAuthorizationRequest(raw, deps.store, {
      grantsBeyond: scopesGrantedBeyond(deps.faults),
      requireScope: deps.faults.has('authorize-requires-scope'),
    })
    if (deps.explain) explainAuthorize(deps.explain, request, raw, validation)
    if (validation.kind === 'page') {
      // LOGIN-06's sabotage: the error page names the client_id it was given, unescaped
      if (deps.faults.has('error-page-reflects-client-id-raw') && typeof raw.client_id === 'string')
        return reflectingErrorPage(h, validation.error, raw.client_id)
      return errorPageResponse(h, validation.error, undefined)
    }
    if (validation.kind === 'redirect') return errorRedirect(h, validation, validation.error, deps)
    const ar = validation.request
    // AUTHZ-08's sabotage: a server that refuses the id_token_hint OIDC Core §3.1.2.1 defines
    if (deps.faults.has('authorize-refuses-id-token-hint') && raw.id_token_hint !== undefined)
      return errorRedirect(h, ar, invalidRequest('id_token_hint is not supported'), deps)
    const session = await currentSession(request, deps)
    const now = deps.clock()
    // OIDC Core §3.1.2.1: prompt=login and an exceeded max_age both demand a new login
    const forceLogin =
      !deps.faults.has('authorize-ignores-prompt-login') &&
      (ar.prompt.includes('login') ||
        (session !== undefined && ar.maxAge !== undefined && now - session.authTime > ar.maxAge))
    if (session !== undefined && !forceLogin) {
      const user = { userId: session.userId, authTime: session.authTime }
      return redirectToClient(h, ar.redirectUri, await issueCodeParams(ar, user, deps), 302)
    }
    if (ar.prompt.includes('none')) {
      // OIDC Core §3.1.2.6: prompt=none never shows UI
      return errorRedirect(h, ar, loginRequired('the user is not signed in'), deps)
    }
    // LOGOUT-01's sabotage: a browser whose session cookie names an ended session is told it
    // signed out, a dead end with no login form, instead of being asked to sign in again
    if (
      deps.faults.has('authorize-dead-ends-ended-session') &&
      sessionCookie(request) !== undefined
    )
      return page(
        h,
        html`<!doctype html><title>Signed out</title>
          <p>You have signed out.</p>`,
        {
          nonce: newNonce(),
        },
      )
    // LOGIN-06's sabotage: the login_hint fills in the username field, unescaped
    const hint =
      deps.faults.has('login-page-reflects-hint-raw') && typeof raw.login_hint === 'string'
        ? new SafeHtml(raw.login_hint)
        : undefined
    return showLogin(h, ar, deps, hint)
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
