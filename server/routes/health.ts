import type { ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { temporarilyUnavailable } from '../errors.ts'

/**
 * Liveness (the process answers) and readiness (a real query reaches the store): a load
 * balancer takes an instance out while its database is unreachable.
 */
export const health = (deps: Pick<Deps, 'store' | 'log'>): ServerRoute[] => [
  {
    method: 'GET',
    path: '/health/live',
    handler: (_request, h) => h.response({ status: 'ok' }).header('cache-control', 'no-store'),
  },
  {
    method: 'GET',
    path: '/health/ready',
    handler: async (_request, h) => {
      try {
        await deps.store.ping()
        return h.response({ status: 'ready' }).header('cache-control', 'no-store')
      } catch (err) {
        deps.log('storage-unavailable', { error: (err as Error).message })
        // rendered by plugins/oauth-errors.ts: 503, no-store, the JSON error shape
        throw temporarilyUnavailable('the store is unreachable', {
          headers: { 'retry-after': '5' },
          fields: { status: 'unavailable' },
          cause: err,
        })
      }
    },
  },
]
