import { randomBytes } from 'node:crypto'
import { bypass, http, HttpResponse, type HttpHandler } from 'msw'
import type { security } from '../../catalogue/security.ts'
import {
  corruptHeaders,
  corruptJson,
  DISCOVERY,
  fetchVia,
  headerPairs,
  INTROSPECT,
  perPart,
  REVOKE,
  type Sabotage,
  type Sabotages,
  type Target,
  TOKEN,
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

/** How to break the target for each SEC-* check, and the assertion that must fire. */
export const securitySabotage: Record<keyof typeof security, Sabotages> = {
  'SEC-01': {
    how: 'failed client authentications are charged to the client_id they name',
    expect: /client lock-out/,
    faults: ['client-auth-failures-charged-to-client'],
  },
  'SEC-02': {
    how: 'failed sign-ins are limited per user name only, never per address',
    expect: /password spraying is not throttled/,
    faults: ['login-spraying-unthrottled'],
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
      how: 'the authorization response leaves iss out',
      expect:
        /^mix-up defense: the authorization response must carry iss=\S+ \(RFC 9207 §2\), got null/,
      handlers: (target) => [
        http.get(`${target.baseUrl}/auth/authorize`, async ({ request }) => {
          const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
          const headers = headerPairs(real.headers).map(([name, value]): [string, string] => {
            if (name.toLowerCase() !== 'location' || !value.includes('code=')) return [name, value]
            const url = new URL(value)
            url.searchParams.delete('iss')
            return [name, url.toString()]
          })
          return new HttpResponse(await real.text(), { status: real.status, headers })
        }),
      ],
    },
  ],
  // one sabotage per endpoint and way of putting credentials in the URL (each a sub-case), and
  // one for a refused revocation that revokes all the same
  'SEC-04': perPart([
    {
      how: 'client credentials in the URL query are accepted',
      expect: /credentials in the URL query of POST \/auth\/token: expected a 4xx refusal/,
      faults: ['client-credentials-in-query-accepted'],
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
      faults: ['weak-codes'],
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
  'SEC-07': {
    how: 'signing in keeps the session identifier the browser already had',
    expect: /session fixation/,
    faults: ['session-fixation'],
  },
  'SEC-08': {
    how: 'the login page is sent with Referrer-Policy: unsafe-url',
    expect: /Referrer-Policy "unsafe-url" lets the URL/,
    handlers: corruptHeaders('/auth/authorize', (h) => h.set('referrer-policy', 'unsafe-url')),
  },
  'SEC-09': {
    how: 'token endpoint errors carry the stack trace in error_description',
    expect: /reveals a stack trace/,
    handlers: (target) => [
      http.post(target.baseUrl + TOKEN, async ({ request }) => {
        const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
        const text = await real.text()
        if (real.status < 400)
          return new HttpResponse(text, { status: real.status, headers: headerPairs(real.headers) })
        return HttpResponse.json(
          {
            error: 'invalid_request',
            error_description:
              'TypeError: Cannot read properties of undefined\n    at handle (/srv/idp/server/grants/authorization-code.ts:41:17)',
          },
          { status: real.status, headers: headerPairs(real.headers) },
        )
      }),
    ],
  },
  'SEC-10': {
    how: "client_credentials tokens carry the first fixture user's sub",
    expect: /the sub of a user/,
    faults: ['client-credentials-sub-of-user'],
  },
}
