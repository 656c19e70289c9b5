import type { Deps } from '../deps.ts'
import { randomToken, sha256Hex } from '../protocol/digest.ts'
import type { AuthorizationRequest } from '../protocol/authorization-request.ts'
import { formatScope } from '../protocol/scope.ts'

/**
 * Issues an authorization code: 256 random bits (RFC 6749 §10.10), stored only as a digest,
 * bound to client, redirect_uri, PKCE challenge, scope, nonce, user and auth_time, and valid
 * for `codeTtl` seconds (60 by default).
 */
export async function issueCode(
  request: AuthorizationRequest,
  user: { userId: string; authTime: number },
  deps: Pick<Deps, 'store' | 'clock' | 'config'>,
): Promise<string> {
  const code = randomToken()
  const now = deps.clock()
  await deps.store.codes.insert({
    digest: sha256Hex(code),
    clientId: request.clientId,
    userId: user.userId,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    scope: formatScope(request.scope),
    nonce: request.nonce ?? null,
    authTime: user.authTime,
    expiresAt: now + deps.config.codeTtl,
  })
  return code
}
