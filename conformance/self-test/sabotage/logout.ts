import { randomBytes } from 'node:crypto'
import type { Request } from '@hapi/hapi'
import { decodeJwt } from 'jose'
import { http, HttpResponse, type HttpHandler } from 'msw'
import type { logout } from '../../catalogue/logout.ts'
import {
  carriesSessionCookie,
  endSessionOf,
  escapeRegExp,
  type Extend,
  extendAll,
  forgeryKind,
  type ForgeryKind,
  logoutKeepsSessionCookie,
  perPart,
  relay,
  rewriteLoginPage,
  onRequestOf,
  onResponseOf,
  paramsOf,
  rewriteLocation,
  type Sabotage,
  type Sabotages,
  SESSION_COOKIE,
  sessionsOutliveLogout,
  signAsServer,
  type Target,
  withApp,
} from './kit.ts'

/**
 * GET /auth/logout answered with a redirect to post_logout_redirect_uri (state echoed) whenever
 * `redirects` says so and the real server refused: the open redirects the checks look for.
 */
const redirectingLogout =
  (redirects: (params: URLSearchParams, target: Target) => boolean | Promise<boolean>) =>
  (target: Target): HttpHandler[] => [
    http.get(`${target.baseUrl}/auth/logout`, async ({ request }) => {
      const real = await relay(target, request)
      const params = new URL(request.url).searchParams
      const uri = params.get('post_logout_redirect_uri')
      if (!uri || real.headers.has('location') || !(await redirects(params, target))) return real
      const state = params.get('state')
      const location = state ? `${uri}${uri.includes('?') ? '&' : '?'}state=${state}` : uri
      return new HttpResponse(null, { status: 302, headers: { location } })
    }),
  ]

/** The main client's post-logout URI, as the checks send it. */
const mainUri = (target: Target): string => target.clients.main.postLogoutRedirectUri ?? ''

/**
 * LOGOUT-02's near misses of the main client's URI, each accepted by a server on its own: the
 * case's name, and whether the URI sent is that near miss.
 */
const NEAR_MISSES: readonly [string, (uri: string, target: Target) => boolean][] = [
  ['an unregistered URI', (uri) => uri === 'https://evil.example/'],
  [
    'the registered URI with a query added',
    (uri, target) => {
      const withQuery = new URL(mainUri(target))
      withQuery.searchParams.append('foo', 'bar')
      return uri === withQuery.toString()
    },
  ],
  [
    'the registered URI with its trailing slash changed',
    (uri, target) =>
      uri !== mainUri(target) && uri.replace(/\/$/, '') === mainUri(target).replace(/\/$/, ''),
  ],
  ['the javascript: scheme', (uri) => uri.startsWith('javascript:')],
  [
    'the http form of the registered URI',
    (uri, target) => uri === mainUri(target).replace(/^https:/, 'http:'),
  ],
  [
    'a URI registered only for another client',
    (uri, target) => uri === target.clients.other?.postLogoutRedirectUri,
  ],
]

/** LOGOUT-04's forged hints, by the forgery a server that skipped one verification step takes. */
const FORGED_HINTS: readonly [string, ForgeryKind][] = [
  ['a hint with a changed claim (signature kept)', 'tampered'],
  ['a hint signed by a foreign key', 'foreign key'],
  ['a hint rewritten to alg none', 'alg none'],
]

/** The dead end LOGOUT-01's broken server shows instead of a login form. */
const SIGNED_OUT_PAGE = `<!doctype html><title>Signed out</title>
<p>You have signed out.</p>`

// ---------------------------------------------------------------------------------------------
// The reference server's logout, broken from outside its code (hapi extensions on the route)

/** The logout route, GET and POST. */
const LOGOUT = { path: '/auth/logout' } as const
const LOGOUT_POST = { path: '/auth/logout', method: 'post' } as const

/** A parameter's value, when it is one non-empty string. */
const param = (params: Record<string, unknown>, name: string): string | undefined => {
  const value = params[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** The user's answer on the confirmation page (the route's second step). */
const confirming = (params: Record<string, unknown>): boolean => params.action === 'confirm'

/** Whether a redirect of the logout goes to the client (not back to the server's own GET). */
const toClient = (to: URL, request: Request): boolean => to.host !== request.info.host

/** What the server is made to read for a request it should have taken: a hint it refuses. */
const INVALID_HINT = 'not-a-verifiable-id-token'

/** The logout reads the request as carrying a hint it cannot verify, and refuses it. */
const refusedWhen = (refuse: (params: Record<string, unknown>) => boolean): Extend =>
  onRequestOf(LOGOUT, (request) => {
    const params = paramsOf(request)
    if (!confirming(params) && refuse(params)) params.id_token_hint = INVALID_HINT
  })

/** The post-logout redirect's state cut to 64 characters. */
const truncatedState = rewriteLocation(LOGOUT, (to, request) => {
  const state = to.searchParams.get('state')
  if (toClient(to, request) && state !== null) to.searchParams.set('state', state.slice(0, 64))
  return to
})

/** A post-logout redirect without state given an empty one. */
const emptyState = rewriteLocation(LOGOUT, (to, request) => {
  if (toClient(to, request) && !to.searchParams.has('state')) to.searchParams.set('state', '')
  return to
})

/** A POST logout that reads the query string instead of its form. */
const postReadsQuery = onRequestOf(LOGOUT_POST, (request) => {
  ;(request as { payload: unknown }).payload = { ...(request.query as Record<string, unknown>) }
})

/** The client a hint names (its aud), read without verifying it; undefined if it names none. */
const audOf = (hint: string): string | undefined => {
  try {
    const { aud } = decodeJwt(hint)
    return typeof aud === 'string' ? aud : undefined
  } catch {
    return undefined
  }
}

/** A hint without post_logout_redirect_uri sent to the client's first registered URI. */
const defaultsToRegisteredUri = withApp((app) =>
  onRequestOf(LOGOUT, async (request) => {
    const params = paramsOf(request)
    const hint = param(params, 'id_token_hint')
    if (confirming(params) || !hint || param(params, 'post_logout_redirect_uri')) return
    const aud = audOf(hint)
    if (aud === undefined) return
    const first = (await app.deps.store.clients.get(aud))?.postLogoutRedirectUris[0]
    if (first !== undefined) params.post_logout_redirect_uri = first
  }),
)

/**
 * The hint's claims read without its signature verified: whatever hint decodes is handed on
 * re-signed with the server's own key, so the server's verification takes it.
 */
const hintSignatureUnchecked = withApp((app) =>
  onRequestOf(LOGOUT, async (request) => {
    const params = paramsOf(request)
    const hint = param(params, 'id_token_hint')
    const aud = hint === undefined ? undefined : audOf(hint)
    if (aud === undefined) return
    const now = app.deps.clock()
    params.id_token_hint = await signAsServer(app, {
      aud,
      iss: app.deps.config.baseUrl,
      iat: now,
      exp: now + 600,
    })
  }),
)

/** A logout without a hint ends the session at once, while the page still asks to confirm. */
const withoutConfirmation = withApp((app) =>
  onResponseOf(LOGOUT, async (response, request) => {
    const params = paramsOf(request)
    if (confirming(params) || param(params, 'id_token_hint') || response.statusCode !== 200) return
    await endSessionOf(app, request, response)
  }),
)

/** The session cookie a confirmed logout was sent with, kept from the logout. */
const keptSessions = new WeakMap<Request, string>()

/**
 * A logout the user confirmed ends nothing: the route does not see the session cookie (so no
 * session ends at the server) and the browser's cookie is set again as it was.
 */
const confirmationEndsNothing = extendAll(
  onRequestOf(LOGOUT_POST, (request) => {
    const cookies = request.state as Record<string, unknown> | null
    const session = cookies?.[SESSION_COOKIE]
    if (!confirming(paramsOf(request)) || !cookies || typeof session !== 'string') return
    keptSessions.set(request, session)
    Reflect.deleteProperty(cookies, SESSION_COOKIE)
  }),
  onResponseOf(LOGOUT_POST, (response, request) => {
    const session = keptSessions.get(request)
    if (session !== undefined) response.state(SESSION_COOKIE, session)
  }),
)

/**
 * A page that refuses (or asks) sends the browser on to the post_logout_redirect_uri by script,
 * which no status or Location header shows.
 */
const pageSendsUserOn = onResponseOf(LOGOUT, (response, request) => {
  const uri = param(paramsOf(request), 'post_logout_redirect_uri')
  const { source } = response
  const redirect = response.statusCode >= 300 && response.statusCode < 400
  if (!uri || redirect || typeof source !== 'string') return
  const nonce = randomBytes(16).toString('base64url')
  const target = JSON.stringify(uri).replace(/</g, '\\u003c')
  // hapi sends `source` as it stands when the response is transmitted
  ;(response as { source: unknown }).source =
    `${source}<script nonce="${nonce}">location.href = ${target}</script>`
  const csp = String(response.headers['content-security-policy'] ?? '')
  response.header('content-security-policy', `${csp}; script-src 'nonce-${nonce}'`)
})

/** How to break the target for each LOGOUT-* check. */
export const logoutSabotage: Record<keyof typeof logout, Sabotages> = {
  // one sabotage per part: the redirect, the session in this browser, the login page after it,
  // the session at the server
  'LOGOUT-01': [
    {
      how: 'the post-logout redirect cuts a long state to 64 characters',
      expect:
        /^logout with a valid hint: the parameters of the post-logout redirect: expected "state=[\w-]{128}", got "state=[\w-]{64}"/,
      extend: truncatedState,
    },
    {
      how: 'logout leaves both the session cookie and the session at the server',
      expect:
        /^after logout: the session survived the logout \(prompt=none still returned a code\)/,
      extend: logoutKeepsSessionCookie,
      store: sessionsOutliveLogout,
    },
    {
      how: 'after logout, the ended session’s cookie stays and leads to a signed-out page, not a login',
      expect:
        /^after logout: a new authorization showed no login page \(page at \S+\/auth\/authorize/,
      // the browser keeps its cookie of the ended session, and a browser whose session cookie
      // names an ended session is told it signed out, a dead end with no login form, instead of
      // being asked to sign in again
      extend: extendAll(
        logoutKeepsSessionCookie,
        rewriteLoginPage((html, request) =>
          carriesSessionCookie(request) ? SIGNED_OUT_PAGE : html,
        ),
      ),
    },
    {
      how: 'logout deletes the session cookie but leaves the session live at the server',
      expect:
        /^after logout: the session cookie from before replayed: the session survived the logout/,
      store: sessionsOutliveLogout,
    },
  ],
  // one sabotage per near miss of the registered URI (each a sub-case), one for a Refresh
  // header, and one for the browser sent on by the page that refused
  'LOGOUT-02': perPart([
    ...NEAR_MISSES.map(([what, nearMiss]): Sabotage => ({
      how: `post_logout_redirect_uri accepts ${what}`,
      expect: new RegExp(`^${escapeRegExp(what)}: expected no redirect`),
      handlers: redirectingLogout((params, target) =>
        nearMiss(params.get('post_logout_redirect_uri') ?? '', target),
      ),
    })),
    {
      how: 'the page refusing an unregistered URI sends a Refresh header to it',
      expect:
        /^an unregistered URI: the Refresh header sends the browser to https:\/\/evil\.example\//,
      handlers: (target) => [
        http.get(`${target.baseUrl}/auth/logout`, async ({ request }) => {
          const uri = new URL(request.url).searchParams.get('post_logout_redirect_uri')
          return relay(target, request, (h, status) => {
            const page = status < 300 || status >= 400
            if (uri === 'https://evil.example/' && page) h.set('refresh', `0; url=${uri}`)
          })
        }),
      ],
    },
    {
      how: 'a refused logout page sends the browser on to the URI by script',
      expect:
        /^the registered URI with a query added \(browser\): expected an error or confirmation page, but the browser was sent to /,
      extend: pageSendsUserOn,
    },
  ]),
  // one sabotage per request without a hint (each a sub-case)
  'LOGOUT-03': [
    {
      how: 'logout redirects to post_logout_redirect_uri without an id_token_hint',
      expect: /^no id_token_hint: expected no redirect/,
      handlers: redirectingLogout((params) => !params.has('id_token_hint')),
    },
    {
      how: 'logout without an id_token_hint redirects when client_id names the client',
      expect: /^no id_token_hint but client_id: expected no redirect/,
      handlers: redirectingLogout(
        (params) => !params.has('id_token_hint') && params.has('client_id'),
      ),
    },
    {
      how: 'the confirmation page of a logout without a hint sends the browser on by script',
      expect:
        /^no id_token_hint \(browser\): expected an error or confirmation page, but the browser was sent to /,
      extend: pageSendsUserOn,
    },
  ],
  // one sabotage per forged hint and per client_id that contradicts the hint (each a sub-case)
  'LOGOUT-04': perPart([
    ...FORGED_HINTS.map(([what, kind]): Sabotage => ({
      how: `logout takes ${what} for the genuine one`,
      expect: new RegExp(`^${escapeRegExp(what)}: expected no redirect`),
      handlers: redirectingLogout(
        async (params, target) =>
          params.get('post_logout_redirect_uri') === mainUri(target) &&
          (await forgeryKind(params.get('id_token_hint') ?? '', target)) === kind,
      ),
    })),
    {
      how: "logout ignores a client_id other than the hint's aud",
      expect: /^a client_id other than the hint's aud: expected no redirect/,
      handlers: redirectingLogout(
        async (params, target) =>
          params.has('client_id') &&
          params.get('post_logout_redirect_uri') === mainUri(target) &&
          (await forgeryKind(params.get('id_token_hint') ?? '', target)) === undefined,
      ),
    },
    {
      how: 'logout believes client_id over the hint and redirects to the other client',
      expect: /^client_id and URI of another client: expected no redirect/,
      handlers: redirectingLogout(
        (params, target) =>
          params.get('client_id') === target.clients.other?.id &&
          params.get('post_logout_redirect_uri') === target.clients.other.postLogoutRedirectUri,
      ),
    },
    {
      how: 'the page refusing a forged hint sends the browser on to the URI by script',
      expect:
        /^a hint with a changed claim \(signature kept\) \(browser\): expected an error or confirmation page, but the browser was sent to /,
      extend: pageSendsUserOn,
    },
  ]),
  // one sabotage per part: the redirect without state, and the end of the session in each way
  // of logging out (each a sub-case)
  'LOGOUT-05': [
    {
      how: 'logout without state redirects with an empty state parameter',
      expect:
        /^logout without state: the parameters of the post-logout redirect: expected "", got "state="/,
      extend: emptyState,
    },
    {
      how: 'logout with a hint leaves both the session cookie and the session at the server',
      expect: /^logout without state: the session survived the logout/,
      extend: logoutKeepsSessionCookie,
      store: sessionsOutliveLogout,
    },
    {
      how: 'a hint without post_logout_redirect_uri is sent to the first registered URI',
      expect:
        /^logout without post_logout_redirect_uri: expected an error or confirmation page, but the browser was sent to https:\/\/client\.example\//,
      extend: defaultsToRegisteredUri,
    },
    {
      how: 'a hint without post_logout_redirect_uri is refused and the session kept',
      expect: /^logout without post_logout_redirect_uri: the session survived the logout/,
      extend: refusedWhen(
        (params) =>
          param(params, 'id_token_hint') !== undefined &&
          param(params, 'post_logout_redirect_uri') === undefined,
      ),
    },
    {
      how: 'a logout the user confirmed ends nothing',
      expect: /^logout with no parameters: the session survived the logout/,
      extend: confirmationEndsNothing,
    },
    {
      how: 'a logout with state but no client is refused and the session kept',
      expect: /^logout with only state: the session survived the logout/,
      extend: onRequestOf(LOGOUT, (request) => {
        const params = paramsOf(request)
        const clientless =
          param(params, 'client_id') === undefined && param(params, 'id_token_hint') === undefined
        // the server reads a client it does not know, and refuses the request
        if (!confirming(params) && param(params, 'state') && clientless)
          params.client_id = 'no-such-client'
      }),
    },
  ],
  // one sabotage per part: the redirect, the session in this browser, the session at the server
  'LOGOUT-06': [
    {
      how: 'a POST logout reads the query string, not the form body',
      expect: /^the form-encoded POST logout did not redirect to /,
      extend: postReadsQuery,
    },
    {
      how: 'logout leaves both the session cookie and the session at the server',
      expect:
        /^after the POST logout: the session survived the logout \(prompt=none still returned a code\)/,
      extend: logoutKeepsSessionCookie,
      store: sessionsOutliveLogout,
    },
    {
      how: 'logout deletes the session cookie but leaves the session live at the server',
      expect:
        /^after the POST logout: the session cookie from before replayed: the session survived the logout/,
      store: sessionsOutliveLogout,
    },
  ],
  // one sabotage per part: each forged request (a sub-case), the confirmation offered, and
  // confirming ending the session
  'LOGOUT-07': [
    {
      how: 'logout without a hint ends the session without asking',
      expect: /^a logout request without a hint: the session was ended without the user confirming/,
      extend: withoutConfirmation,
    },
    {
      how: "logout reads the hint's claims without verifying its signature",
      expect:
        /^a logout request with an invalid hint: expected an error or confirmation page, but the browser was sent to /,
      extend: hintSignatureUnchecked,
    },
    {
      how: 'a logout without a hint is refused with nothing to confirm',
      expect: /^confirming the logout: the logout page without a hint offers no confirmation/,
      extend: refusedWhen((params) => param(params, 'id_token_hint') === undefined),
    },
    {
      how: 'confirming a logout without a hint ends nothing',
      expect:
        /^confirming the logout: after confirming the logout: the session survived the logout/,
      extend: confirmationEndsNothing,
    },
  ],
}
