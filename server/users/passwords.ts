import { randomBytes, timingSafeEqual } from 'node:crypto'
import { hasherThreads } from './hasher-threads.ts'

/** scrypt's cost (N, a power of two), block size (r) and parallelization (p). */
export interface ScryptParams {
  readonly N: number
  readonly r: number
  readonly p: number
}

/** Argon2id's memory (KiB), passes (time) and lanes (parallelism), RFC 9106 §3.1's m, t, p. */
export interface Argon2Params {
  readonly memory: number
  readonly time: number
  readonly parallelism: number
}

/** The algorithm and cost new password hashes are made with (`PASSWORD_HASH`, server/config.ts). */
export type PasswordHashing =
  | ({ readonly algorithm: 'argon2id' } & Argon2Params)
  | ({ readonly algorithm: 'scrypt' } & ScryptParams)

/**
 * OWASP Password Storage Cheat Sheet (Argon2id): "Use Argon2id with a minimum configuration of
 * 19 MiB of memory, an iteration count of 2, and 1 degree of parallelism." The default of
 * `ARGON2_MEMORY`/`ARGON2_TIME`/`ARGON2_PARALLELISM`: 19 MiB and tens of ms of CPU per hash.
 */
export const OWASP_ARGON2ID: Argon2Params = { memory: 19456, time: 2, parallelism: 1 }

/**
 * The cheat sheet's other Argon2id configurations, which "provide an equal level of defense,
 * and the only difference is a trade off between CPU and RAM usage" (memory KiB, passes): a
 * cost at least one of them is at OWASP's minimum.
 */
export const OWASP_ARGON2ID_EQUIVALENTS: readonly Pick<Argon2Params, 'memory' | 'time'>[] = [
  { memory: 47104, time: 1 },
  { memory: 19456, time: 2 },
  { memory: 12288, time: 3 },
  { memory: 9216, time: 4 },
  { memory: 7168, time: 5 },
]

/** Whether an Argon2id cost is at least one of OWASP's equal-defence minimum configurations. */
export const meetsOwaspArgon2id = ({ memory, time, parallelism }: Argon2Params): boolean =>
  parallelism >= 1 && OWASP_ARGON2ID_EQUIVALENTS.some((c) => memory >= c.memory && time >= c.time)

/**
 * OWASP Password Storage Cheat Sheet (scrypt): "a minimum CPU/memory cost parameter of (2^17),
 * a minimum block size of 8 (1024 bytes), and a parallelization parameter of 1". The default
 * of `SCRYPT_N`/`SCRYPT_R`/`SCRYPT_P` (with `PASSWORD_HASH=scrypt`); 128 MiB and a few hundred
 * ms of CPU per hash.
 */
export const OWASP_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 }

/**
 * A lower scrypt cost for the tests of the scrypt path only: never the default of a server
 * someone can reach (the default algorithm, Argon2id at OWASP's minimum, is cheaper still).
 */
export const TEST_SCRYPT: ScryptParams = { N: 2 ** 14, r: 8, p: 1 }

/** What new hashes are made with unless configured otherwise: Argon2id at OWASP's minimum. */
export const DEFAULT_PASSWORD_HASHING: PasswordHashing = {
  algorithm: 'argon2id',
  ...OWASP_ARGON2ID,
}

/**
 * Bounds on a stored hash's parameters: a crafted `password_hash` cannot ask for gigabytes or
 * minutes. The configuration's own bounds (server/config.ts) stay within them, so a configured
 * cost always verifies.
 */
const MAX = { N: 2 ** 20, r: 32, p: 16 }
export const MAX_ARGON2ID: Argon2Params = { memory: 256 * 1024, time: 10, parallelism: 16 }
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

/**
 * Argon2id parameters a stored hash may ask for: at least 8 KiB per lane (RFC 9106 §3.1: m is
 * "an integer number of kibibytes from 8*p to 2^(32)-1"), and within MAX_ARGON2ID.
 */
const validArgon2Params = ({ memory, time, parallelism }: Argon2Params): boolean =>
  Number.isInteger(memory) &&
  Number.isInteger(time) &&
  Number.isInteger(parallelism) &&
  parallelism >= 1 &&
  parallelism <= MAX_ARGON2ID.parallelism &&
  memory >= 8 * parallelism &&
  memory <= MAX_ARGON2ID.memory &&
  time >= 1 &&
  time <= MAX_ARGON2ID.time

/**
 * The PHC string format's base64 (standard alphabet, no padding): the bytes of `text` when it
 * is the canonical encoding of between `min` and `max` bytes, else undefined. Canonical, so
 * the library's own stricter decoder never meets a string this module accepted.
 */
function phcBase64(text: string, min: number, max: number): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]+$/.test(text)) return undefined
  const bytes = Buffer.from(text, 'base64')
  if (bytes.length < min || bytes.length > max) return undefined
  return bytes.toString('base64').replace(/=+$/, '') === text ? bytes : undefined
}

type Parsed =
  | ({ readonly algorithm: 'scrypt'; readonly salt: string; readonly hash: string } & ScryptParams)
  | ({ readonly algorithm: 'argon2id'; readonly hashLength: number } & Argon2Params)

function parseScrypt(stored: string): Parsed | undefined {
  const parts = stored.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string]
  const params = { N: Number(n), r: Number(r), p: Number(p) }
  return validParams(params) ? { algorithm: 'scrypt', ...params, salt, hash } : undefined
}

/**
 * An Argon2id hash in the PHC string format the library writes,
 * `$argon2id$v=19$m=M,t=T,p=P$SALT$HASH`: version 0x13, the three parameters in that order and
 * nothing else, a salt of 8 to 48 bytes (RFC 9106 §3.1: "Salt S ... 16 bytes is RECOMMENDED")
 * and a hash of 16 to 64 bytes.
 */
function parseArgon2id(stored: string): Parsed | undefined {
  const m = /^\$argon2id\$v=19\$(m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,3}))\$([^$]+)\$([^$]+)$/.exec(
    stored,
  )
  if (!m) return undefined
  const [, written = '', memory, time, parallelism, salt = '', hash = ''] = m
  const params = { memory: Number(memory), time: Number(time), parallelism: Number(parallelism) }
  // decimal without leading zeros, as the library writes them
  if (`m=${params.memory},t=${params.time},p=${params.parallelism}` !== written) return undefined
  if (!validArgon2Params(params) || !phcBase64(salt, 8, 48)) return undefined
  const key = phcBase64(hash, 16, 64)
  return key ? { algorithm: 'argon2id', ...params, hashLength: key.length } : undefined
}

const parse = (stored: string): Parsed | undefined =>
  stored.startsWith('$argon2id$') ? parseArgon2id(stored) : parseScrypt(stored)

/** Whether `stored` is a hash this module verifies (an Argon2id or scrypt hash within bounds). */
export const isReadableHash = (stored: string): boolean => parse(stored) !== undefined

/**
 * A new hash of `password`: Argon2id in the PHC string format (the default), or
 * `scrypt$N$r$p$salt$hash` (base64url). Either runs on the hashing threads
 * (users/hasher-threads.ts), not libuv's pool.
 */
export async function hashPassword(
  password: string,
  hashing: PasswordHashing = DEFAULT_PASSWORD_HASHING,
): Promise<string> {
  if (hashing.algorithm === 'argon2id')
    return hasherThreads.argon2id(password.normalize('NFKC'), {
      memoryCost: hashing.memory,
      timeCost: hashing.time,
      parallelism: hashing.parallelism,
      outputLen: KEYLEN,
    })
  const params = { N: hashing.N, r: hashing.r, p: hashing.p }
  const salt = randomBytes(16)
  const key = await hasherThreads.scrypt(password.normalize('NFKC'), salt, KEYLEN, {
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
 * A hash of no password with the given algorithm and cost: verified against when the user is
 * unknown, so the time a sign-in takes does not tell whether the username exists.
 */
export function dummyHash(hashing: PasswordHashing = DEFAULT_PASSWORD_HASHING): string {
  if (hashing.algorithm === 'argon2id')
    return `$argon2id$v=19$m=${hashing.memory},t=${hashing.time},p=${hashing.parallelism}$${'A'.repeat(22)}$${'A'.repeat(43)}`
  return `scrypt$${hashing.N}$${hashing.r}$${hashing.p}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored)
  if (!parsed) return false
  // the library reads the parameters from the string this module has bounded, and compares
  // in constant time
  if (parsed.algorithm === 'argon2id')
    return hasherThreads.argon2idVerify(stored, password.normalize('NFKC'))
  const expected = Buffer.from(parsed.hash, 'base64url')
  if (expected.length === 0) return false
  const key = await hasherThreads.scrypt(
    password.normalize('NFKC'),
    Buffer.from(parsed.salt, 'base64url'),
    expected.length,
    { N: parsed.N, r: parsed.r, p: parsed.p, maxmem: maxmemFor(parsed) },
  )
  return key.length === expected.length && timingSafeEqual(key, expected)
}

/** Whether a stored hash was made with exactly the configured algorithm and cost. */
function sameCost(parsed: Parsed | undefined, current: PasswordHashing): boolean {
  if (!parsed || parsed.algorithm !== current.algorithm) return false
  if (parsed.algorithm === 'argon2id' && current.algorithm === 'argon2id')
    return (
      parsed.memory === current.memory &&
      parsed.time === current.time &&
      parsed.parallelism === current.parallelism
    )
  return (
    parsed.algorithm === 'scrypt' &&
    current.algorithm === 'scrypt' &&
    parsed.N === current.N &&
    parsed.r === current.r &&
    parsed.p === current.p
  )
}

/** The algorithm and cost a readable stored hash was made with. */
function costOf(parsed: Parsed): PasswordHashing {
  return parsed.algorithm === 'argon2id'
    ? {
        algorithm: 'argon2id',
        memory: parsed.memory,
        time: parsed.time,
        parallelism: parsed.parallelism,
      }
    : { algorithm: 'scrypt', N: parsed.N, r: parsed.r, p: parsed.p }
}

/**
 * The part of a stored hash that names its algorithm and cost and nothing of the password: all
 * but its last two `$`-separated members (salt and hash) in both formats. The store lists these
 * (UserRepository.hashCosts) so the server knows every cost a sign-in may meet.
 */
export const hashCostPrefix = (stored: string): string => stored.split('$').slice(0, -2).join('$')

/**
 * Every algorithm and cost a failed sign-in must take, whatever the user: the configured one,
 * and each other one still stored (`prefixes`, from hashCostPrefix; unreadable ones ignored),
 * each once. With only the configured one stored (a new deployment, or every user rehashed
 * and the server restarted), that is one hash.
 */
export function paddingCosts(
  current: PasswordHashing,
  prefixes: Iterable<string>,
): PasswordHashing[] {
  const costs: PasswordHashing[] = [current]
  for (const prefix of prefixes) {
    const parsed = parse(`${prefix}$${'A'.repeat(22)}$${'A'.repeat(43)}`)
    if (parsed && !costs.some((c) => sameCost(parsed, c))) costs.push(costOf(parsed))
  }
  return costs
}

/**
 * The dummy hashes a verification of `stored` runs beside it: one for each of `costs` (the
 * configured cost first, then every other cost still stored: paddingCosts) but the stored
 * hash's own, which the real verification stands for.
 */
function padding(stored: string, costs: readonly PasswordHashing[]): PasswordHashing[] {
  const parsed = parse(stored)
  const own = parsed ? costs.findIndex((c) => sameCost(parsed, c)) : -1
  return costs.filter((_, i) => i !== own)
}

/**
 * Hashes a verification of `stored` runs (see verifyPasswordAtCost): the stored one and a dummy
 * for each other cost in `costs` (by default just the configured one).
 */
export function verificationWeight(
  stored: string,
  current: PasswordHashing,
  costs: readonly PasswordHashing[] = [current],
): number {
  return 1 + padding(stored, costs.length > 0 ? costs : [current]).length
}

/**
 * verifyPassword, taking as long as a verification of any user's hash: the stored hash is
 * verified side by side with a dummy hash at each other cost a sign-in may meet (`costs`: the
 * configured algorithm and cost first, then every other one still stored, paddingCosts), so an
 * unknown name (a dummy hash at the configured cost), a user whose hash predates a change of
 * algorithm or cost, and a user whose hash is current all run the same hashes and answer after
 * the slowest of them. Without the stored costs, a user still on scrypt at OWASP's N=2^17 after
 * the default became Argon2id would take about 30 × an unknown name's time, telling an
 * attacker which names exist until that user signs in again (issue 33). The price: while such
 * a hash is stored, every failed sign-in costs that hash too, until the users have signed in
 * and the server has started again.
 */
export async function verifyPasswordAtCost(
  password: string,
  stored: string,
  current: PasswordHashing,
  costs: readonly PasswordHashing[] = [current],
): Promise<boolean> {
  const dummies = padding(stored, costs.length > 0 ? costs : [current])
  if (dummies.length === 0) return verifyPassword(password, stored)
  const [valid] = await Promise.all([
    verifyPassword(password, stored),
    ...dummies.map((cost) => verifyPassword(password, dummyHash(cost))),
  ])
  return valid
}

/**
 * Whether a stored hash was made with another algorithm or cost than the configured ones (or
 * is not a hash this module reads): the login route then rehashes the password it has just
 * verified, so switching to Argon2id, or raising its cost, upgrades every user at their next
 * successful sign-in.
 */
export function needsRehash(stored: string, current: PasswordHashing): boolean {
  const parsed = parse(stored)
  if (!parsed || !sameCost(parsed, current)) return true
  return parsed.algorithm === 'argon2id'
    ? parsed.hashLength !== KEYLEN
    : Buffer.from(parsed.hash, 'base64url').length !== KEYLEN
}

export { validParams as validScryptParams }
