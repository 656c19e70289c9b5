import { createHash } from 'node:crypto'
import { SignJWT } from 'jose'
import type { Deps } from '../deps.ts'

/** OIDC Core §3.1.3.6: at_hash is the base64url of the left half of SHA-256(access_token). */
export const atHash = (accessToken: string): string =>
  createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url')

/**
 * Mints an RS256 ID token (OIDC Core §2): iss, sub, aud, exp, iat, auth_time, nonce when the
 * request had one, at_hash, and the user claims the granted scopes allow (INTERFACE.md §2.4).
 */
export async function mintIdToken(
  input: {
    readonly clientId: string
    readonly claims: Readonly<Record<string, string | number | boolean>> & { readonly sub: string }
    readonly authTime: number
    readonly nonce: string | null
    readonly accessToken: string
  },
  deps: Pick<Deps, 'keys' | 'clock' | 'config'>,
): Promise<string> {
  const now = deps.clock()
  const { kid, key } = await deps.keys.signingKey(now)
  const { sub, ...claims } = input.claims
  return new SignJWT({
    ...claims,
    auth_time: input.authTime,
    ...(input.nonce !== null ? { nonce: input.nonce } : {}),
    at_hash: atHash(input.accessToken),
  })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid })
    .setIssuer(deps.config.baseUrl)
    .setSubject(sub)
    .setAudience(input.clientId)
    .setIssuedAt(now)
    .setExpirationTime(now + deps.config.idTokenTtl)
    .sign(key)
}
