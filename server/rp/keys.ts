import { importJWK, type JWK } from 'jose'
import { generateSigningKey, type PublicJwk } from '../keys/keystore.ts'

/** An RSA key of the test issuers: kid, public JWK and the private key to sign with. */
export interface RpKey {
  readonly kid: string
  readonly publicJwk: PublicJwk
  readonly privateKey: CryptoKey
}

async function newKey(): Promise<RpKey> {
  const k = await generateSigningKey(0)
  return {
    kid: k.kid,
    publicJwk: k.publicJwk as unknown as PublicJwk,
    privateKey: (await importJWK(k.privateJwk as JWK, 'RS256')) as CryptoKey,
  }
}

/**
 * The test issuers' own keys, in this process's memory and never in the store, so nothing an
 * RP test does can touch the normal issuer's keys: `main` signs every ID token; `decoy` is the
 * first key of the two-key JWKS; `stranger` is never published (bad signature, unknown kid);
 * `rotate()` makes a new key for rp-key-rotation-op-sign-key-native (rotated just before
 * signing), which publishes the two newest; `current()` is the one key of rp-key-rotation-op-
 * sign-key (the rotation between two sign-ins), and `replace()` withdraws it for a new one.
 */
export function createRpKeys(): {
  main(): Promise<RpKey>
  decoy(): Promise<RpKey>
  stranger(): Promise<RpKey>
  rotate(): Promise<RpKey>
  rotated(): Promise<readonly RpKey[]>
  current(): Promise<RpKey>
  replace(): Promise<RpKey>
} {
  const lazy = (): (() => Promise<RpKey>) => {
    let key: Promise<RpKey> | undefined
    return () => (key ??= newKey())
  }
  const main = lazy()
  const decoy = lazy()
  const stranger = lazy()
  let rotation: Promise<RpKey[]> | undefined
  let current: Promise<RpKey> | undefined
  return {
    current: () => (current ??= newKey()),
    replace() {
      // chained, so a replacement started later is never overtaken by an earlier one
      const previous = current ?? Promise.resolve(undefined)
      current = previous.then(
        () => newKey(),
        () => newKey(),
      )
      return current
    },
    main,
    decoy,
    stranger,
    async rotate() {
      // chained synchronously, so concurrent rotations each add their own key in turn
      const next = (rotation ?? main().then((k) => [k])).then(async (previous) =>
        [await newKey(), ...previous].slice(0, 2),
      )
      rotation = next
      const [added] = await next
      if (!added) throw new Error('rotation produced no key')
      return added
    },
    async rotated() {
      return (await rotation) ?? [await main()]
    },
  }
}
