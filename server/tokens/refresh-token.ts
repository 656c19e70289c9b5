import type { Deps } from '../deps.ts'
import { randomToken, sha256Hex } from '../protocol/digest.ts'

/**
 * Issues an opaque refresh token: 256 random bits, stored only as its SHA-256 digest, bound to
 * its client, valid for `refreshTokenTtl` (30 days by default).
 */
export async function issueRefreshToken(
  input: { clientId: string; subject: string; scope: string; codeDigest: string | null },
  deps: Pick<Deps, 'store' | 'clock' | 'config'>,
): Promise<{ token: string; id: string }> {
  const token = randomToken()
  const id = sha256Hex(token)
  const now = deps.clock()
  await deps.store.tokens.insert({
    id,
    kind: 'refresh',
    clientId: input.clientId,
    subject: input.subject,
    scope: input.scope,
    issuedAt: now,
    expiresAt: now + deps.config.refreshTokenTtl,
    revokedAt: null,
    codeDigest: input.codeDigest,
    parentId: null,
  })
  return { token, id }
}
