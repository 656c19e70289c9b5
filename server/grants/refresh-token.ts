import { invalidGrant, invalidScope } from '../errors.ts'
import { sha256Hex } from '../protocol/digest.ts'
import { required } from '../protocol/params.ts'
import { formatScope, parseScope, withinScope } from '../protocol/scope.ts'
import { mintAccessToken } from '../tokens/access-token.ts'
import { permissionsFor } from '../tokens/claims.ts'
import type { Grant } from './grant.ts'

/**
 * grant_type=refresh_token (RFC 6749 §6). Not rotated (INTERFACE.md §2.2: no new refresh
 * token). A narrower scope changes only the new access token; an omitted scope is the whole
 * original grant; anything outside the grant is invalid_scope. Roles and permissions are
 * re-read, so changes take effect at the next refresh.
 */
export const refreshToken = {
  type: 'refresh_token',
  async handle({ client, params }, deps) {
    const token = required(params, 'refresh_token')
    const { store, clock } = deps
    const now = clock()
    const stored = token.length <= 512 ? await store.tokens.get(sha256Hex(token)) : undefined
    if (!stored || stored.kind !== 'refresh') throw invalidGrant('the refresh token is invalid')
    if (stored.revokedAt !== null) throw invalidGrant('the refresh token was revoked')
    if (stored.expiresAt <= now) throw invalidGrant('the refresh token has expired')
    // RFC 6749 §10.4: bound to the client it was issued to
    if (stored.clientId !== client.id) {
      deps.explain?.record('refresh.other-client', {
        clientId: client.id,
        endpoint: 'POST /auth/token',
        detail: `issued to ${stored.clientId}`,
      })
      throw invalidGrant(
        'the refresh token was issued to another client; a refresh token is bound to its client (RFC 6749 section 6)',
      )
    }
    const granted = parseScope(stored.scope) ?? []
    let scope = stored.scope
    if (params.scope !== undefined) {
      const requested = parseScope(params.scope)
      if (!requested || requested.length === 0 || !withinScope(requested, granted)) {
        throw invalidScope('the requested scope exceeds the original grant')
      }
      scope = formatScope(requested)
    }
    const user = await store.users.get(stored.subject)
    if (!user) throw invalidGrant('the user of this refresh token no longer exists')
    const roles = await store.users.roles(user.id, client.id)
    const access = await mintAccessToken(
      {
        subject: user.id,
        clientId: client.id,
        scope,
        roles,
        permissions: permissionsFor(client, roles),
        orgId: user.orgId,
        codeDigest: stored.codeDigest,
        parentId: stored.id,
      },
      deps,
    )
    return { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, scope }
  },
} satisfies Grant
