import type { Deps } from '../deps.ts'
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

const TOKEN_ENDPOINT = 'POST /auth/token'

/**
 * RFC 6749 §4.1.3: the code is bound to its client and to the authorize request's redirect_uri
 * (identical strings). The refusal for a request that differs in either.
 */
function bindingMismatch(
  stored: { clientId: string; redirectUri: string },
  clientId: string,
  redirectUri: string,
  deps: Pick<Deps, 'explain'>,
) {
  if (stored.clientId !== clientId)
    return invalidGrant('the authorization code was issued to another client')
  deps.explain?.record('code.redirect-uri-mismatch', {
    clientId,
    endpoint: TOKEN_ENDPOINT,
    detail: `authorize: ${stored.redirectUri}, token: ${redirectUri}`,
  })
  return invalidGrant(
    'redirect_uri does not match the authorization request: send the same redirect_uri string as the authorize request (RFC 6749 section 4.1.3)',
  )
}

/** grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.5-4.6, OIDC Core §3.1.3). */
export const authorizationCode = {
  type: 'authorization_code',
  async handle({ client, params }, deps) {
    const code = required(params, 'code')
    const redirectUri = required(params, 'redirect_uri')
    const { store, clock } = deps
    const now = clock()
    // one conditional write: of concurrent redemptions exactly one wins (CODE-04). Only a
    // request of the code's own client and redirect_uri can spend it: a mismatch is refused and
    // leaves the code to its rightful redemption
    const consumed = await store.codes.consume(sha256Hex(code), now, {
      clientId: client.id,
      redirectUri,
    })
    if (!consumed) throw invalidGrant('the authorization code is invalid')
    const { code: stored } = consumed
    if (consumed.unbound) throw bindingMismatch(stored, client.id, redirectUri, deps)
    if (!consumed.firstUse) {
      deps.explain?.record('code.reused', { clientId: client.id, endpoint: TOKEN_ENDPOINT })
      // RFC 6749 §4.1.2: a code used twice MUST be denied and SHOULD revoke its tokens
      await store.tokens.revokeByCode(stored.digest, now)
      throw invalidGrant(
        'the authorization code was already used, or spent by a redemption that failed; each code is redeemed once (RFC 6749 section 4.1.2), and any tokens issued from it are now revoked',
      )
    }
    // from here on the code is spent, so a failed attempt cannot be retried (RFC 9700 §4.8)
    if (stored.expiresAt <= now) throw invalidGrant('the authorization code has expired')
    // the store compared these when it spent the code; a store that did not (the self-test's
    // CODE-11 sabotage) still gets no tokens for a mismatch
    if (stored.clientId !== client.id || stored.redirectUri !== redirectUri)
      throw bindingMismatch(stored, client.id, redirectUri, deps)
    const verifier = params.code_verifier
    if (verifier !== undefined && (verifier.length < 43 || verifier.length > 128))
      deps.explain?.record('pkce.verifier-length', {
        clientId: client.id,
        endpoint: TOKEN_ENDPOINT,
        detail: `${verifier.length} characters`,
      })
    if (verifier === undefined || verifier === '')
      throw invalidGrant('code_verifier is required (PKCE)')
    // RFC 7636 §4.1: 43 to 128 unreserved characters
    if (!VERIFIER.test(verifier))
      throw invalidRequest(
        `code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 section 4.1); this one has ${verifier.length}`,
      )
    if (!verifierMatches(verifier, stored.codeChallenge))
      throw invalidGrant(
        'code_verifier does not match the code_challenge: BASE64URL(SHA-256(code_verifier)) must equal the code_challenge of the authorize request (RFC 7636 section 4.6)',
      )
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
