import { invalidScope } from '../errors.ts'
import { formatScope, parseScope, USER_SCOPES, withinScope } from '../protocol/scope.ts'
import { mintAccessToken } from '../tokens/access-token.ts'
import { permissionsFor } from '../tokens/claims.ts'
import type { Grant } from './grant.ts'

/**
 * grant_type=client_credentials (RFC 6749 §4.4). The token describes the client: sub and aud
 * are its id (RFC 9068 §2.2), roles and permissions come from the client record. No refresh
 * token (§4.4.3), no ID token, and no user scope (openid, profile, email, offline_access).
 */
export const clientCredentials = {
  type: 'client_credentials',
  async handle({ client, params }, deps) {
    let scopes: readonly string[] = client.defaultScopes
    if (params.scope !== undefined) {
      const requested = parseScope(params.scope)
      if (!requested || requested.length === 0) throw invalidScope('scope is malformed')
      scopes = requested
    }
    if (scopes.some((s) => (USER_SCOPES as readonly string[]).includes(s))) {
      throw invalidScope('user scopes cannot be granted to a client acting for itself')
    }
    if (!withinScope(scopes, client.scopes))
      throw invalidScope('the requested scope is unknown or not allowed for this client')
    if (scopes.length === 0)
      throw invalidScope('no scope was requested and the client has no default scope')
    const scope = formatScope(scopes)
    const access = await mintAccessToken(
      {
        subject: client.id,
        clientId: client.id,
        scope,
        roles: client.clientRoles,
        permissions: permissionsFor(client, client.clientRoles),
        orgId: undefined,
        codeDigest: null,
        parentId: null,
      },
      deps,
    )
    return { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, scope }
  },
} satisfies Grant
