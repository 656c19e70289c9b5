import type { ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { findOwnActiveToken } from '../tokens/lookup.ts'
import { formPayload } from './token.ts'
import { limitedAs } from '../plugins/rate-limit.ts'

/** One answer for every authenticated request, so tokens cannot be probed (INTERFACE.md §3). */
export const REVOKED_MESSAGE = 'the token is no longer active'

/**
 * POST /auth/revoke (RFC 7009). Access and refresh tokens; revoking a refresh token also
 * revokes the access tokens minted from it (§2.1). Another client's, unknown, expired or
 * already revoked tokens get the same 200 and nothing changes.
 */
export const revoke = (deps: Deps): ServerRoute => ({
  method: 'POST',
  path: '/auth/revoke',
  options: {
    plugins: limitedAs('revoke'),
    payload: formPayload,
    handler: async (request, h) => {
      // RFC 7009 §2.1: a client may revoke only its own tokens
      const found = await findOwnActiveToken(request, deps)
      if (found) await deps.store.tokens.revoke(found.stored.id, deps.clock())
      return h
        .response({ message: REVOKED_MESSAGE })
        .type('application/json')
        .header('cache-control', 'no-store')
    },
  },
})
