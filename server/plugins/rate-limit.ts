import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi'
import { windowStart as startOf, type RateLimitGroup } from '../config.ts'
import type { Deps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { endpointOf } from '../explain/findings.ts'
import { clientAddress } from '../protocol/client-address.ts'

declare module '@hapi/hapi' {
  interface PluginSpecificConfiguration {
    /** The rate-limit group of the route's requests (limitedAs). */
    'rate-limit'?: { readonly group: RateLimitGroup }
  }
}

/**
 * A route's rate-limit group, declared on the route (`options.plugins`): the group follows the
 * handler wherever it is mounted (the RP test issuers reuse the token, user-info, introspection
 * and revocation handlers under /rp/{test}/…, and their client authentication must be limited
 * exactly as at /auth/token), never the literal path.
 */
export const limitedAs = (group: RateLimitGroup): { 'rate-limit': { group: RateLimitGroup } } => ({
  'rate-limit': { group },
})

/** The group whose limit a request counts against, if its route declares one. */
export function groupOf(request: Request): RateLimitGroup | undefined {
  return request.route.settings.plugins?.['rate-limit']?.group
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
  const limits = deps.rateLimits()[group]
  const { limit, window } = limits
  const now = deps.clock()
  const windowStart = startOf(now, limits)
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

/** The groups of the endpoints that authenticate a client (client_secret_post). */
export const CLIENT_GROUPS: ReadonlySet<RateLimitGroup> = new Set(['token', 'introspect', 'revoke'])

type ClientLimitDeps = Pick<Deps, 'store' | 'clock' | 'config' | 'log' | 'rateLimits'>

/**
 * The counter a failed client authentication is charged to: its source address and the
 * client_id it names. Charged to the client_id alone, anyone could lock a client out by
 * sending wrong secrets in its name (RFC 6819 §5.1.4.2.3); the client's own requests from its
 * own address are counted apart (`client:`), once authenticated.
 */
function failureKey(request: Request, clientId: string | undefined, deps: ClientLimitDeps): string {
  return `authfail:${clientAddress(request, deps.config.trustProxy)}:${clientId ?? ''}`
}

/**
 * A source's failures across every client_id it names may reach this multiple of the group's
 * limit: enough for a few misconfigured clients behind one address, too few to try a guessed
 * secret against every client.
 */
export const SOURCE_FAILURES_FACTOR = 10

/** The per-source total beside the per-source-and-client counter. */
function sourceKey(request: Request, deps: ClientLimitDeps): string {
  return `authfail:${clientAddress(request, deps.config.trustProxy)}`
}

/** The limit's state when this source has used up its failures for `clientId`, else undefined. */
async function failuresUsedUp(
  request: Request,
  group: RateLimitGroup,
  clientId: string | undefined,
  deps: ClientLimitDeps,
): Promise<RateLimitState | undefined> {
  const limits = deps.rateLimits()[group]
  const { limit, window } = limits
  const now = deps.clock()
  const windowStart = startOf(now, limits)
  const used = { limit, remaining: 0, reset: windowStart + window }
  try {
    const failures = await deps.store.rateLimits.count(
      `${group}:${failureKey(request, clientId, deps)}`,
      windowStart,
    )
    if (failures >= limit) return used
    const total = sourceKey(request, deps)
    const all = await deps.store.rateLimits.count(`${group}:${total}`, windowStart)
    return all >= limit * SOURCE_FAILURES_FACTOR ? used : undefined
  } catch (err) {
    deps.log('rate-limit-unavailable', { error: (err as Error).message })
    return undefined
  }
}

/**
 * Counts a token, introspection or revocation request once its client authentication is
 * decided: an authenticated one against its client_id, a failed one against its source address
 * and the client_id it named. Throws the 429 when the count passes the limit.
 */
export async function countClientAuthentication(
  request: Request,
  clientId: string | undefined,
  authenticated: boolean,
  deps: ClientLimitDeps & Pick<Deps, 'explain'>,
): Promise<void> {
  const group = groupOf(request)
  if (!group || !CLIENT_GROUPS.has(group)) return
  const id = clientId?.slice(0, 255)
  const key = authenticated ? `client:${id ?? ''}` : failureKey(request, id, deps)
  let state
  try {
    state = await countRequest(group, key, deps)
  } catch (err) {
    deps.log('rate-limit-unavailable', { error: (err as Error).message })
    return
  }
  ;(request.app as { rateLimit?: RateLimitState }).rateLimit = state
  const total = authenticated ? undefined : sourceKey(request, deps)
  if (total !== undefined && !state.exceeded) {
    try {
      const all = await countRequest(group, total, deps)
      if (all.count > all.limit * SOURCE_FAILURES_FACTOR) {
        const used = { limit: state.limit, remaining: 0, reset: state.reset }
        ;(request.app as { rateLimit?: RateLimitState }).rateLimit = used
        throw tooManyRequests(used, deps.clock())
      }
    } catch (err) {
      if (err instanceof OAuthError) throw err
      deps.log('rate-limit-unavailable', { error: (err as Error).message })
    }
  }
  if (!state.exceeded) return
  // once per client and window: the first authenticated token request over the limit
  if (authenticated && group === 'token' && state.count === state.limit + 1)
    deps.explain?.record('rate-limit.polling', {
      clientId: id,
      endpoint: endpointOf(request),
      detail: `${state.limit} requests in ${deps.rateLimits()[group].window} s`,
    })
  throw tooManyRequests(state, deps.clock())
}

/**
 * Rate limiting of the API endpoints (INTERFACE.md §7, §8; ARCHITECTURE.md): token,
 * introspection and revocation counted per authenticated client_id, and their failed client
 * authentications per source address and client_id, and per source address in all
 * (countClientAuthentication); user-info and the public documents per IP. X-RateLimit-Limit, -Remaining and -Reset go on every response of those endpoints.
 */
export const rateLimit = (
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'log' | 'rateLimits' | 'explain'>,
): Plugin<undefined> => ({
  name: 'rate-limit',
  register(server) {
    server.ext('onPreHandler', async (request: Request, h: ResponseToolkit) => {
      const group = groupOf(request)
      if (!group) return h.continue
      const payload = request.payload as Record<string, unknown> | null
      const clientId =
        typeof payload?.client_id === 'string' ? payload.client_id.slice(0, 255) : undefined
      if (CLIENT_GROUPS.has(group)) {
        // counted once the client is authenticated or not (countClientAuthentication); here
        // only a source whose failures for this client_id are used up is refused, before its
        // secret is checked
        const blocked = await failuresUsedUp(request, group, clientId, deps)
        if (blocked) {
          ;(request.app as { rateLimit?: RateLimitState }).rateLimit = blocked
          throw tooManyRequests(blocked, deps.clock())
        }
        return h.continue
      }
      const key = `ip:${clientAddress(request, deps.config.trustProxy)}`
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
