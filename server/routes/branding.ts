import type { ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { invalidRequest, OAuthError } from '../errors.ts'
import { rawParams, single } from '../protocol/params.ts'
import { limitedAs } from '../plugins/rate-limit.ts'

/**
 * GET /auth/branding?client_id= (INTERFACE.md §4.7): the public branding record of §2.6 and
 * nothing else (no secret, no redirect URIs). Cacheable for a short time; the URL holds the
 * client_id, so caches keep one entry per client.
 */
export const branding = (deps: Pick<Deps, 'store'>): ServerRoute => ({
  method: 'GET',
  path: '/auth/branding',
  options: {
    plugins: limitedAs('public'),
    handler: async (request, h) => {
      const clientId = single(rawParams(request.query), 'client_id')
      if (clientId === undefined) throw invalidRequest('missing required parameter client_id')
      const record =
        clientId.length <= 255 ? await deps.store.clients.branding(clientId) : undefined
      if (!record) throw new OAuthError('invalid_request', 'unknown client', { status: 404 })
      const { logo_url, brand_color, application_name, privacy_policy_url, terms_of_service_url } =
        record
      return h
        .response({
          logo_url,
          brand_color,
          application_name,
          privacy_policy_url,
          terms_of_service_url,
        })
        .type('application/json')
        .header('cache-control', 'public, max-age=300')
    },
  },
})
