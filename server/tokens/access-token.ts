import { randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import type { Deps } from '../deps.ts'

export interface AccessTokenInput {
  readonly subject: string
  readonly clientId: string
  readonly scope: string
  readonly roles: readonly string[]
  readonly permissions: readonly string[]
  readonly orgId: string | undefined
  /** The code this token descends from (replay revocation). */
  readonly codeDigest: string | null
  /** The refresh token this token descends from (revocation cascade). */
  readonly parentId: string | null
}

/**
 * Mints an RS256 access token (INTERFACE.md §2.3, RFC 9068): header typ at+jwt and kid; claims
 * iss, sub, aud (the client), exp, iat, scope, roles, org_id, permissions, jti, client_id. Its
 * jti is stored so revocation can be honoured by introspection and user-info.
 */
export async function mintAccessToken(
  input: AccessTokenInput,
  deps: Pick<Deps, 'keys' | 'clock' | 'config' | 'store'>,
): Promise<{ token: string; jti: string; expiresIn: number }> {
  const now = deps.clock()
  const { kid, key } = await deps.keys.signingKey(now)
  const jti = randomUUID()
  const expiresIn = deps.config.accessTokenTtl
  const token = await new SignJWT({
    scope: input.scope,
    roles: [...input.roles],
    ...(input.orgId !== undefined ? { org_id: input.orgId } : {}),
    permissions: [...input.permissions],
    client_id: input.clientId,
  })
    .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid })
    .setIssuer(deps.config.baseUrl)
    .setSubject(input.subject)
    .setAudience(input.clientId)
    .setIssuedAt(now)
    .setExpirationTime(now + expiresIn)
    .setJti(jti)
    .sign(key)
  await deps.store.tokens.insert({
    id: jti,
    kind: 'access',
    clientId: input.clientId,
    subject: input.subject,
    scope: input.scope,
    issuedAt: now,
    expiresAt: now + expiresIn,
    revokedAt: null,
    codeDigest: input.codeDigest,
    parentId: input.parentId,
  })
  return { token, jti, expiresIn }
}
