import type { ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'

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
        return h
          .response({
            status: 'unavailable',
            error: 'temporarily_unavailable',
            error_description: 'the store is unreachable',
          })
          .code(503)
          .header('cache-control', 'no-store')
          .header('retry-after', '5')
      }
    },
  },
]
