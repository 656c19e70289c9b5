import { bypass, http, HttpResponse } from 'msw'
import type { robustness } from '../../catalogue/robustness.ts'
import {
  fetchVia,
  INTROSPECT,
  onForm,
  plainHeaders,
  relay,
  replaceJson,
  REVOKE,
  type Sabotages,
  type Target,
  TOKEN,
  USER_INFO,
  userNameColumnOf,
} from './kit.ts'

/**
 * A token as a lenient base64url decoder reads its signature: what is outside the base64url
 * alphabet ('=' padding, whitespace, a stray character) dropped, so the same signature octets.
 */
const lenientSignature = (token: string): string => {
  const parts = token.split('.')
  if (parts.length !== 3) return token
  return [parts[0], parts[1], (parts[2] ?? '').replace(/[^A-Za-z0-9_-]/g, '')].join('.')
}

/** Every refusal at `path` (any method) answered with `answer`; what it accepts, as it is. */
const refusalsAs = (path: string, answer: () => Response) => (target: Target) => [
  http.all(`${target.baseUrl}${path}`, async ({ request }) => {
    const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
    if (real.status >= 400) return answer()
    return new HttpResponse(await real.arrayBuffer(), {
      status: real.status,
      headers: plainHeaders(real),
    })
  }),
]

/** How to break the target for each ROBUST-* check. */
export const robustnessSabotage: Record<keyof typeof robustness, Sabotages> = {
  'ROBUST-01': [
    {
      how: 'the revocation endpoint answers every refusal with an HTML 500 page',
      expect: /^\/auth\/revoke: HTTP 500: a 5xx for a malformed request/,
      handlers: refusalsAs(REVOKE, () =>
        HttpResponse.html('<!doctype html><title>Internal Server Error</title>', { status: 500 }),
      ),
    },
    {
      // RFC 9110 §15.5.14: 413 is for content larger than the server will process, never for a
      // small malformed request, however well its body is shaped
      how: 'the token endpoint answers every refusal 413 with an invalid_request JSON body',
      expect: /^\/auth\/token: HTTP 413 for a request that was not large \(RFC 9110 §15\.5\.14/,
      handlers: refusalsAs(TOKEN, () =>
        HttpResponse.json(
          { error: 'invalid_request', error_description: 'request too large' },
          { status: 413 },
        ),
      ),
    },
  ],
  'ROBUST-02': [
    {
      how: 'introspection calls any JWT-shaped token it does not know active',
      expect:
        /^a mutated access token: introspection of the mutated token: expected active false, got \{"active":true/,
      handlers: onForm('/auth/introspect', async ({ form, forward }) => {
        const token = form.get('token') ?? ''
        return replaceJson(await forward(), (body) =>
          body.active === false && token.includes('.')
            ? { active: true, token_type: 'Bearer', client_id: form.get('client_id') }
            : body,
        )
      }),
    },
    {
      // RFC 7515 §5.2 step 7, RFC 7519 §7.2: such a token MUST be rejected (fuzz/jwt.ts)
      how: "user-info and introspection decode a token's signature leniently ('=' padding, whitespace and stray characters dropped)",
      expect:
        /^a mutated access token: .* counterexample .*"shape":"(padding|whitespace|invalid-char)","segment":"signature"/,
      handlers: (target) => [
        http.all(`${target.baseUrl}${USER_INFO}`, async ({ request }) => {
          const headers = new Headers(request.headers)
          const auth = headers.get('authorization') ?? ''
          if (auth.startsWith('Bearer '))
            headers.set('authorization', `Bearer ${lenientSignature(auth.slice(7))}`)
          let body: string | undefined
          if (request.method === 'POST') {
            const form = new URLSearchParams(await request.clone().text())
            const token = form.get('access_token')
            if (token !== null) form.set('access_token', lenientSignature(token))
            body = form.toString()
            headers.delete('content-length')
          }
          const real = await fetchVia(
            target.dispatcher,
            bypass(new Request(request.url, { method: request.method, headers, body })),
            { redirect: 'manual' },
          )
          return new HttpResponse(await real.arrayBuffer(), {
            status: real.status,
            headers: plainHeaders(real),
          })
        }),
        ...onForm(INTROSPECT, async ({ form, forward }) => {
          const token = form.get('token')
          if (token !== null) form.set('token', lenientSignature(token))
          return forward(form)
        })(target),
      ],
    },
  ],
  // one sabotage per part: authorize, the login post (without and within an interaction), logout
  'ROBUST-03': [
    {
      how: 'authorize answers a state longer than 2048 characters with an HTML 500 page',
      expect: /^\/auth\/authorize: HTTP 500: a 5xx for a malformed request/,
      handlers: (target) => [
        http.all(`${target.baseUrl}/auth/authorize`, async ({ request }) => {
          const states = (await paramsOf(request)).getAll('state')
          if (!states.some((s) => s.length > 2048)) return undefined
          return new HttpResponse('<!doctype html><title>Internal Server Error</title>', {
            status: 500,
            headers: { 'content-type': 'text/html' },
          })
        }),
      ],
    },
    {
      how: 'authorize answers a state of 256 to 2048 characters with an HTML 500 page (a VARCHAR(255) column behind its own 2048 limit)',
      expect: /^\/auth\/authorize: HTTP 500: a 5xx for a malformed request/,
      handlers: (target) => [
        http.all(`${target.baseUrl}/auth/authorize`, async ({ request }) => {
          const states = (await paramsOf(request)).getAll('state')
          if (!states.some((s) => s.length > 255 && s.length <= 2048)) return undefined
          return new HttpResponse('<!doctype html><title>Internal Server Error</title>', {
            status: 500,
            headers: { 'content-type': 'text/html' },
          })
        }),
      ],
    },
    {
      how: 'authorize redirects its errors to the redirect_uri it was given, client verified or not',
      expect:
        /^\/auth\/authorize: HTTP 302 redirected the browser to \S+, which the request did not verify/,
      handlers: (target) => [
        http.all(`${target.baseUrl}/auth/authorize`, async ({ request }) => {
          const to = (await paramsOf(request)).get('redirect_uri') ?? ''
          const real = await relay(target, request)
          if (real.status < 400 || !URL.canParse(to)) return real
          const error = new URL(to)
          error.searchParams.set('error', 'invalid_request')
          return new HttpResponse(null, { status: 302, headers: { location: error.toString() } })
        }),
      ],
    },
    {
      how: 'the login post without its interaction cookie is refused with a plain-text 403',
      expect:
        /^\/auth\/login without the interaction: HTTP 403 answered with text\/plain \S+: neither an HTML page/,
      handlers: (target) => [
        http.post(`${target.baseUrl}/auth/login`, ({ request }) => {
          if (request.headers.get('cookie')) return undefined
          return new HttpResponse('Forbidden', {
            status: 403,
            headers: { 'content-type': 'text/plain' },
          })
        }),
      ],
    },
    {
      how: 'a failed sign-in within a real interaction answers 500 (the failure path crashes)',
      expect: /^\/auth\/login within an interaction: HTTP 500: a 5xx for a malformed request/,
      handlers: (target) => [
        http.post(`${target.baseUrl}/auth/login`, async ({ request }) => {
          if (!request.headers.get('cookie')) return undefined
          const real = await relay(target, request)
          if (real.status < 400) return real
          return new HttpResponse('<!doctype html><title>Internal Server Error</title>', {
            status: 500,
            headers: { 'content-type': 'text/html' },
          })
        }),
      ],
    },
    {
      how: 'a sign-in within a live interaction answers 500 when its user name is longer than 255 characters (a VARCHAR(255) column)',
      expect: /^\/auth\/login within an interaction: HTTP 500: a 5xx for a malformed request/,
      extend: userNameColumnOf(255),
    },
    {
      // OIDC Core §3.1.2.1: authorize MUST take POST; a 405 answers no over-long value
      how: 'authorize answers every POST with an empty plain-text 405',
      expect: /^\/auth\/authorize: HTTP 405 answered with text\/plain \S+: neither an HTML page/,
      handlers: (target: Target) => [
        http.post(
          `${target.baseUrl}/auth/authorize`,
          () => new HttpResponse('', { status: 405, headers: { 'content-type': 'text/plain' } }),
        ),
      ],
    },
    {
      how: 'logout answers its refusals with an empty plain-text 400',
      expect: /^\/auth\/logout: HTTP 400 answered with text\/plain \S+: neither an HTML page/,
      handlers: (target: Target) => [
        http.all(`${target.baseUrl}/auth/logout`, async ({ request }) => {
          const real = await relay(target, request)
          if (real.status !== 400) return real
          return new HttpResponse('', { status: 400, headers: { 'content-type': 'text/plain' } })
        }),
      ],
    },
  ],
}

/** The query and, for a POSTed form, the body's parameters of a request. */
async function paramsOf(request: Request): Promise<URLSearchParams> {
  const params = new URLSearchParams(new URL(request.url).search)
  if (request.method === 'POST')
    for (const [k, v] of new URLSearchParams(await request.clone().text())) params.append(k, v)
  return params
}
