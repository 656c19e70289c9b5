import type { ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { limitedAs } from '../plugins/rate-limit.ts'

/** The JWK Set (INTERFACE.md §2.8): public members only, every published key. */
export const jwks = ({ keys, clock }: Pick<Deps, 'keys' | 'clock'>): ServerRoute => ({
  method: 'GET',
  path: '/.well-known/jwks.json',
  options: {
    plugins: limitedAs('public'),
    handler: async (_request, h) =>
      h
        .response(await keys.jwks(clock()))
        .type('application/json')
        .header('cache-control', 'public, max-age=60'),
  },
})
