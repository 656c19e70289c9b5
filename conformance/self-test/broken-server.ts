import type { Request, ResponseObject } from '@hapi/hapi'
import type { App } from '../../server/app.ts'

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
