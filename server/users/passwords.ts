import { randomBytes, timingSafeEqual } from 'node:crypto'
import { hasherThreads } from './hasher-threads.ts'

/** node:crypto's scrypt, run on the hashing threads (users/hasher-threads.ts), not libuv's pool. */
const scryptAsync = (
  password: string,
  salt: Uint8Array,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
): Promise<Buffer> => hasherThreads.scrypt(password, salt, keylen, options)

/** scrypt's cost (N, a power of two), block size (r) and parallelization (p). */
export interface ScryptParams {
  readonly N: number
  readonly r: number
  readonly p: number
}

/**
 * OWASP Password Storage Cheat Sheet (scrypt): "a minimum CPU/memory cost parameter of (2^17),
 * a minimum block size of 8 (1024 bytes), and a parallelization parameter of 1". The default
 * of `SCRYPT_N`/`SCRYPT_R`/`SCRYPT_P`; 128 MiB and a few hundred ms of CPU per hash.
 */
export const OWASP_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 }

/**
 * A lower cost for tests and the embedded conformance target only, which sign in hundreds of
 * times on a shared machine: never the default of a server someone can reach.
 */
export const TEST_SCRYPT: ScryptParams = { N: 2 ** 14, r: 8, p: 1 }

/** Bounds on a stored hash's parameters: a crafted `password_hash` cannot ask for gigabytes. */
const MAX = { N: 2 ** 20, r: 32, p: 16 }
const KEYLEN = 32

/**
 * Memory scrypt needs for these parameters (OpenSSL: 128·r·(N + 2) for V plus 128·r·p for B),
 * with 1 MiB to spare: the cap follows the parameters, so a stronger cost never fails with
 * "memory limit exceeded".
 */
export function maxmemFor({ N, r, p }: ScryptParams): number {
  return 128 * r * (N + 2) + 128 * r * p + 1024 * 1024
}

const validParams = ({ N, r, p }: ScryptParams): boolean =>
  Number.isInteger(N) &&
  Number.isInteger(r) &&
  Number.isInteger(p) &&
  N >= 2 &&
  N <= MAX.N &&
  (N & (N - 1)) === 0 &&
  r >= 1 &&
  r <= MAX.r &&
  p >= 1 &&
  p <= MAX.p

/** scrypt hash in the form `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(
  password: string,
  params: ScryptParams = OWASP_SCRYPT,
): Promise<string> {
  const salt = randomBytes(16)
  const key = await scryptAsync(password.normalize('NFKC'), salt, KEYLEN, {
    ...params,
    maxmem: maxmemFor(params),
  })
  return [
    'scrypt',
    params.N,
    params.r,
    params.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$')
}

/**
 * A hash of no password with the given parameters: verified against when the user is unknown,
 * so the time a sign-in takes does not tell whether the username exists.
 */
export function dummyHash(params: ScryptParams = OWASP_SCRYPT): string {
  return `scrypt$${params.N}$${params.r}$${params.p}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`
}

function parse(stored: string): (ScryptParams & { salt: string; hash: string }) | undefined {
  const parts = stored.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string]
  const params = { N: Number(n), r: Number(r), p: Number(p) }
  return validParams(params) ? { ...params, salt, hash } : undefined
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored)
  if (!parsed) return false
  const expected = Buffer.from(parsed.hash, 'base64url')
  if (expected.length === 0) return false
  const key = await scryptAsync(
    password.normalize('NFKC'),
    Buffer.from(parsed.salt, 'base64url'),
    expected.length,
    { N: parsed.N, r: parsed.r, p: parsed.p, maxmem: maxmemFor(parsed) },
  )
  return key.length === expected.length && timingSafeEqual(key, expected)
}

const sameCost = (a: ScryptParams, b: ScryptParams): boolean =>
  a.N === b.N && a.r === b.r && a.p === b.p

/**
 * Hashes a verification of `stored` costs at the `current` parameters: one when the stored hash
 * was made with them, two when it must be padded (see verifyPasswordAtCost).
 */
export function verificationWeight(stored: string, current: ScryptParams): 1 | 2 {
  const parsed = parse(stored)
  return parsed && sameCost(parsed, current) ? 1 : 2
}

/**
 * verifyPassword, taking at least as long as a hash at the `current` parameters: an unknown
 * user is checked against a dummy hash at the current cost, so a user whose stored hash
 * predates a change of `SCRYPT_N` (or whose hash cannot be read) would otherwise answer faster
 * or slower than an unknown name, telling an attacker which names exist until that user next
 * signs in. Such a hash is verified side by side with a dummy hash at the current cost, so the
 * answer comes after the slower of the two, as for an unknown user.
 */
export async function verifyPasswordAtCost(
  password: string,
  stored: string,
  current: ScryptParams,
): Promise<boolean> {
  if (verificationWeight(stored, current) === 1) return verifyPassword(password, stored)
  const [valid] = await Promise.all([
    verifyPassword(password, stored),
    verifyPassword(password, dummyHash(current)),
  ])
  return valid
}

/**
 * Whether a stored hash was made with other parameters than the configured ones (or is not a
 * scrypt hash this module reads): the login route then rehashes the password it has just
 * verified, so raising `SCRYPT_N` upgrades every user at their next successful sign-in.
 */
export function needsRehash(stored: string, params: ScryptParams): boolean {
  const parsed = parse(stored)
  return (
    !parsed ||
    parsed.N !== params.N ||
    parsed.r !== params.r ||
    parsed.p !== params.p ||
    Buffer.from(parsed.hash, 'base64url').length !== KEYLEN
  )
}

export { validParams as validScryptParams }
