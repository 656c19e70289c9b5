import { randomBytes } from 'node:crypto'
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
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'faults'>,
): Promise<string> {
  // test-only fault (CODE-10): 32 random bits behind a fixed prefix, long enough to look fine
  const code = deps.faults.has('weak-codes')
    ? `code-${randomBytes(4).toString('hex')}-000000000000`
    : randomToken()
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
