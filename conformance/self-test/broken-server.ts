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
  if (request.method !== 'post') return request.query
  // a POST without a body has no form to write to: an empty one, which its route then reads
  const body: unknown = request.payload
  if (typeof body !== 'object' || body === null) (request as { payload: unknown }).payload = {}
  return request.payload as Record<string, unknown>
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

/** The script scriptSignIn puts on the login page (served from the IdP's own origin). */
const SIGN_IN_SCRIPT = `'use strict'
// a password field served as text (scriptSignIn's scriptRendered) becomes one only now
for (const field of document.querySelectorAll('input[data-secret]')) field.type = 'password'
document.addEventListener('submit', function (event) {
  var form = event.target
  var submitter = event.submitter
  if (!form.querySelector('input[type=password]') || (submitter && submitter.value === 'cancel'))
    return
  event.preventDefault()
  var body = Object.fromEntries(new FormData(form, submitter))
  fetch('/auth/login-json', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  }).then(function (res) {
    return res.json().then(function (answer) {
      if (res.ok && answer.location) return window.location.assign(answer.location)
      var alert = document.createElement('p')
      alert.setAttribute('role', 'alert')
      alert.textContent = answer.error || 'Sign-in failed.'
      form.prepend(alert)
    })
  })
})
`

/**
 * The login page signs in by script, as a single-page application's does: a script (allowed by
 * the page's CSP, which this widens) sends the form's fields as JSON with fetch to
 * POST /auth/login-json, which hands them to the server's own POST /auth/login (the same
 * cookies, Origin and address) and answers HTTP 200 with the redirect's `location` in JSON, or
 * the refusal's status with an error; the Set-Cookie of the sign-in and a throttle's headers
 * (Retry-After, X-RateLimit-*) are passed on. With
 * `resend307`, the fetch is first answered 307 to the same route, so the browser sends the
 * credentials again where it points (RFC 9700 §4.12). With `scriptRendered`, the served HTML
 * has no password field (it is served as a text field the script turns into one), as a page
 * that a script renders: only a browser sees a login page there. Joined with a fault of /auth/login, a
 * check's replay of the script's request meets that fault.
 */
export const scriptSignIn =
  (options: { readonly resend307?: boolean; readonly scriptRendered?: boolean } = {}): Extend =>
  (app) => {
    app.server.route({
      method: 'GET',
      path: '/auth/script-sign-in.js',
      handler: (_request, h) =>
        h.response(SIGN_IN_SCRIPT).type('text/javascript').header('cache-control', 'no-store'),
    })
    app.server.route({
      method: 'POST',
      path: '/auth/login-json',
      options: { payload: { allow: 'application/json', maxBytes: 16 * 1024 } },
      handler: async (request, h) => {
        if (options.resend307 && request.query.again !== '1')
          return h.response().code(307).location('/auth/login-json?again=1')
        const fields = request.payload as Record<string, unknown>
        const headers = request.headers as Record<string, string | undefined>
        const signIn = await app.server.inject({
          method: 'POST',
          url: '/auth/login',
          payload: new URLSearchParams(
            Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)]),
          ).toString(),
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'text/html',
            ...(headers.cookie ? { cookie: headers.cookie } : {}),
            ...(headers.origin ? { origin: headers.origin } : {}),
          },
          remoteAddress: request.info.remoteAddress,
        })
        const location = signIn.headers.location
        const ok = signIn.statusCode >= 300 && signIn.statusCode < 400 && location
        const answer = h
          .response(ok ? { location } : { error: 'Wrong username or password.' })
          .code(ok ? 200 : signIn.statusCode >= 400 ? signIn.statusCode : 400)
          .header('cache-control', 'no-store')
        // the throttle's own headers go with the refusal, as the form's answer has them
        for (const [name, value] of Object.entries(signIn.headers))
          if (/^(retry-after|x-ratelimit-.*|ratelimit.*)$/i.test(name) && value !== undefined)
            answer.header(name, String(value))
        const cookies = signIn.headers['set-cookie']
        for (const cookie of typeof cookies === 'string' ? [cookies] : (cookies ?? []))
          answer.header('set-cookie', cookie, { append: true })
        return answer
      },
    })
    app.server.ext('onPreResponse', (request, h) => {
      const response = request.response
      if (
        request.path !== '/auth/authorize' ||
        ('isBoom' in response && response.isBoom) ||
        typeof (response as ResponseObject).source !== 'string'
      )
        return h.continue
      const page = response as ResponseObject
      const html = page.source as string
      if (!/<input\b[^>]*type="?password/i.test(html)) return h.continue
      const served = options.scriptRendered
        ? html.replace(/type="password"/g, 'type="text" data-secret')
        : html
      ;(page as { source: unknown }).source = served.replace(
        '</body>',
        '<script src="/auth/script-sign-in.js" defer></script></body>',
      )
      const csp = String(page.headers['content-security-policy'] ?? '')
      page.header(
        'content-security-policy',
        csp.replace(
          "default-src 'none'",
          "default-src 'none'; script-src 'self'; connect-src 'self'",
        ),
      )
      return h.continue
    })
  }
