import { http, HttpResponse, type HttpHandler } from 'msw'
import type { login } from '../../catalogue/login.ts'
import {
  allowInlineScripts,
  appendToBody,
  BRANDING,
  corruptJson,
  onAuthorize,
  knownUserAnsweredLate,
  perPart,
  paramsOf,
  relay,
  rewriteAuthorizeErrorPage,
  rewriteLoginPage,
  scriptSignIn,
  extendAll,
  failedSignInRedirected,
  LOGIN_FAILED,
  type Sabotage,
  type Sabotages,
  sessionCookieRenamed,
  sessionCookieWith,
  signInRedirectStatus,
  signInSkips,
  signInsUncounted,
  type Target,
  throttleSparesRightPassword,
  unknownUserRefusedBeforeHashing,
  unknownUserToldApart,
  usernameEchoedRaw,
} from './kit.ts'

/** The headers that keep a page out of other sites' frames. */
const unframed = (h: [string, string][]): [string, string][] =>
  h.filter(([name]) => name !== 'content-security-policy' && name !== 'x-frame-options')

/** The real answers of `path` (`method`) without the headers that keep them out of frames. */
const framable =
  (method: 'get' | 'post', path: string) =>
  (target: Target): HttpHandler[] => [
    http[method](target.baseUrl + path, ({ request }) =>
      relay(target, request, (h) => {
        h.delete('content-security-policy')
        h.delete('x-frame-options')
      }),
    ),
  ]

/** The branding record, as GET /auth/branding answers it, with `member` pointing elsewhere. */
const brandingElsewhere = (member: string, url: string): Sabotage => ({
  how: `the login page does not show the branding record's ${member}`,
  expect: new RegExp(
    `^${member}: no ${member === 'logo_url' ? 'image shows' : 'link to'} ${member} `,
  ),
  handlers: corruptJson(BRANDING, (b) => {
    b[member] = url
  }),
})

/** The login page without its branding: no application name, logo or policy links. */
const unbranded = (html: string): string =>
  html
    .replace(/<title>Sign in to [^<]*<\/title>/, '<title>Sign in</title>')
    .replace(/ to <span class="app">[^<]*<\/span>/, '')
    .replace(/<header class="brand">[\s\S]*?<\/header>/, '<header class="brand"></header>')
    .replace(/<footer class="links">[\s\S]*?<\/footer>/, '')

/** The value of the login page's username field, empty as the server sends it. */
const USERNAME_VALUE = /(<input\s+id="username"[^>]*?\svalue=")"/

/** The error page's description. */
const ERROR_DESCRIPTION = /(<p class="error" role="alert">)[\s\S]*?(<\/p>)/

/**
 * LOGIN-06's DOM-based XSS: the login page's own script fills in the username from the
 * address's login_hint by building a statement around it and evaluating it. The markup the
 * server sent never holds the hint, so only the script running shows the injection.
 */
const HINT_BY_EVAL =
  "const hint = new URLSearchParams(location.search).get('login_hint'); if (hint) eval(\"document.querySelector('input[name=username]').value = '\" + hint + \"'\")"

/** How to break the target for each LOGIN-* check. */
export const loginSabotage: Record<keyof typeof login, Sabotages> = {
  // one sabotage per part of the branding shown (each a sub-case): the page disagrees with the
  // branding record the endpoint serves
  'LOGIN-01': perPart([
    {
      how: 'the login page is rendered without the branding record',
      expect: /^application name: the login page does not show the application name/,
      extend: rewriteLoginPage(unbranded),
    },
    brandingElsewhere('logo_url', 'https://cdn.example/another-logo.png'),
    brandingElsewhere('privacy_policy_url', 'https://client.example/another-privacy'),
    brandingElsewhere('terms_of_service_url', 'https://client.example/another-terms'),
  ]),
  // one sabotage per page (each a sub-case), and one for a failed login answered by a redirect
  'LOGIN-02': perPart([
    {
      how: 'the login page has neither CSP frame-ancestors nor X-Frame-Options',
      expect:
        /^login page \(GET \/auth\/authorize\): neither Content-Security-Policy frame-ancestors nor X-Frame-Options/,
      handlers: onAuthorize({ headers: unframed }),
    },
    {
      how: 'the page after a failed login has neither CSP frame-ancestors nor X-Frame-Options',
      expect:
        /^page after a failed login: neither Content-Security-Policy frame-ancestors nor X-Frame-Options/,
      handlers: framable('post', '/auth/login'),
    },
    {
      how: 'a wrong password is answered with a redirect, not a page',
      expect: /^page after a failed login: a wrong password was answered with HTTP 303/,
      handlers: (target) => [
        http.post(`${target.baseUrl}/auth/login`, async ({ request }) => {
          const res = await relay(target, request)
          if (res.status !== 401) return res
          return new HttpResponse(null, {
            status: 303,
            headers: { location: `${target.baseUrl}/auth/login-failed` },
          })
        }),
      ],
    },
    {
      how: 'the error page has neither CSP frame-ancestors nor X-Frame-Options',
      expect:
        /^error page \(unknown client\): neither Content-Security-Policy frame-ancestors nor X-Frame-Options/,
      handlers: onAuthorize({
        headers: (h, sent) =>
          (sent.searchParams.get('client_id') ?? '').startsWith('unknown-') ? unframed(h) : h,
      }),
    },
    {
      how: 'the logout page has neither CSP frame-ancestors nor X-Frame-Options',
      expect: /^logout page: neither Content-Security-Policy frame-ancestors nor X-Frame-Options/,
      handlers: framable('get', '/auth/logout'),
    },
  ]),
  // one sabotage per defence left out (each forged post a sub-case), and all three at once
  'LOGIN-03': perPart([
    {
      how: 'the credential POST checks neither the anti-CSRF token, the cookie, nor the Origin',
      expect: /^credentials without the anti-CSRF field: the sign-in went through/,
      extend: signInSkips('origin', 'interaction cookie', 'form token', 'form token present'),
    },
    {
      // the replay is the browser's own request, a script's fetch too (issue 29)
      how: 'the login page signs in by script (JSON fetch), and the sign-in checks neither the anti-CSRF token, the cookie, nor the Origin',
      expect: /^credentials without the anti-CSRF field: the sign-in went through/,
      extend: extendAll(
        scriptSignIn(),
        signInSkips('origin', 'interaction cookie', 'form token', 'form token present'),
      ),
    },
    {
      how: "the credential POST takes any session's anti-CSRF token",
      expect: /^another session's anti-CSRF token: the sign-in went through/,
      extend: signInSkips('form token'),
    },
    {
      how: 'the credential POST does not check that its sign-in is this browser’s (the cookie)',
      expect:
        /^another session's whole form posted with this browser's cookies: the sign-in went through/,
      extend: signInSkips('interaction cookie'),
    },
    {
      // with the Origin alone unchecked, the SameSite=Lax interaction cookie a cross-site post
      // lacks still refuses it: a forgery a browser can send succeeds only without both
      how: 'the credential POST checks neither its Origin nor that the sign-in is this browser’s',
      expect:
        /^a cross-site post from https:\/\/evil\.example of another session's form with the cookies a browser sends cross-site: the sign-in went through/,
      extend: signInSkips('origin', 'interaction cookie'),
    },
  ]),
  'LOGIN-04': perPart([
    {
      how: 'the credential POST is answered with a 307 redirect',
      expect: /^the credential POST was answered with HTTP 307; expected 302 or 303/,
      extend: signInRedirectStatus(307),
    },
    {
      how: "the login page signs in by script (JSON fetch), and the script's request is answered with a 307 redirect",
      expect:
        /^the script's credential request to \S+ was answered with HTTP 307, which re-sends the credentials/,
      extend: scriptSignIn({ resend307: true }),
    },
  ]),
  // one sabotage per part (each a sub-case): the referrer policy, the caching, each attribute
  // of the session cookie
  'LOGIN-05': perPart([
    {
      how: 'the login page is sent with Referrer-Policy: unsafe-url',
      expect: /^login page: Referrer-Policy unsafe-url; expected no-referrer/,
      handlers: (target) => [
        http.get(`${target.baseUrl}/auth/authorize`, async ({ request }) => {
          const res = await relay(target, request, (h) => h.set('referrer-policy', 'unsafe-url'))
          const text = (await res.text()).replace(/<meta name="referrer"[^>]*>/i, '')
          return new HttpResponse(text, { status: res.status, headers: [...res.headers] })
        }),
      ],
    },
    {
      how: 'the login page may be cached for ten minutes',
      expect: /^login page: Cache-Control .* lacks no-store/,
      handlers: onAuthorize({
        headers: (h) => [
          ...h.filter(([name]) => name !== 'cache-control' && name !== 'pragma'),
          ['cache-control', 'public, max-age=600'],
        ],
      }),
    },
    {
      how: 'the login page loads a script of another origin',
      expect: /^login page: loads a third-party script: https:\/\/analytics\.example\//,
      extend: rewriteLoginPage((html) =>
        appendToBody(html, '<script src="https://analytics.example/track.js"></script>'),
      ),
    },
    {
      how: 'the session cookie is set without Secure',
      expect: /^cookie idp_session: not Secure/,
      extend: sessionCookieRenamed('idp_session', { isSecure: false }),
    },
    {
      how: 'the login page signs in by script (JSON fetch), and the session cookie is set without Secure',
      expect: /^cookie idp_session: not Secure/,
      extend: extendAll(scriptSignIn(), sessionCookieRenamed('idp_session', { isSecure: false })),
    },
    {
      how: 'the session cookie is set without HttpOnly',
      expect: /^cookie __Host-idp_session: not HttpOnly/,
      extend: sessionCookieWith({ isHttpOnly: false }),
    },
    {
      how: 'the session cookie is set with SameSite=None',
      expect: /^cookie __Host-idp_session: not SameSite=Lax or Strict/,
      extend: sessionCookieWith({ isSameSite: 'None' }),
    },
  ]),
  // one sabotage per page (each a sub-case)
  'LOGIN-06': [
    {
      how: 'the login page fills in the login_hint unescaped',
      expect: /^login page: the payload became markup/,
      // the login_hint put in the username field as it came
      extend: rewriteLoginPage((html, request) => {
        const hint = paramsOf(request).login_hint
        if (typeof hint !== 'string') return html
        return html.replace(USERNAME_VALUE, (_, start: string) => `${start}${hint}"`)
      }),
    },
    {
      how: "the login page's script fills in the login_hint by eval (DOM-based XSS)",
      expect: /^login page: injected script ran \(idp-xss-hint\)/,
      extend: rewriteLoginPage((html, _request, response) => {
        const nonce = allowInlineScripts(response)
        return appendToBody(html, `<script nonce="${nonce}">${HINT_BY_EVAL}</script>`)
      }),
    },
    {
      how: 'the username is echoed unescaped after a failed login',
      expect: /^page after a failed login: the payload became markup/,
      extend: usernameEchoedRaw,
    },
    {
      how: 'the error page names the unknown client_id unescaped',
      expect: /^error page \(unknown client\): the payload became markup/,
      // the error page names the client_id it was given, as markup
      extend: rewriteAuthorizeErrorPage((html, request) => {
        const id = paramsOf(request).client_id
        if (typeof id !== 'string') return html
        return html.replace(
          ERROR_DESCRIPTION,
          (_, start: string, end: string) =>
            `${start}The application ${id} is not registered.${end}`,
        )
      }),
    },
  ],
  // one sabotage per part (each a sub-case): the status (and redirect), the page (and the page
  // a redirect leads to), the timing, the throttle, and the correct password held back while
  // throttled (the 429's Retry-After is a MAY of RFC 6585 §4: a note, proven by no sabotage)
  'LOGIN-07': perPart([
    {
      how: 'an unknown username gets an HTTP status of its own (400, a wrong password 401)',
      expect: /^status: wrong password → HTTP 401, unknown user → HTTP 400/,
      extend: unknownUserToldApart({ status: 400 }),
    },
    {
      how: 'the login page signs in by script (JSON fetch), and an unknown username gets an HTTP status of its own',
      expect: /^status: wrong password → HTTP 401, unknown user → HTTP 400/,
      extend: extendAll(scriptSignIn(), unknownUserToldApart({ status: 400 })),
    },
    {
      how: 'an unknown username gets its own error message',
      expect: /^page: wrong password and unknown user get different pages/,
      extend: unknownUserToldApart({ message: 'No such user.' }),
    },
    {
      how: 'a failed sign-in redirects (303) to a page of its own, which tells an unknown username apart',
      expect: /^page: wrong password and unknown user get different pages/,
      extend: failedSignInRedirected((known) => ({
        message: known ? LOGIN_FAILED : 'No such user.',
      })),
    },
    {
      how: 'a failed sign-in redirects (303) to a page of its own, and the redirect names the reason (unknown_user, bad_password)',
      expect:
        /^status: wrong password → HTTP 303 to \S+&reason=bad_password, unknown user → HTTP 303 to \S+&reason=unknown_user/,
      extend: failedSignInRedirected((known) => ({
        message: LOGIN_FAILED,
        query: { reason: known ? 'bad_password' : 'unknown_user' },
      })),
    },
    {
      how: 'a wrong password of a known user is answered 4 s later than an unknown user (refused before any hashing)',
      expect: /^timing: it tells an unknown user from a wrong password/,
      verifyPassword: unknownUserRefusedBeforeHashing,
      // slow enough that a loaded machine (sabotages run beside each other) cannot hide it
      extend: knownUserAnsweredLate(4000),
    },
    {
      how: 'failed sign-ins are never throttled',
      expect: /^5 failed logins in a row were never throttled \(no HTTP 429\)/,
      store: signInsUncounted,
    },
    {
      how: 'any password signs the primary user in',
      expect: /^wrong: a failed login reached the client/,
      handlers: (target) => [
        http.post(`${target.baseUrl}/auth/login`, async ({ request }) => {
          const form = new URLSearchParams(await request.text())
          const user = target.users.primary
          if (form.get('username') === user.username) form.set('password', user.password)
          const headers = new Headers(request.headers)
          headers.delete('content-length')
          return relay(target, new Request(request.url, { method: 'POST', headers, body: form }))
        }),
      ],
    },
    {
      how: 'while throttled, the correct password still signs in',
      expect: /^while throttled: the correct password still signed in/,
      ...throttleSparesRightPassword(),
    },
  ]),
}
