import { describe, expect, test } from 'vitest'
import { createKnexStore, migrate, openDatabase } from '../store/knex/index.ts'
import { createKeystore, ensureSigningKey, generateSigningKey } from './keystore.ts'

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

  test('kid is the RFC 7638 thumbprint and the modulus has 2048 bits', async () => {
    const key = await generateSigningKey(0)
    expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(String(key.publicJwk.n), 'base64url').length).toBe(256)
    expect(key.publicJwk).not.toHaveProperty('d')
  })
})
