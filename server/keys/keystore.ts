import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose'
import type { KeyRepository, SigningKey } from '../store/store.ts'

/** A public key as published in the JWKS (INTERFACE.md §2.8). */
export interface PublicJwk {
  readonly kty: 'RSA'
  readonly use: 'sig'
  readonly alg: 'RS256'
  readonly kid: string
  readonly n: string
  readonly e: string
}

export interface Keystore {
  /** The newest key whose activation time has come: every token is signed with it. */
  signingKey(now: number): Promise<{ kid: string; key: CryptoKey }>
  /** The public half of every published key, newest first. */
  jwks(now: number): Promise<{ keys: PublicJwk[] }>
  /** The verification key for a kid, or undefined when no published key has it. */
  verificationKey(kid: string, now: number): Promise<CryptoKey | undefined>
}

/** Generates an RSA-2048 signing key; kid is its RFC 7638 thumbprint. */
export async function generateSigningKey(now: number, activateAt = now): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true })
  const jwk = await exportJWK(privateKey)
  const kid = await calculateJwkThumbprint(jwk)
  const { n, e } = jwk
  if (!n || !e) throw new Error('generated key has no modulus')
  return {
    kid,
    privateJwk: { ...jwk, kid, alg: 'RS256', use: 'sig' },
    publicJwk: { kty: 'RSA', use: 'sig', alg: 'RS256', kid, n, e },
    createdAt: now,
    activateAt,
    retireAt: null,
  }
}

/**
 * Creates the first signing key at bootstrap when the store has none. Two processes doing
 * this at once end with one key (KeyRepository.insertIfNone).
 */
export async function ensureSigningKey(keys: KeyRepository, now: number): Promise<void> {
  const existing = await keys.list()
  if (existing.length > 0) return
  await keys.insertIfNone(await generateSigningKey(now))
}

const published = (k: SigningKey, now: number): boolean => k.retireAt === null || k.retireAt > now

/**
 * The keystore over the key table. Keys are re-read from the store at most every
 * `refreshSeconds`, and at once for an unknown kid, so every process publishes and signs with
 * the same set.
 */
export function createKeystore(keys: KeyRepository, refreshSeconds = 10): Keystore {
  let cache: { at: number; keys: SigningKey[] } | undefined
  let lastForced = -Infinity
  const imported = new Map<string, Promise<CryptoKey>>()

  const load = async (now: number, force = false): Promise<SigningKey[]> => {
    if (!force && cache && now - cache.at < refreshSeconds) return cache.keys
    cache = { at: now, keys: await keys.list() }
    return cache.keys
  }
  const importKey = (jwk: Record<string, unknown>, id: string): Promise<CryptoKey> => {
    let key = imported.get(id)
    if (!key) {
      key = importJWK(jwk as JWK, 'RS256') as Promise<CryptoKey>
      imported.set(id, key)
    }
    return key
  }

  return {
    async signingKey(now) {
      const all = await load(now)
      // the newest key whose activation has come and that is still published; a rotated-in
      // key waits for its activation time, so caches of the JWKS have seen it first
      const active =
        all.find((k) => k.activateAt <= now && k.retireAt === null) ??
        all.find((k) => k.activateAt <= now && published(k, now))
      if (!active) throw new Error('no signing key in the store')
      return { kid: active.kid, key: await importKey(active.privateJwk, `private:${active.kid}`) }
    },
    async jwks(now) {
      const all = await load(now)
      return {
        keys: all.filter((k) => published(k, now)).map((k) => k.publicJwk as unknown as PublicJwk),
      }
    },
    async verificationKey(kid, now) {
      let found = (await load(now)).find((k) => k.kid === kid)
      // an unknown kid re-reads the store, at most once a second, so garbage kids cannot hammer it
      if (!found && now - lastForced >= 1) {
        lastForced = now
        found = (await load(now, true)).find((k) => k.kid === kid)
      }
      if (!found || !published(found, now)) return undefined
      return importKey(found.publicJwk, `public:${found.kid}`)
    },
  }
}

/** Where a key is in its life, for `keys list`. */
export type KeyStatus = 'pending' | 'active' | 'retiring' | 'retired'

export interface KeyInfo {
  readonly kid: string
  readonly status: KeyStatus
  readonly createdAt: number
  readonly activateAt: number
  readonly retireAt: number | null
}

/** Each stored key with its status at `now`, newest first; exactly one is active. */
export function describeKeys(all: readonly SigningKey[], now: number): KeyInfo[] {
  const signing =
    all.find((k) => k.activateAt <= now && k.retireAt === null) ??
    all.find((k) => k.activateAt <= now && published(k, now))
  return all.map((k) => ({
    kid: k.kid,
    createdAt: k.createdAt,
    activateAt: k.activateAt,
    retireAt: k.retireAt,
    status:
      k === signing
        ? 'active'
        : !published(k, now)
          ? 'retired'
          : k.activateAt > now
            ? 'pending'
            : 'retiring',
  }))
}

/**
 * Publishes a new key that every process starts signing with after `activationDelay` seconds
 * (so cached JWKS see it first; at once when no key signs yet); the keys signing until then stay
 * published until the last token they signed has expired (`activationDelay + tokenLifetime`).
 */
export async function rotateSigningKey(
  keys: KeyRepository,
  now: number,
  options: { readonly activationDelay: number; readonly tokenLifetime: number },
): Promise<{ added: SigningKey; retireAt: number }> {
  // with no key signing yet (an empty database), the new key signs at once
  const signing = describeKeys(await keys.list(), now).some((k) => k.status === 'active')
  const delay = signing ? options.activationDelay : 0
  const added = await generateSigningKey(now, now + delay)
  const retireAt = now + delay + options.tokenLifetime
  await keys.rotate(added, retireAt)
  return { added, retireAt }
}
