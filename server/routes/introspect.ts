import type { ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { findOwnActiveToken } from '../tokens/lookup.ts'
import { formPayload } from './token.ts'
import { limitedAs } from '../plugins/rate-limit.ts'

/**
 * POST /auth/introspect (RFC 7662). The caller authenticates (client_secret_post) and sees only
 * tokens issued to it: anything else, expired, revoked, unknown or malformed is exactly
 * `{"active":false}` (§2.2; ARCHITECTURE.md).
 */
export const introspect = (deps: Deps): ServerRoute => ({
  method: 'POST',
  path: '/auth/introspect',
  options: {
    plugins: limitedAs('introspect'),
    payload: formPayload,
    handler: async (request, h) => {
      const found = await findOwnActiveToken(request, deps)
      const respond = (body: object) =>
        h
          .response(body)
          .type('application/json')
          .header('cache-control', 'no-store')
          .header('pragma', 'no-cache')
      if (!found) return respond({ active: false })
      const { stored } = found
      return respond({
        active: true,
        scope: stored.scope,
        client_id: stored.clientId,
        token_type: found.kind === 'access' ? 'Bearer' : 'refresh_token',
        exp: stored.expiresAt,
        iat: stored.issuedAt,
        sub: stored.subject,
        ...(found.kind === 'access'
          ? { aud: stored.clientId, iss: deps.config.baseUrl, jti: stored.id }
          : {}),
      })
    },
  },
})
