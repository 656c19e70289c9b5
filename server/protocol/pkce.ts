import { createHash, timingSafeEqual } from 'node:crypto'

/** RFC 7636 §4.1: code-verifier = 43*128unreserved. */
export const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/
/** RFC 7636 §4.2: S256 challenge = BASE64URL(SHA256(verifier)), 43 characters, no padding. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/

export const s256 = (verifier: string): string =>
  createHash('sha256').update(verifier, 'ascii').digest('base64url')

/** RFC 7636 §4.6: compares BASE64URL(SHA256(verifier)) with the stored challenge in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  const a = Buffer.from(s256(verifier))
  const b = Buffer.from(challenge)
  return a.length === b.length && timingSafeEqual(a, b)
}
