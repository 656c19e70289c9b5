import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** SHA-256 hex digest: how codes, refresh tokens, session ids and client secrets are stored. */
export const sha256Hex = (value: string): string =>
  createHash('sha256').update(value, 'utf8').digest('hex')

/** A 256-bit random value, base64url (43 characters). */
export const randomToken = (): string => randomBytes(32).toString('base64url')

/** Constant-time comparison of two hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}
