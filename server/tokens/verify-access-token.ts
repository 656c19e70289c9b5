import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose'
import type { Deps } from '../deps.ts'
import { invalidToken } from '../errors.ts'
import type { StoredToken } from '../store/store.ts'

/** Longer strings are not tokens this server issued. */
export const MAX_TOKEN_LENGTH = 8192
/** RFC 7515 §7.1: three base64url segments, unpadded; anything else is another spelling. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

export interface VerifiedAccessToken {
  readonly payload: JWTPayload & { scope: string; client_id: string; sub: string; jti: string }
  readonly stored: StoredToken
}

/**
 * Verifies an access token as this server issued it (INTERFACE.md §5.6, RFC 9068 §4): RS256
 * only, a compact JWS of at most MAX_TOKEN_LENGTH, a published kid, typ at+jwt (so an ID token
 * is refused), iss, exp and iat (required), and a stored, unrevoked jti whose record holds the
 * same client, subject, scope, iat and exp. An expired token is invalid (revoking one is a no-op).
 * Throws invalid_token with a description that never contains the token.
 */
export async function verifyAccessToken(
  token: string,
  deps: Pick<Deps, 'keys' | 'clock' | 'config' | 'store'>,
): Promise<VerifiedAccessToken> {
  if (token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token))
    throw invalidToken('the access token is malformed')
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(token)
  } catch {
    throw invalidToken('the access token is malformed')
  }
  if (header.alg !== 'RS256') throw invalidToken('the access token is not signed with RS256')
  if (typeof header.kid !== 'string') throw invalidToken('the access token has no key id')
  const now = deps.clock()
  const key = await deps.keys.verificationKey(header.kid, now)
  if (!key) throw invalidToken('the access token was signed with an unknown key')
  let payload: JWTPayload
  const claims = {
    issuer: deps.config.baseUrl,
    typ: 'at+jwt',
    // RFC 9068 §2.2: exp and iat are required; a token without exp would never expire
    requiredClaims: ['exp', 'iat'],
    currentDate: new Date(now * 1000),
  }
  try {
    ;({ payload } = await jwtVerify(token, key, { ...claims, algorithms: ['RS256'] }))
  } catch (err) {
    const code = (err as { code?: string }).code
    throw invalidToken(
      code === 'ERR_JWT_EXPIRED' ? 'the access token has expired' : 'the access token is invalid',
      { cause: err },
    )
  }
  const { jti, sub, scope, client_id: clientId } = payload as Record<string, unknown>
  if (
    typeof jti !== 'string' ||
    typeof sub !== 'string' ||
    typeof scope !== 'string' ||
    typeof clientId !== 'string'
  ) {
    throw invalidToken('the access token is invalid')
  }
  if (payload.aud !== clientId) throw invalidToken('the access token is invalid')
  const stored = await deps.store.tokens.get(jti)
  // the token must carry the claims issued under its jti, not others signed under it later
  if (
    !stored ||
    stored.kind !== 'access' ||
    stored.clientId !== clientId ||
    stored.subject !== sub ||
    stored.scope !== scope ||
    stored.issuedAt !== payload.iat ||
    stored.expiresAt !== payload.exp
  )
    throw invalidToken('the access token is invalid')
  if (stored.revokedAt !== null) throw invalidToken('the access token was revoked')
  return { payload: { ...payload, jti, sub, scope, client_id: clientId }, stored }
}
