import { http, HttpResponse, type HttpHandler } from 'msw'
import type { rateLimit } from '../../catalogue/rate-limit.ts'
import {
  BRANDING,
  clientCountersUncounted,
  countersUncounted,
  DISCOVERY,
  escapeRegExp,
  headerPairs,
  INTROSPECT,
  ipLimitOnClientEndpoints,
  JWKS,
  perPart,
  relay,
  REVOKE,
  type Sabotage,
  type Sabotages,
  signInsUncounted,
  type Target,
  TOKEN,
  USER_INFO,
} from './kit.ts'

/** The real answers of `path` (any method) with their headers edited. */
const editHeaders =
  (path: string, edit: (headers: Headers, status: number) => void) =>
  (target: Target): HttpHandler[] => [
    http.all(target.baseUrl + path, ({ request }) => relay(target, request, edit)),
  ]

const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']

/** A token endpoint whose 429s become invalid_client, with or without its rate headers. */
const neverLimited =
  ({ headers }: { headers: boolean }) =>
  (target: Target): HttpHandler[] => [
    http.post(target.baseUrl + TOKEN, async ({ request }) => {
      const res = await relay(target, request, (h, status) => {
        if (!headers) for (const name of RATE_HEADERS) h.delete(name)
        if (status !== 429) return
        h.delete('retry-after')
        if (headers) h.set('x-ratelimit-remaining', '1')
      })
      if (res.status !== 429) return res
      return HttpResponse.json(
        { error: 'invalid_client', error_description: 'client authentication failed' },
        { status: 401, headers: new Headers([...res.headers]) },
      )
    }),
  ]

/**
 * An endpoint (GET) that answers past its limit as if it were not reached: each 429 becomes the
 * last 200 it gave, with the 429's X-RateLimit headers (Remaining 0, the same Reset) and no
 * Retry-After.
 */
const limitIgnored =
  (path: string) =>
  (target: Target): HttpHandler[] => {
    let last: { body: ArrayBuffer; headers: Headers } | undefined
    return [
      http.get(target.baseUrl + path, async ({ request }) => {
        const res = await relay(target, request, (h) => h.delete('retry-after'))
        if (res.status === 200) {
          last = { body: await res.clone().arrayBuffer(), headers: res.headers }
          return res
        }
        if (res.status !== 429 || !last) return res
        const headers = new Headers(headerPairs(last.headers))
        for (const name of RATE_HEADERS) headers.set(name, res.headers.get(name) ?? '')
        return new HttpResponse(last.body, { status: 200, headers })
      }),
    ]
  }

/** How to break the target for each RATE-* check. */
export const rateLimitSabotage: Record<keyof typeof rateLimit, Sabotages> = {
  'RATE-01': [
    {
      how: 'the token endpoint is never limited (its 429 turned into invalid_client)',
      expect: /^token endpoint: no 429 after \d+ requests, though X-RateLimit-Limit is \d+/,
      handlers: neverLimited({ headers: true }),
    },
    {
      how: 'the token endpoint is never limited and sends no X-RateLimit headers',
      expect:
        /^token endpoint: no 429 after \d+ requests \(.*\), and no X-RateLimit-Limit header says how many it would take/,
      handlers: neverLimited({ headers: false }),
    },
    {
      how: 'failed sign-ins on the login form are never throttled',
      expect: /^login form: no 429 after \d+ requests/,
      store: signInsUncounted,
    },
    {
      how: 'the 429 of the token endpoint says X-RateLimit-Remaining 1',
      expect: /^token endpoint: X-RateLimit-Remaining of the 429: expected 0, got 1/,
      handlers: editHeaders(TOKEN, (h, status) => {
        if (status === 429) h.set('x-ratelimit-remaining', '1')
      }),
    },
    {
      how: 'the 429 of the token endpoint has no X-RateLimit headers',
      expect: /^token endpoint: token endpoint, the 429: no x-ratelimit-limit header/,
      handlers: editHeaders(TOKEN, (h, status) => {
        if (status === 429) for (const name of RATE_HEADERS) h.delete(name)
      }),
    },
    {
      how: 'the 429 of the token endpoint is a JSON error without error_description',
      expect: /^token endpoint: error body: expected an error_description string/,
      handlers: (target) => [
        http.post(target.baseUrl + TOKEN, async ({ request }) => {
          const res = await relay(target, request)
          if (res.status !== 429) return res
          return HttpResponse.json(
            { error: 'temporarily_unavailable' },
            { status: 429, headers: [...res.headers] },
          )
        }),
      ],
    },
  ],
  // one sabotage per part: the headers' meaning, the 429 itself, and the limit lifting
  'RATE-02': [
    {
      how: 'X-RateLimit-Reset given as seconds until the reset, not a Unix time',
      expect: /^X-RateLimit-Reset \d+ is not a future Unix time/,
      handlers: editHeaders(TOKEN, (h) => {
        const reset = Number(h.get('x-ratelimit-reset'))
        if (reset) h.set('x-ratelimit-reset', String(reset - Math.floor(Date.now() / 1000)))
      }),
    },
    {
      how: 'X-RateLimit-Reset given in milliseconds',
      expect: /^X-RateLimit-Reset \d+ is more than a year away/,
      handlers: editHeaders(TOKEN, (h) => {
        const reset = Number(h.get('x-ratelimit-reset'))
        if (reset) h.set('x-ratelimit-reset', String(reset * 1000))
      }),
    },
    {
      how: 'X-RateLimit-Remaining does not drop from one request to the next',
      expect: /^X-RateLimit-Remaining of the next request: expected /,
      handlers: editHeaders(TOKEN, (h, status) => {
        const limit = Number(h.get('x-ratelimit-limit'))
        if (limit && status !== 429) h.set('x-ratelimit-remaining', String(limit - 1))
      }),
    },
    {
      how: 'a 429 to valid client credentials still carries an access token',
      expect: /^a 429 to valid client credentials carries a token/,
      handlers: (target) => [
        http.post(target.baseUrl + TOKEN, async ({ request }) => {
          const form = new URLSearchParams(await request.clone().text())
          const res = await relay(target, request)
          if (res.status !== 429 || form.get('grant_type') !== 'client_credentials') return res
          const body = { ...((await res.json()) as object), access_token: 'eyJ.issued.anyway' }
          return HttpResponse.json(body, { status: 429, headers: new Headers([...res.headers]) })
        }),
      ],
    },
    {
      how: 'a client once limited stays limited after X-RateLimit-Reset',
      expect: /^after X-RateLimit-Reset \d+ the request is still limited/,
      handlers: (target) => {
        const limited = new Map<string, Response>()
        return [
          http.post(target.baseUrl + TOKEN, async ({ request }) => {
            const id = new URLSearchParams(await request.clone().text()).get('client_id') ?? ''
            const kept = limited.get(id)
            if (kept) return kept.clone()
            const res = await relay(target, request)
            if (res.status === 429 && id.startsWith('rate-probe')) limited.set(id, res.clone())
            return res
          }),
        ]
      },
    },
  ],
  // one sabotage per endpoint whose limit is shared by every client (each a sub-case), the
  // server that keys all three by address (its first sub-case reports it), and the login form's
  // limit (a sub-case too)
  'RATE-03': perPart([
    {
      how: 'token, introspection and revocation limits counted per address, not per client_id',
      expect: /^token endpoint \(invalid_client\): .*the limit is not counted per client_id/,
      // the per-client counters never count; a limit per address takes their place
      store: clientCountersUncounted,
      extend: ipLimitOnClientEndpoints,
    },
    ...(
      [
        ['token endpoint (invalid_client)', TOKEN],
        ['introspection endpoint', INTROSPECT],
        ['revocation endpoint', REVOKE],
      ] as const
    ).map(([what, path]): Sabotage => ({
      how: `the ${what} limit, once reached by one client, holds for every client`,
      expect: new RegExp(
        `^${escapeRegExp(what)}: after client \\S+ was limited, client \\S+ is limited too \\(429\\): the limit is not counted per client_id`,
      ),
      handlers: (target) => {
        let reached: Response | undefined
        return [
          http.post(target.baseUrl + path, async ({ request }) => {
            if (reached) return reached.clone()
            const res = await relay(target, request)
            if (res.status === 429) reached = res.clone()
            return res
          }),
        ]
      },
    })),
    {
      how: 'failed sign-ins on the login form are never throttled, while the endpoints are',
      expect: /^login form: no 429 after \d+ requests/,
      store: signInsUncounted,
    },
  ]),
  // one sabotage per endpoint whose successful answers lose the headers (each a sub-case)
  'RATE-04': perPart(
    (
      [
        ['token endpoint (authorization_code)', TOKEN, 'authorization_code'],
        ['user-info', USER_INFO],
        ['introspection', INTROSPECT],
        ['token endpoint (client_credentials)', TOKEN, 'client_credentials'],
        ['discovery', DISCOVERY],
        ['JWKS', JWKS],
        ['branding', BRANDING],
        ['revocation', REVOKE],
      ] as const
    ).map(([what, path, grant]): Sabotage => ({
      how: `no X-RateLimit headers on successful ${what} responses`,
      expect: new RegExp(`^${escapeRegExp(what)}: no x-ratelimit-limit header`),
      handlers: (target) => [
        http.all(target.baseUrl + path, async ({ request }) => {
          const form = new URLSearchParams(await request.clone().text())
          return relay(target, request, (h, status) => {
            if (status !== 200 || (grant && form.get('grant_type') !== grant)) return
            for (const name of RATE_HEADERS) h.delete(name)
          })
        }),
      ],
    })),
  ),
  // one sabotage per probed limit (each a sub-case; the store ones break a whole server group,
  // whose first endpoint heads the failure), and one per part of the 429 itself
  'RATE-05': perPart([
    ...(
      [
        ['user-info', /^userinfo:/, 'user-info requests'],
        ['discovery', /^public:/, 'the public documents (discovery, JWKS, branding)'],
        ['introspection', /^introspect:client:/, "authenticated clients' introspection requests"],
        ['revocation', /^revoke:client:/, "authenticated clients' revocation requests"],
      ] as const
    ).map(([what, counters, whose]): Sabotage => ({
      how: `the counters of ${whose} never count`,
      expect: new RegExp(
        `^${escapeRegExp(what)}: no 429 after \\d+ requests, though X-RateLimit-Limit is \\d+`,
      ),
      store: countersUncounted(counters),
    })),
    ...(
      [
        ['JWKS', JWKS],
        ['branding', BRANDING],
      ] as const
    ).map(([what, path]): Sabotage => ({
      how: `${what} answers past its limit as if it were not reached`,
      expect: new RegExp(
        `^${escapeRegExp(what)}: no 429 after \\d+ requests, though X-RateLimit-Limit is \\d+`,
      ),
      handlers: limitIgnored(path),
    })),
    {
      how: 'the 429 of user-info says X-RateLimit-Remaining 1',
      expect: /^user-info: X-RateLimit-Remaining of the 429: expected 0, got 1/,
      handlers: editHeaders(USER_INFO, (h, status) => {
        if (status === 429) h.set('x-ratelimit-remaining', '1')
      }),
    },
    {
      how: 'the 429 of JWKS has no X-RateLimit headers',
      expect: /^JWKS: JWKS, the 429: no x-ratelimit-limit header/,
      handlers: editHeaders(JWKS, (h, status) => {
        if (status === 429) for (const name of RATE_HEADERS) h.delete(name)
      }),
    },
    {
      how: 'the 429 of revocation is an empty body, not the JSON error',
      expect: /^revocation: error body: expected a JSON object/,
      handlers: (target) => [
        http.post(target.baseUrl + REVOKE, async ({ request }) => {
          const res = await relay(target, request)
          if (res.status !== 429) return res
          return new HttpResponse(null, { status: 429, headers: [...res.headers] })
        }),
      ],
    },
  ]),
}
