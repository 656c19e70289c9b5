import { createHash, randomBytes } from 'node:crypto'
import type { Deps, Fault } from '../deps.ts'
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
  const code = faultyCode(request, user, deps.faults) ?? randomToken()
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

/** The codes of CODE-10's test-only faults, each weak in one way; undefined without them. */
function faultyCode(
  request: AuthorizationRequest,
  user: { userId: string; authTime: number },
  faults: ReadonlySet<Fault>,
): string | undefined {
  // 32 random bits behind a fixed prefix, long enough to look fine
  if (faults.has('weak-codes')) return `code-${randomBytes(4).toString('hex')}-000000000000`
  // 88 random bits in 15 characters
  if (faults.has('short-codes')) return randomBytes(11).toString('base64url')
  // derived from the sign-in, so every authorization of one session gets the same code (the
  // store keeps the first: store/faulty-store.ts)
  if (faults.has('codes-repeat-per-sign-in'))
    return createHash('sha256')
      .update(`${request.clientId}:${user.userId}:${user.authTime}`)
      .digest('base64url')
  return undefined
}
