import { http, HttpResponse, type HttpHandler } from 'msw'
import type { branding } from '../../catalogue/branding.ts'
import { BRANDING, type Json, relay, type Sabotages, type Target } from './kit.ts'

/** The real branding answers with their JSON body changed (successful ones only). */
const editRecord =
  (mutate: (body: Json, target: Target) => void) =>
  (target: Target): HttpHandler[] => [
    http.get(target.baseUrl + BRANDING, async ({ request }) => {
      const res = await relay(target, request)
      if (res.status !== 200) return res
      const body = (await res.json()) as Json
      mutate(body, target)
      return new Response(JSON.stringify(body), {
        status: 200,
        headers: new Headers([...res.headers]),
      })
    }),
  ]

/** GET /auth/branding answered `answer` for the requests `matches` picks (else the real one). */
const answeredWhen =
  (matches: (query: URLSearchParams) => boolean, answer: () => Response) =>
  (target: Target): HttpHandler[] => [
    http.get(target.baseUrl + BRANDING, ({ request }) =>
      matches(new URL(request.url).searchParams) ? answer() : relay(target, request),
    ),
  ]

const jsonError = (status: number, error: string) =>
  HttpResponse.json({ error, error_description: `branding: ${error}` }, { status })

/** How to break the target for each BRAND-* check. */
export const brandingSabotage: Record<keyof typeof branding, Sabotages> = {
  // one sabotage per client's record (each a sub-case), per field set and per empty field
  'BRAND-01': [
    {
      how: 'the branding record lacks terms_of_service_url',
      expect: /^branding of conformance-client: fields: expected exactly /,
      handlers: editRecord((b) => delete b.terms_of_service_url),
    },
    {
      how: 'the branding record has an empty logo_url',
      expect: /^branding of conformance-client: logo_url must be a non-empty string, got ""/,
      handlers: editRecord((b) => (b.logo_url = '')),
    },
    {
      how: 'the record of other-client is not found',
      expect: /^branding of other-client: expected HTTP 200, got 404/,
      handlers: answeredWhen(
        (q) => q.get('client_id') === 'other-client',
        () => jsonError(404, 'not_found'),
      ),
    },
  ],
  // one sabotage per client's record (each a sub-case)
  'BRAND-02': [
    {
      how: 'brand_color given as a CSS name',
      expect: /^branding of conformance-client: brand_color must be #RRGGBB, got "blue"/,
      handlers: editRecord((b) => (b.brand_color = 'blue')),
    },
    {
      how: 'the brand_color of other-client has three digits',
      expect: /^branding of other-client: brand_color must be #RRGGBB, got "#0B8"/,
      handlers: editRecord((b, target) => {
        if (b.application_name === 'Other Client' || target.clients.other === undefined)
          b.brand_color = '#0B8'
      }),
    },
  ],
  // one sabotage per request of the check (each a sub-case)
  'BRAND-03': [
    {
      how: 'branding errors served as an HTML page',
      expect: /^no client_id: error body: expected Content-Type application\/json, got "text\/html/,
      handlers: (target) => [
        http.get(target.baseUrl + BRANDING, async ({ request }) => {
          const res = await relay(target, request)
          if (res.status < 400) return res
          const headers = new Headers([...res.headers])
          headers.set('content-type', 'text/html; charset=utf-8')
          const page = '<!doctype html><title>Not found</title><h1>Not found</h1>'
          return new Response(page, { status: res.status, headers })
        }),
      ],
    },
    {
      how: 'a request without client_id is answered 404',
      expect: /^no client_id: status: expected HTTP 400, got 404/,
      handlers: answeredWhen(
        (q) => !q.has('client_id'),
        () => jsonError(404, 'not_found'),
      ),
    },
    {
      how: 'a request without client_id is refused invalid_client',
      expect: /^no client_id: error: expected invalid_request, got "invalid_client"/,
      handlers: answeredWhen(
        (q) => !q.has('client_id'),
        () => jsonError(400, 'invalid_client'),
      ),
    },
    {
      how: 'an empty client_id crashes the endpoint',
      expect: /^an empty client_id: status: expected HTTP 400 or 404, got 500/,
      handlers: answeredWhen(
        (q) => q.get('client_id') === '',
        () => jsonError(500, 'server_error'),
      ),
    },
    {
      how: 'an unknown client_id gets a default record',
      expect: /^an unknown client_id: status: expected HTTP 400 or 404, got 200/,
      handlers: answeredWhen(
        (q) => (q.get('client_id') ?? '').startsWith('no-such-client-'),
        () =>
          HttpResponse.json({
            logo_url: 'https://idp.example/logo.png',
            brand_color: '#000000',
            application_name: 'Sign in',
            privacy_policy_url: 'https://idp.example/privacy',
            terms_of_service_url: 'https://idp.example/terms',
          }),
      ),
    },
    {
      how: 'an overlong client_id crashes the endpoint',
      expect: /^an overlong client_id: status: expected HTTP 400 or 404, got 500/,
      handlers: answeredWhen(
        (q) => (q.get('client_id') ?? '').length >= 4000,
        () => jsonError(500, 'server_error'),
      ),
    },
    {
      how: 'a client_id with markup is reflected in an HTML page',
      expect:
        /^a client_id with markup: error body: expected Content-Type application\/json, got "text\/html/,
      handlers: answeredWhen(
        (q) => (q.get('client_id') ?? '').includes('<script>'),
        () =>
          HttpResponse.html('<h1>unknown client "><script>alert(1)</script></h1>', { status: 404 }),
      ),
    },
  ],
  // one sabotage per way a record leaks (each client a sub-case), and for one record for all
  'BRAND-04': [
    {
      how: 'the branding record carries the client secret',
      expect: /^branding of conformance-client: carries "client_secret"/,
      handlers: editRecord((b, target) => (b.client_secret = target.clients.main.secret)),
    },
    {
      how: 'the branding record names the registered redirect URI in a field',
      expect: /^branding of conformance-client: reveals its registered URI/,
      handlers: editRecord((b, target) => {
        if (b.application_name === 'Conformance Client')
          b.terms_of_service_url = target.clients.main.redirectUri ?? ''
      }),
    },
    {
      how: 'a publicly cacheable branding record sets a cookie',
      expect:
        /^branding of conformance-client: is publicly cacheable \(public, max-age=3600\) yet sets a cookie/,
      handlers: (target) => [
        http.get(target.baseUrl + BRANDING, ({ request }) =>
          relay(target, request, (headers) => {
            headers.set('cache-control', 'public, max-age=3600')
            // expired at once: msw would otherwise replay it on every later request of the run
            headers.set('set-cookie', 'visitor=1; Path=/nowhere; Max-Age=0; Secure')
          }),
        ),
      ],
    },
    {
      how: "every client_id gets the main client's record",
      expect: /^conformance-client and other-client get the same branding record/,
      handlers: (target) => [
        http.get(target.baseUrl + BRANDING, ({ request }) => {
          const url = new URL(request.url)
          if (url.searchParams.has('client_id'))
            url.searchParams.set('client_id', target.clients.main.id)
          return relay(target, new Request(url.toString(), { headers: request.headers }))
        }),
      ],
    },
  ],
}
