import { describe, expect, test } from 'vitest'
import { createKnexStore, migrate, openDatabase } from '../store/knex/index.ts'
import {
  createKeystore,
  describeKeys,
  ensureSigningKey,
  generateSigningKey,
  rotateSigningKey,
} from './keystore.ts'

async function memoryStore() {
  const knex = openDatabase('sqlite::memory:')
  await migrate(knex)
  return createKnexStore(knex)
}

describe('keystore', () => {
  test('bootstrap creates exactly one key even when called concurrently', async () => {
    const store = await memoryStore()
    await Promise.all([
      ensureSigningKey(store.keys, 1000),
      ensureSigningKey(store.keys, 1000),
      ensureSigningKey(store.keys, 1000),
    ])
    expect(await store.keys.list()).toHaveLength(1)
    await ensureSigningKey(store.keys, 2000)
    expect(await store.keys.list()).toHaveLength(1)
    await store.close()
  })

  test('signs with the newest active key and keeps publishing older ones until retired', async () => {
    const store = await memoryStore()
    const old = await generateSigningKey(1000)
    await store.keys.insert(old)
    const next = await generateSigningKey(2000, 2100)
    await store.keys.insert(next)
    const keystore = createKeystore(store.keys, 0)
    expect((await keystore.signingKey(2050)).kid).toBe(old.kid) // not active yet
    expect((await keystore.signingKey(2100)).kid).toBe(next.kid)
    expect((await keystore.jwks(2100)).keys.map((k) => k.kid)).toEqual([next.kid, old.kid])
    expect(await keystore.verificationKey(old.kid, 2100)).toBeDefined()
    expect(await keystore.verificationKey('unknown', 2100)).toBeUndefined()
    await store.close()
  })

  test('rotation: published at once, signing after the delay, the old key kept until its tokens expire', async () => {
    const store = await memoryStore()
    await ensureSigningKey(store.keys, 1000)
    const [first] = await store.keys.list()
    const keystore = createKeystore(store.keys, 0)
    const { added, retireAt } = await rotateSigningKey(store.keys, 2000, {
      activationDelay: 120,
      tokenLifetime: 3600,
    })
    expect(retireAt).toBe(2000 + 120 + 3600)
    // published before it signs, so that cached JWKS have it when the first token arrives
    expect((await keystore.jwks(2000)).keys.map((k) => k.kid)).toEqual([added.kid, first?.kid])
    expect((await keystore.signingKey(2119)).kid).toBe(first?.kid)
    expect((await keystore.signingKey(2120)).kid).toBe(added.kid)
    expect(describeKeys(await store.keys.list(), 2000).map((k) => k.status)).toEqual([
      'pending',
      'active',
    ])
    expect(describeKeys(await store.keys.list(), 2120).map((k) => k.status)).toEqual([
      'active',
      'retiring',
    ])
    // tokens the old key signed until 2120 live until 2120 + 3600: verifiable until then
    expect(await keystore.verificationKey(first?.kid ?? '', retireAt - 1)).toBeDefined()
    expect(await keystore.verificationKey(first?.kid ?? '', retireAt)).toBeUndefined()
    expect((await keystore.jwks(retireAt)).keys.map((k) => k.kid)).toEqual([added.kid])
    expect(describeKeys(await store.keys.list(), retireAt).map((k) => k.status)).toEqual([
      'active',
      'retired',
    ])
    await store.close()
  })

  test('rotation on an empty key table signs at once', async () => {
    const store = await memoryStore()
    const { added } = await rotateSigningKey(store.keys, 5000, {
      activationDelay: 120,
      tokenLifetime: 3600,
    })
    expect(added.activateAt).toBe(5000)
    expect((await createKeystore(store.keys, 0).signingKey(5000)).kid).toBe(added.kid)
    await store.close()
  })

  test('kid is the RFC 7638 thumbprint and the modulus has 2048 bits', async () => {
    const key = await generateSigningKey(0)
    expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(String(key.publicJwk.n), 'base64url').length).toBe(256)
    expect(key.publicJwk).not.toHaveProperty('d')
  })
})
