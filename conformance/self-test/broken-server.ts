import { randomBytes } from 'node:crypto'
import type { Request, ResponseObject } from '@hapi/hapi'
import { clients as fixtureClients } from '../../fixtures/clients.ts'
import type { App } from '../../server/app.ts'
import { endSession, sessionCookie } from '../../server/sessions.ts'
import { decodeJwt, decodeProtectedHeader, SignJWT, type JWTPayload } from 'jose'
import {
  CLIENT_GROUPS,
  countRequest,
  groupOf,
  rateLimitHeaders,
  tooManyRequests,
  type RateLimitState,
} from '../../server/plugins/rate-limit.ts'
import { clientAddress } from '../../server/protocol/client-address.ts'

/**
 * The self-test's broken reference servers, built from outside the server's code (issue 34):
 * the built server is changed through hapi's own composition points (request lifecycle
 * extensions) before it starts, as an operator's plugin could, and never by a switch inside
 * `server/`. A sabotage names one of these as its `extend` (kit.ts re-exports them).
 */
export type Extend = (app: App) => void | Promise<void>

/** One route of the server: its path, and its method (default: any). */
export interface Route {
  readonly path: string
  readonly method?: 'get' | 'post'
}

const isRoute = (request: Request, route: Route): boolean =>
  request.path === route.path && (route.method === undefined || request.method === route.method)

/** Several extensions, applied in order. */
export const extendAll =
  (...parts: readonly Extend[]): Extend =>
  async (app) => {
    for (const part of parts) await part(app)
  }

/**
 * Changes the request of a route after its payload is parsed and before its handler runs
 * (hapi's onPreHandler): what a broken server would read instead of what was sent.
 */
export const onRequestOf =
  (route: Route, change: (request: Request) => void | Promise<void>): Extend =>
  (app) => {
    app.server.ext('onPreHandler', async (request, h) => {
      if (isRoute(request, route)) await change(request)
      return h.continue
    })
  }

/**
 * Changes a route's answer before it is sent (hapi's onPreResponse); errors (Boom) pass as
 * they are unless `errors` is set.
 */
export const onResponseOf =
  (
    route: Route,
    change: (response: ResponseObject, request: Request) => void | Promise<void>,
  ): Extend =>
  (app) => {
    app.server.ext('onPreResponse', async (request, h) => {
      const response = request.response
      if (isRoute(request, route) && !('isBoom' in response && response.isBoom))
        await change(response as ResponseObject, request)
      return h.continue
    })
  }

/** Rewrites the Location of a route's redirects (the URL as the server wrote it). */
export const rewriteLocation = (
  route: Route,
  rewrite: (location: URL, request: Request) => URL | string,
): Extend =>
  onResponseOf(route, (response, request) => {
    const location = response.headers.location
    if (typeof location === 'string') response.location(String(rewrite(new URL(location), request)))
  })

/** Rewrites the HTML of a route's pages (its other answers pass as they are). */
export const rewriteHtml = (
  route: Route,
  rewrite: (html: string, request: Request, response: ResponseObject) => string,
): Extend =>
  onResponseOf(route, (response, request) => {
    const type = response.headers['content-type']
    if (typeof response.source !== 'string' || !String(type ?? '').startsWith('text/html')) return
    // hapi sends `source` as it stands when the response is transmitted
    ;(response as { source: unknown }).source = rewrite(response.source, request, response)
  })

/** The authorization endpoint, which GET and POST both serve (OIDC Core §3.1.2.1). */
const AUTHORIZE: Route = { path: '/auth/authorize' }

/**
 * The parameters of a request as its route reads them, to change in place: the form body of a
 * POST, else the query.
 */
export function paramsOf(request: Request): Record<string, unknown> {
  const body: unknown = request.payload
  return request.method === 'post' && typeof body === 'object' && body !== null
    ? (body as Record<string, unknown>)
    : request.query
}

/** The authorization requests (GET or POST), changed before the server reads them. */
export const onAuthorizationRequest = (
  change: (params: Record<string, unknown>, request: Request) => void | Promise<void>,
): Extend => onRequestOf(AUTHORIZE, (request) => change(paramsOf(request), request))

/**
 * The routes that send the browser back to the client with a code: the login form's post,
 * and an authorization request answered from a live session.
 */
const SUCCESS_REDIRECTS: readonly Route[] = [{ path: '/auth/login', method: 'post' }, AUTHORIZE]

/**
 * Changes the parameters of every success redirect (a redirect to the client that carries a
 * code), on every route that writes one.
 */
export const rewriteSuccessRedirect = (
  change: (params: URLSearchParams, request: Request) => void,
): Extend =>
  extendAll(
    ...SUCCESS_REDIRECTS.map((route) =>
      rewriteLocation(route, (to, request) => {
        if (to.searchParams.has('code')) change(to.searchParams, request)
        return to
      }),
    ),
  )

/** The login form of the hosted login page (its post goes to /auth/login). */
const LOGIN_FORM = /<form\b[^>]*\baction="\/auth\/login"/

/** Rewrites the login page an authorization request shows (its other answers pass as they are). */
export const rewriteLoginPage = (
  rewrite: (html: string, request: Request, response: ResponseObject) => string,
): Extend =>
  rewriteHtml(AUTHORIZE, (html, request, response) =>
    response.statusCode === 200 && LOGIN_FORM.test(html) ? rewrite(html, request, response) : html,
  )

/** Rewrites the error pages an authorization request shows (where a redirect would be unsafe). */
export const rewriteAuthorizeErrorPage = (
  rewrite: (html: string, request: Request, response: ResponseObject) => string,
): Extend =>
  rewriteHtml(AUTHORIZE, (html, request, response) =>
    response.statusCode >= 400 ? rewrite(html, request, response) : html,
  )

/** Adds markup to a page at the end of its body. */
export const appendToBody = (html: string, markup: string): string =>
  html.includes('</body>') ? html.replace('</body>', () => `${markup}</body>`) : html + markup

/**
 * Lets a page run the inline scripts that carry the nonce returned (and eval from them): a
 * script-src added to the page's Content-Security-Policy.
 */
export function allowInlineScripts(response: ResponseObject): string {
  const nonce = randomBytes(16).toString('base64url')
  const csp = response.headers['content-security-policy']
  const allowed = `script-src 'nonce-${nonce}' 'unsafe-eval'`
  response.header(
    'content-security-policy',
    typeof csp === 'string' ? `${csp}; ${allowed}` : allowed,
  )
  return nonce
}

/** Whether the browser sent a session cookie (of a live session or not). */
export const carriesSessionCookie = (request: Request): boolean =>
  sessionCookie(request) !== undefined

/** The scopes some client of the embedded server's fixtures is registered for. */
export const FIXTURE_SCOPES: ReadonlySet<string> = new Set(fixtureClients.flatMap((c) => c.scopes))

/** An extension that needs the built app (its store, keys, configuration) to decide. */
export const withApp =
  (make: (app: App) => Extend): Extend =>
  (app) =>
    make(app)(app)

/**
 * Signs `payload` as the reference server signs its tokens: RS256 with its own current signing
 * key, under that key's kid (jose). What a broken server would have written, re-signed from
 * outside with the keys it publishes.
 */
export async function signAsServer(
  app: App,
  payload: JWTPayload,
  header: { readonly typ?: string } = {},
): Promise<string> {
  const { kid, key } = await app.deps.keys.signingKey(app.deps.clock())
  return new SignJWT(payload).setProtectedHeader({ ...header, alg: 'RS256', kid }).sign(key)
}

/**
 * Edits the access token of the token endpoint's successful answers to the grants `grantType`
 * names, and re-signs it with the server's own key (signAsServer): the token a server that
 * wrote those claims would issue.
 */
export const editAccessToken = (
  grantType: string,
  edit: (claims: JWTPayload, app: App) => void | Promise<void>,
): Extend =>
  withApp((app) =>
    onResponseOf({ path: '/auth/token', method: 'post' }, async (response, request) => {
      const form = request.payload as Record<string, unknown> | null
      const body = response.source as Record<string, unknown> | null
      if (form?.grant_type !== grantType || typeof body?.access_token !== 'string') return
      const token = body.access_token
      const claims = decodeJwt(token)
      await edit(claims, app)
      const { typ } = decodeProtectedHeader(token)
      body.access_token = await signAsServer(app, claims, typ === undefined ? {} : { typ })
    }),
  )

/**
 * Ends the browser's session at the server and in its cookie, as the server's logout does
 * (sessions.ts endSession): a broken server that ends it where it should not.
 */
export const endSessionOf = (app: App, request: Request, response: ResponseObject) =>
  endSession(request, response, app.deps)

/** The session cookie's name, for a sabotage that keeps or drops it. */
export { SESSION_COOKIE } from '../../server/sessions.ts'

/**
 * Counts the token, introspection and revocation requests per source address before their
 * handler runs, as the server counts user-info and the public documents (with the group's own
 * limit). With a store whose per-client counters never count (broken-store.ts
 * clientCountersUncounted), those endpoints are limited per address only.
 */
export const ipLimitOnClientEndpoints: Extend = (app) => {
  const { deps } = app
  const byAddress = new WeakMap<Request, RateLimitState>()
  app.server.ext('onPreHandler', async (request, h) => {
    const group = groupOf(request)
    if (!group || !CLIENT_GROUPS.has(group)) return h.continue
    const address = clientAddress(request, deps.config.trustProxy)
    const state = await countRequest(group, `ip:${address}`, deps)
    byAddress.set(request, state)
    ;(request.app as { rateLimit?: RateLimitState }).rateLimit = state
    if (state.exceeded) throw tooManyRequests(state, deps.clock())
    return h.continue
  })
  // the headers say this count, not the (uncounted) per-client one the handler left behind
  app.server.ext('onPreResponse', (request, h) => {
    const state = byAddress.get(request)
    const response = request.response
    if (state)
      for (const [name, value] of Object.entries(rateLimitHeaders(state)))
        if ('isBoom' in response) response.output.headers[name] = value
        else response.header(name, value)
    return h.continue
  })
}

/**
 * Takes client credentials from the URL query of token, introspection and revocation requests
 * as if they had come in the form body (the form wins where both name one), instead of refusing
 * them (RFC 6749 §2.3.1): the server reads the merged parameters and no longer sees a
 * client_secret in the URL.
 */
export const credentialsFromQuery: Extend = extendAll(
  ...['/auth/token', '/auth/introspect', '/auth/revoke'].map((path) =>
    onRequestOf({ path, method: 'post' }, (request) => {
      const query = request.query as Record<string, unknown>
      if (!('client_secret' in query)) return
      const form = request.payload as Record<string, unknown> | null
      ;(request as { payload: unknown }).payload = { ...query, ...form }
      delete query.client_secret
    }),
  ),
)
