import { randomBytes } from 'node:crypto'
import { bypass, http, HttpResponse, type HttpHandler } from 'msw'
import type { security } from '../../catalogue/security.ts'
import {
  corruptHeaders,
  corruptJson,
  credentialsFromQuery,
  DISCOVERY,
  editAccessToken,
  escapeRegExp,
  extendAll,
  failuresChargedToClient,
  fetchVia,
  headerPairs,
  INTROSPECT,
  onAuthorize,
  perPart,
  promptNoneSignedOut,
  relay,
  REVOKE,
  rewriteSuccessRedirect,
  sessionsOnWallClock,
  showCodesAs,
  sessionCookieRenamed,
  sessionCookieWith,
  sessionKeptAtSignIn,
  sprayingUncounted,
  type Sabotage,
  type Sabotages,
  type Target,
  TOKEN,
  USER_INFO,
  weakCode,
  weakSessionIds,
} from './kit.ts'

/** Sends the URL's query parameters plus `body` on to the real server as a POSTed form. */
function forwardAsForm(target: Target, url: URL, body: string): Promise<Response> {
  const form = new URLSearchParams(body)
  for (const [k, v] of url.searchParams) form.set(k, v)
  return fetchVia(
    target.dispatcher,
    bypass(`${url.origin}${url.pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    }),
    { redirect: 'manual' },
  )
}

/**
 * The endpoint takes client credentials from the URL: a POST with them in its query (`post`),
 * or a GET with every parameter there (`get`), is served as the POSTed form would be.
 */
function credentialsFromUrl(path: string, how: 'post' | 'get') {
  return (target: Target): HttpHandler[] => [
    http[how](target.baseUrl + path, async ({ request }) => {
      const url = new URL(request.url)
      if (!url.searchParams.has('client_secret')) return undefined
      const real = await forwardAsForm(target, url, how === 'post' ? await request.text() : '')
      return new HttpResponse(await real.text(), {
        status: real.status,
        headers: headerPairs(real.headers),
      })
    }),
  ]
}

/**
 * GET `path` answered as the real page, sent with Referrer-Policy: unsafe-url and with a link to
 * another origin added (a help link), when `which` says so: the page leaks the URL of the
 * authorization request in the Referer.
 */
const leakyPage =
  (path: string, which: (url: URL) => boolean) =>
  (target: Target): HttpHandler[] => [
    http.get(target.baseUrl + path, async ({ request }) => {
      if (!which(new URL(request.url))) return undefined
      const real = await relay(target, request, (h) => h.set('referrer-policy', 'unsafe-url'))
      const link = '<a href="https://help.example/support">Help</a>'
      const text = await real.text()
      const body = text.includes('</body>')
        ? text.replace('</body>', `${link}</body>`)
        : text + link
      return new HttpResponse(body, { status: real.status, headers: [...real.headers] })
    }),
  ]

/** What SEC-09 looks for in an error body, each with an answer that shows it. */
const LEAKS: readonly [string, string][] = [
  ['a stack trace', 'Error: boom\n    at handle (/srv/idp/dist/grants.js:41:17)'],
  ['a source file path', 'failed in src/grants/token.ts'],
  ['a file system path', 'could not open /var/lib/idp/keys'],
  ['SQL or a database error', 'duplicate key value violates unique constraint "tokens_pkey"'],
  ['a runtime error name', 'RangeError: Invalid array length'],
]

/** What SEC-09 sends, each recognised as the check sends it (method, path, request). */
const MALFORMED: readonly [string, 'get' | 'post', string, (r: SentRequest) => boolean][] = [
  ['token, a JSON body', 'post', TOKEN, (r) => r.type.includes('application/json')],
  ['token, bad percent-encoding', 'post', TOKEN, (r) => r.body.includes('grant_type=%zz')],
  ['token, a NUL in the code', 'post', TOKEN, (r) => r.form.get('code') === 'a\u0000b'],
  ['token, repeated parameters', 'post', TOKEN, (r) => r.form.getAll('grant_type').length > 1],
  [
    'token, a quote in the refresh token',
    'post',
    TOKEN,
    (r) => r.form.get('refresh_token')?.includes("'") === true,
  ],
  ['token, a huge client_id', 'post', TOKEN, (r) => (r.form.get('client_id') ?? '').length > 1000],
  ['introspection, a bad content type', 'post', INTROSPECT, (r) => r.type.includes('text/xml')],
  [
    'introspection, a quote in the token',
    'post',
    INTROSPECT,
    (r) => r.form.get('token')?.includes('"') === true,
  ],
  ['revocation, an array token', 'post', REVOKE, (r) => r.form.getAll('token').length > 1],
  ['user-info, a malformed JWT', 'get', USER_INFO, (r) => r.authorization === 'Bearer eyJ.eyJ.%%%'],
  ['user-info, a broken scheme', 'get', USER_INFO, (r) => r.authorization.length > 5000],
  [
    'branding, a strange client_id',
    'get',
    '/auth/branding',
    (r) => r.url.searchParams.get('client_id')?.includes('DROP TABLE') === true,
  ],
  [
    'authorize, bad percent-encoding',
    'get',
    '/auth/authorize',
    (r) => r.url.search.includes('client_id=%zz'),
  ],
  [
    'logout, a garbage id_token_hint',
    'get',
    '/auth/logout',
    (r) => r.url.searchParams.get('id_token_hint')?.includes('%%%') === true,
  ],
]

/** A request as SEC-09's sabotages recognise it. */
interface SentRequest {
  readonly url: URL
  readonly type: string
  readonly authorization: string
  readonly body: string
  readonly form: URLSearchParams
}

/**
 * The answer to the requests `matches` picks shows `leak`: in error_description of a JSON
 * answer, at the end of any other page. Every other request is answered by the real server.
 */
const leaksOn =
  (method: 'get' | 'post', path: string, matches: (r: SentRequest) => boolean, leak: string) =>
  (target: Target): HttpHandler[] => [
    http[method](target.baseUrl + path, async ({ request }) => {
      const body = method === 'post' ? await request.clone().text() : ''
      const sent: SentRequest = {
        url: new URL(request.url),
        type: request.headers.get('content-type') ?? '',
        authorization: request.headers.get('authorization') ?? '',
        body,
        form: new URLSearchParams(body),
      }
      if (!matches(sent)) return undefined
      const real = await relay(target, request)
      const text = await real.text()
      const headers = [...real.headers]
      if (!(real.headers.get('content-type') ?? '').includes('json'))
        return new HttpResponse(`${text}<pre>${leak}</pre>`, { status: real.status, headers })
      let json: Record<string, unknown> = {}
      try {
        json = JSON.parse(text) as Record<string, unknown>
      } catch {
        // not JSON after all: the leak is the description of an error of its own
      }
      return HttpResponse.json(
        { error: 'invalid_request', ...json, error_description: leak },
        { status: real.status, headers },
      )
    }),
  ]

/** How to break the target for each SEC-* check, and the assertion that must fire. */
export const securitySabotage: Record<keyof typeof security, Sabotages> = {
  'SEC-01': {
    how: 'failed client authentications are charged to the client_id they name',
    expect: /client lock-out/,
    store: failuresChargedToClient,
  },
  'SEC-02': {
    how: 'failed sign-ins are limited per user name only, never per address',
    expect: /password spraying is not throttled/,
    store: sprayingUncounted,
  },
  // one sabotage per part: the metadata, and the iss of the authorization response
  'SEC-03': [
    {
      how: 'discovery does not advertise authorization_response_iss_parameter_supported',
      expect: /authorization_response_iss_parameter_supported: true/,
      handlers: corruptJson(DISCOVERY, (b) => {
        delete b.authorization_response_iss_parameter_supported
      }),
    },
    {
      // at the server: the code may come through the browser, which msw does not see
      how: 'the authorization response leaves iss out',
      expect:
        /^mix-up defense: the authorization response must carry iss=\S+ \(RFC 9207 §2\), got null/,
      extend: rewriteSuccessRedirect((params) => params.delete('iss')),
    },
  ],
  // one sabotage per endpoint and way of putting credentials in the URL (each a sub-case), and
  // one for a refused revocation that revokes all the same
  'SEC-04': perPart([
    {
      how: 'client credentials in the URL query are accepted',
      expect: /credentials in the URL query of POST \/auth\/token: expected a 4xx refusal/,
      extend: credentialsFromQuery,
    },
    ...([INTROSPECT, REVOKE] as const).map((path): Sabotage => ({
      how: `POST ${path} reads client credentials from the URL query`,
      expect: new RegExp(
        `^credentials in the URL query of POST ${path.replace(/\//g, '\\/')}: expected a 4xx refusal`,
      ),
      handlers: credentialsFromUrl(path, 'post'),
    })),
    ...([TOKEN, INTROSPECT, REVOKE] as const).map((path): Sabotage => ({
      how: `GET ${path} is served like a POST`,
      expect: new RegExp(
        `^GET ${path.replace(/\//g, '\\/')} with every parameter in the URL: expected a 4xx refusal`,
      ),
      handlers: credentialsFromUrl(path, 'get'),
    })),
    {
      how: 'a revocation with credentials in the URL is refused but carried out',
      expect: /^a revocation request with its credentials in the URL revoked the token/,
      handlers: (target) => [
        http.post(target.baseUrl + REVOKE, async ({ request }) => {
          const url = new URL(request.url)
          if (!url.searchParams.has('client_secret')) return undefined
          await forwardAsForm(target, url, await request.text())
          return HttpResponse.json(
            { error: 'invalid_request', error_description: 'credentials in the URL' },
            { status: 400 },
          )
        }),
      ],
    },
  ]),
  // one sabotage per part of the refusal: no token, its status, its error code
  'SEC-05': perPart(
    (
      [
        [
          'the token endpoint answers the password grant with a token',
          /^the password grant issued a token/,
          200,
          { access_token: 'eyJ.forged.token', token_type: 'Bearer', expires_in: 3600 },
        ],
        [
          'the password grant is refused with HTTP 403',
          /^password grant: expected HTTP 400 or 401, got 403/,
          403,
          { error: 'unsupported_grant_type' },
        ],
        [
          'the password grant is refused with error=invalid_request',
          /^the password grant must be refused with unsupported_grant_type or unauthorized_client, got error="invalid_request"/,
          400,
          { error: 'invalid_request', error_description: 'missing parameter code' },
        ],
      ] as const
    ).map(([how, expect, status, body]): Sabotage => ({
      how,
      expect,
      handlers: (target) => [
        http.post(target.baseUrl + TOKEN, async ({ request }) => {
          const form = new URLSearchParams(await request.clone().text())
          if (form.get('grant_type') !== 'password')
            return fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
          return HttpResponse.json(body, { status, headers: { 'cache-control': 'no-store' } })
        }),
      ],
    })),
  ),
  // one sabotage per kind of sample (each a sub-case); the session cookie needs a browser
  'SEC-06': [
    {
      how: 'authorization codes carry 32 random bits behind a fixed prefix',
      expect:
        /^authorization codes: authorization codes carry an estimated \d+ bits of entropy, fewer than the 128/,
      extend: showCodesAs(weakCode),
    },
    {
      how: 'session identifiers carry 32 random bits behind a fixed prefix',
      expect:
        /^session cookie \S+: session cookie \S+ carry an estimated \d+ bits of entropy, fewer than the 128/,
      extend: weakSessionIds,
    },
    {
      how: 'every refresh token the token endpoint issues is the same',
      expect: /^refresh tokens: 7 repeated among 8 samples/,
      handlers: corruptJson(
        TOKEN,
        (b) => {
          if (typeof b.refresh_token === 'string') b.refresh_token = 'the-one-refresh-token'
        },
        'all',
      ),
    },
    {
      how: 'refresh tokens carry 32 random bits behind a fixed prefix',
      expect:
        /^refresh tokens: refresh tokens carry an estimated \d+ bits of entropy, fewer than the 128/,
      handlers: corruptJson(
        TOKEN,
        (b) => {
          if (typeof b.refresh_token === 'string')
            b.refresh_token = `refresh-token-of-this-server-${randomBytes(4).toString('hex')}`
        },
        'all',
      ),
    },
  ],
  // one sabotage per part (each a sub-case): the cookie's two attributes, and fixation
  'SEC-07': [
    {
      how: 'the session cookie is set without Secure',
      expect: /^the session cookie \S+: not Secure/,
      extend: sessionCookieRenamed('idp_session', { isSecure: false }),
    },
    {
      how: 'the session cookie is set without HttpOnly',
      expect: /^the session cookie \S+: not HttpOnly/,
      extend: sessionCookieWith({ isHttpOnly: false }),
    },
    {
      // the session's cookies are then told by requests without prompt
      how: 'prompt=none is answered as if signed out, and the session cookie is set without HttpOnly',
      expect: /^the session cookie \S+: not HttpOnly/,
      extend: extendAll(promptNoneSignedOut, sessionCookieWith({ isHttpOnly: false })),
    },
    {
      how: 'signing in keeps the session identifier the browser already had',
      expect: /^session fixation: /,
      extend: sessionKeptAtSignIn,
    },
  ],
  // one sabotage per page (each a sub-case), and one for a server that serves none as HTML
  'SEC-08': [
    {
      how: 'the login page is sent with Referrer-Policy: unsafe-url',
      expect: /^login page: Referrer-Policy "unsafe-url" lets the URL/,
      handlers: corruptHeaders('/auth/authorize', (h) => h.set('referrer-policy', 'unsafe-url')),
    },
    {
      how: 'the error page links a help page of another origin under Referrer-Policy: unsafe-url',
      expect: /^error page: Referrer-Policy "unsafe-url" lets the URL/,
      handlers: leakyPage('/auth/authorize', (url) =>
        (url.searchParams.get('client_id') ?? '').startsWith('unknown-'),
      ),
    },
    {
      how: 'the logged-out page links a help page of another origin under Referrer-Policy: unsafe-url',
      expect: /^logged-out page: Referrer-Policy "unsafe-url" lets the URL/,
      handlers: leakyPage('/auth/logout', () => true),
    },
    {
      how: 'the login, error and logged-out pages are all served as JSON',
      expect: /^neither the login page nor the error page was served as HTML/,
      handlers: (target) =>
        ['/auth/authorize', '/auth/logout'].map((path) =>
          http.get(target.baseUrl + path, async ({ request }) => {
            const real = await relay(target, request)
            if (real.status >= 300 && real.status < 400) return real
            return HttpResponse.json(
              { error: 'invalid_request', error_description: 'this server serves no pages' },
              { status: real.status },
            )
          }),
        ),
    },
  ],
  // one sabotage per malformed request (each a sub-case), the kinds of leak taken in turn
  'SEC-09': perPart(
    MALFORMED.map(([what, method, path, matches], i): Sabotage => {
      const [kind, leak] = LEAKS[i % LEAKS.length] ?? ['', '']
      return {
        how: `the answer to ${what} reveals ${kind}`,
        expect: new RegExp(`^${escapeRegExp(what)}: the \\d+ answer reveals ${escapeRegExp(kind)}`),
        handlers: leaksOn(method, path, matches, leak),
      }
    }),
  ),
  'SEC-10': {
    how: "client_credentials tokens carry the first fixture user's sub",
    expect: /the sub of a user/,
    // the token re-signed with the server's own key, its sub the first fixture user's
    extend: editAccessToken('client_credentials', async (claims, app) => {
      claims.sub = (await app.deps.store.users.byUsername('alice'))?.id ?? claims.sub
    }),
  }, // one sabotage per part: the session honoured by the authorization request, and by prompt=none
  'SEC-11': [
    {
      how: 'the session store ignores the server clock, so sessions outlive SESSION_TTL',
      expect:
        /^a session past its \d+ s lifetime \(\d+ s later\): the authorization request returned a code without a new sign-in/,
      store: sessionsOnWallClock,
    },
    {
      how: 'prompt=none with an expired session answers with a code instead of login_required',
      expect:
        /^a session past its \d+ s lifetime \(\d+ s later\): prompt=none with the session's cookies still returned a code/,
      handlers: onAuthorize({
        respond: (real, sent) => {
          const location = real.headers.get('location')
          if (sent.searchParams.get('prompt') !== 'none' || !location) return undefined
          const to = new URL(location)
          if (to.searchParams.get('error') !== 'login_required') return undefined
          to.searchParams.delete('error')
          to.searchParams.delete('error_description')
          to.searchParams.set('code', 'expired-session-code')
          return new HttpResponse(null, { status: 302, headers: { location: to.toString() } })
        },
      }),
    },
  ],
}
