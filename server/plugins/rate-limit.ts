import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi'
import type { RateLimitGroup } from '../config.ts'
import type { Deps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { endpointOf } from '../explain/findings.ts'
import { clientAddress } from '../protocol/client-address.ts'

/** The API endpoints and the group whose limit each counts against. */
export const GROUP_OF_PATH: Readonly<Record<string, RateLimitGroup>> = {
  '/auth/token': 'token',
  '/auth/introspect': 'introspect',
  '/auth/revoke': 'revoke',
  '/auth/user-info': 'userinfo',
  '/auth/branding': 'public',
  '/.well-known/openid-configuration': 'public',
  '/.well-known/oauth-authorization-server': 'public',
  '/.well-known/jwks.json': 'public',
}

export interface RateLimitState {
  readonly limit: number
  readonly remaining: number
  /** Unix seconds at which the window resets. */
  readonly reset: number
}

/**
 * Counts one request against `key` in the group's fixed window. Counters live in the store
 * (in PostgreSQL every process of a deployment shares them; SQLite, served by one process,
 * keeps them in memory).
 */
export async function countRequest(
  group: RateLimitGroup,
  key: string,
  deps: Pick<Deps, 'store' | 'clock' | 'rateLimits'>,
): Promise<RateLimitState & { exceeded: boolean; count: number }> {
  const { limit, window } = deps.rateLimits()[group]
  const now = deps.clock()
  const windowStart = now - (now % window)
  const count = await deps.store.rateLimits.hit(`${group}:${key}`, windowStart, window)
  return {
    limit,
    remaining: Math.max(0, limit - count),
    reset: windowStart + window,
    exceeded: count > limit,
    count,
  }
}

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-reset': String(state.reset),
  }
}

/** RFC 6585 §4: 429 with Retry-After, in the JSON error shape. */
export function tooManyRequests(state: RateLimitState, now: number): OAuthError {
  const retryAfter = Math.max(1, state.reset - now)
  return new OAuthError(
    'temporarily_unavailable',
    `too many requests; retry after ${retryAfter} seconds`,
    {
      status: 429,
      headers: { ...rateLimitHeaders(state), 'retry-after': String(retryAfter) },
    },
  )
}

/**
 * Rate limiting of the API endpoints (INTERFACE.md §7, §8; ARCHITECTURE.md): token,
 * introspection and revocation counted per client_id, user-info and the public documents per
 * IP. X-RateLimit-Limit, -Remaining and -Reset go on every response of those endpoints.
 */
export const rateLimit = (
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'log' | 'rateLimits' | 'faults' | 'explain'>,
): Plugin<undefined> => ({
  name: 'rate-limit',
  register(server) {
    server.ext('onPreHandler', async (request: Request, h: ResponseToolkit) => {
      const group = GROUP_OF_PATH[request.path]
      if (!group || request.route.path === '/{any*}') return h.continue
      const payload = request.payload as Record<string, unknown> | null
      const clientId =
        typeof payload?.client_id === 'string' ? payload.client_id.slice(0, 255) : undefined
      // the self-test's broken server counts everyone behind one address together
      const byClient =
        (group === 'token' || group === 'introspect' || group === 'revoke') &&
        !deps.faults.has('rate-limit-keyed-by-ip')
      const key =
        byClient && clientId
          ? `client:${clientId}`
          : `ip:${clientAddress(request, deps.config.trustProxy)}`
      let state
      try {
        state = await countRequest(group, key, deps)
      } catch (err) {
        // a counter that cannot be written must not take the endpoint down with it
        deps.log('rate-limit-unavailable', { error: (err as Error).message })
        return h.continue
      }
      ;(request.app as { rateLimit?: RateLimitState }).rateLimit = state
      if (state.exceeded) {
        // once per client and window: the first request over the limit
        if (group === 'token' && state.count === state.limit + 1)
          deps.explain?.record('rate-limit.polling', {
            clientId,
            endpoint: endpointOf(request),
            detail: `${state.limit} requests in ${deps.rateLimits()[group].window} s`,
          })
        throw tooManyRequests(state, deps.clock())
      }
      return h.continue
    })
    server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
      const state = (request.app as { rateLimit?: RateLimitState }).rateLimit
      if (!state) return h.continue
      const response = request.response
      for (const [name, value] of Object.entries(rateLimitHeaders(state))) {
        if ('isBoom' in response) response.output.headers[name] = value
        else response.header(name, value)
      }
      return h.continue
    })
  },
})
