import { invalidGrant, invalidRequest } from '../errors.ts'
import { sha256Hex } from '../protocol/digest.ts'
import { required } from '../protocol/params.ts'
import { VERIFIER, verifierMatches } from '../protocol/pkce.ts'
import { parseScope } from '../protocol/scope.ts'
import { mintAccessToken } from '../tokens/access-token.ts'
import { permissionsFor, userClaims } from '../tokens/claims.ts'
import { mintIdToken } from '../tokens/id-token.ts'
import { issueRefreshToken } from '../tokens/refresh-token.ts'
import type { Grant } from './grant.ts'

/** grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.5-4.6, OIDC Core §3.1.3). */
export const authorizationCode = {
  type: 'authorization_code',
  async handle({ client, params }, deps) {
    const code = required(params, 'code')
    const redirectUri = required(params, 'redirect_uri')
    const { store, clock } = deps
    const now = clock()
    // one conditional write: of concurrent redemptions exactly one wins (CODE-04)
    const consumed = await store.codes.consume(sha256Hex(code), now)
    if (!consumed) throw invalidGrant('the authorization code is invalid')
    const { code: stored, firstUse } = consumed
    if (!firstUse) {
      // RFC 6749 §4.1.2: a code used twice MUST be denied and SHOULD revoke its tokens
      await store.tokens.revokeByCode(stored.digest, now)
      throw invalidGrant('the authorization code was already used')
    }
    // from here on the code is spent, so a failed attempt cannot be retried (RFC 9700 §4.8)
    if (stored.expiresAt <= now) throw invalidGrant('the authorization code has expired')
    if (stored.clientId !== client.id)
      throw invalidGrant('the authorization code was issued to another client')
    // RFC 6749 §4.1.3: identical to the authorization request's redirect_uri
    if (stored.redirectUri !== redirectUri)
      throw invalidGrant('redirect_uri does not match the authorization request')
    const verifier = params.code_verifier
    if (verifier === undefined || verifier === '')
      throw invalidGrant('code_verifier is required (PKCE)')
    // RFC 7636 §4.1: 43 to 128 unreserved characters
    if (!VERIFIER.test(verifier))
      throw invalidRequest('code_verifier must be 43 to 128 unreserved characters')
    if (!verifierMatches(verifier, stored.codeChallenge))
      throw invalidGrant('code_verifier does not match the code_challenge')
    const user = await store.users.get(stored.userId)
    if (!user) throw invalidGrant('the user of this authorization code no longer exists')

    const scopes = parseScope(stored.scope) ?? []
    const roles = await store.users.roles(user.id, client.id)
    const refresh = scopes.includes('offline_access')
      ? await issueRefreshToken(
          { clientId: client.id, subject: user.id, scope: stored.scope, codeDigest: stored.digest },
          deps,
        )
      : undefined
    const access = await mintAccessToken(
      {
        subject: user.id,
        clientId: client.id,
        scope: stored.scope,
        roles,
        permissions: permissionsFor(client, roles),
        orgId: user.orgId,
        codeDigest: stored.digest,
        parentId: refresh?.id ?? null,
      },
      deps,
    )
    const idToken = scopes.includes('openid')
      ? await mintIdToken(
          {
            clientId: client.id,
            claims: userClaims(user, scopes),
            authTime: stored.authTime,
            nonce: stored.nonce,
            accessToken: access.token,
          },
          deps,
        )
      : undefined
    return {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      ...(refresh ? { refresh_token: refresh.token } : {}),
      ...(idToken ? { id_token: idToken } : {}),
      scope: stored.scope,
    }
  },
} satisfies Grant
