import { bypass, http, HttpResponse } from 'msw'
import type { security } from '../../catalogue/security.ts'
import {
  corruptHeaders,
  corruptJson,
  DISCOVERY,
  fetchVia,
  headerPairs,
  type Sabotage,
  TOKEN,
} from './kit.ts'

/** How to break the target for each SEC-* check, and the assertion that must fire. */
export const securitySabotage: Record<keyof typeof security, Sabotage> = {
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
  'SEC-03': {
    how: 'discovery does not advertise authorization_response_iss_parameter_supported',
    expect: /authorization_response_iss_parameter_supported: true/,
    handlers: corruptJson(DISCOVERY, (b) => {
      delete b.authorization_response_iss_parameter_supported
    }),
  },
  'SEC-04': {
    how: 'client credentials in the URL query are accepted',
    expect: /credentials in the URL query of POST \/auth\/token: expected a 4xx refusal/,
    faults: ['client-credentials-in-query-accepted'],
  },
  'SEC-05': {
    how: 'the token endpoint answers the password grant with a token',
    expect: /the password grant issued a token/,
    handlers: (target) => [
      http.post(target.baseUrl + TOKEN, async ({ request }) => {
        const form = new URLSearchParams(await request.clone().text())
        if (form.get('grant_type') !== 'password')
          return fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
        return HttpResponse.json(
          { access_token: 'eyJ.forged.token', token_type: 'Bearer', expires_in: 3600 },
          { headers: { 'cache-control': 'no-store' } },
        )
      }),
    ],
  },
  'SEC-06': {
    how: 'authorization codes carry 32 random bits behind a fixed prefix',
    expect: /bits of entropy, fewer than the 128/,
    faults: ['weak-codes'],
  },
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
