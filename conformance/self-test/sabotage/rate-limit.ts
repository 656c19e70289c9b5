import { http, HttpResponse, type HttpHandler } from 'msw'
import type { rateLimit } from '../../catalogue/rate-limit.ts'
import { relay, type Sabotages, type Target, TOKEN } from './kit.ts'

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
      faults: ['login-unthrottled'],
    },
  ],
  'RATE-02': {
    how: 'X-RateLimit-Reset given as seconds until the reset, not a Unix time',
    expect: /^X-RateLimit-Reset \d+ is not a future Unix time/,
    handlers: editHeaders(TOKEN, (h) => {
      const reset = Number(h.get('x-ratelimit-reset'))
      if (reset) h.set('x-ratelimit-reset', String(reset - Math.floor(Date.now() / 1000)))
    }),
  },
  'RATE-03': {
    how: 'token, introspection and revocation limits counted per address, not per client_id',
    expect: /the limit is not counted per client_id/,
    faults: ['rate-limit-keyed-by-ip'],
  },
  'RATE-04': {
    how: 'no X-RateLimit headers on successful user-info responses',
    expect: /^user-info: no x-ratelimit-limit header/,
    handlers: editHeaders('/auth/user-info', (h, status) => {
      if (status !== 200) return
      for (const name of RATE_HEADERS) h.delete(name)
    }),
  },
}
