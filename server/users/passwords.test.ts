import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadFixtures } from '../../fixtures/index.ts'
import type { App } from '../app.ts'
import { loadConfig, passwordHashing } from '../config.ts'
import { signInAndRedeem, testApp } from '../test-helpers.ts'
import {
  dummyHash,
  hashPassword,
  isReadableHash,
  maxmemFor,
  needsRehash,
  OWASP_SCRYPT,
  TEST_SCRYPT,
  verifyPassword,
  type PasswordHashing,
} from './passwords.ts'

const ARGON2ID: PasswordHashing = { algorithm: 'argon2id', memory: 19456, time: 2, parallelism: 1 }
const SCRYPT: PasswordHashing = { algorithm: 'scrypt', ...TEST_SCRYPT }

describe('password hashing (Argon2id, the default)', () => {
  test("the default is Argon2id at OWASP's minimum, m=19456 KiB t=2 p=1, in the PHC string format", async () => {
    expect(passwordHashing(loadConfig({}))).toEqual(ARGON2ID)
    const hash = await hashPassword('correct horse')
    expect(hash).toMatch(
      /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
    )
    expect(await verifyPassword('correct horse', hash)).toBe(true)
    expect(await verifyPassword('wrong horse', hash)).toBe(false)
    // a fresh salt each time
    expect(await hashPassword('correct horse')).not.toBe(hash)
    // NFKC: the same password typed with a composed or a decomposed accent
    const composed = await hashPassword('caf\u00e9')
    expect(await verifyPassword('cafe\u0301', composed)).toBe(true)
  })

  test('the cost is configurable and validated', () => {
    expect(
      passwordHashing(loadConfig({ ARGON2_MEMORY: '65536', ARGON2_PARALLELISM: '2' })),
    ).toEqual({ algorithm: 'argon2id', memory: 65536, time: 2, parallelism: 2 })
    expect(() => loadConfig({ ARGON2_MEMORY: '8', ARGON2_PARALLELISM: '2' })).toThrow(
      /ARGON2_MEMORY .*at least 8 KiB per lane/,
    )
    // within the bounds a stored hash may ask for, so every hash the server makes verifies
    expect(() => loadConfig({ ARGON2_MEMORY: String(512 * 1024) })).toThrow(/ARGON2_MEMORY/)
    expect(() => loadConfig({ ARGON2_TIME: '11' })).toThrow(/ARGON2_TIME/)
    expect(() => loadConfig({ ARGON2_TIME: '0' })).toThrow(/ARGON2_TIME/)
    expect(() => loadConfig({ ARGON2_PARALLELISM: '17' })).toThrow(/ARGON2_PARALLELISM/)
    expect(() => loadConfig({ PASSWORD_HASH: 'bcrypt' })).toThrow(
      /PASSWORD_HASH .*must be argon2id or scrypt/,
    )
  })

  test('a stored hash asking for more than the bounds, or not as the library writes it, is refused without hashing', async () => {
    const valid = await hashPassword('pw', { ...ARGON2ID, memory: 64 })
    expect(await verifyPassword('pw', valid)).toBe(true)
    const [, , , , salt, key] = valid.split('$') as [string, string, string, string, string, string]
    const crafted = (params: string, s = salt, k = key) => `$argon2id$v=19$${params}$${s}$${k}`
    expect(crafted('m=64,t=2,p=1')).toBe(valid)
    for (const refused of [
      crafted('m=4194304,t=2,p=1'), // 4 GiB
      crafted('m=262145,t=1,p=1'), // one KiB over 256 MiB
      crafted('m=64,t=11,p=1'),
      crafted('m=1024,t=2,p=17'),
      crafted('m=8,t=2,p=2'), // under 8 KiB per lane
      crafted('m=64,t=0,p=1'),
      crafted('m=064,t=2,p=1'), // not as the library writes it
      crafted('t=2,m=64,p=1'),
      crafted('m=64,t=2,p=1,keyid=abc'),
      crafted('m=64,t=2,p=1', 'AAAAAAAAAA'), // a 7-byte salt
      crafted('m=64,t=2,p=1', salt, 'AAAAAAAAAAAAAAAAAAAAA'), // a 15-byte hash
      crafted('m=64,t=2,p=1', salt, `${key.slice(0, -1)}B`), // not canonical base64
      crafted('m=64,t=2,p=1', salt, `${key}=`),
      valid.replace('$argon2id$', '$argon2i$'),
      valid.replace('$v=19$', '$v=16$'),
    ]) {
      expect(isReadableHash(refused), refused).toBe(false)
      expect(await verifyPassword('pw', refused), refused).toBe(false)
      expect(needsRehash(refused, ARGON2ID), refused).toBe(true)
    }
    // the largest a stored hash may ask for is still read
    expect(isReadableHash(crafted('m=262144,t=10,p=16'))).toBe(true)
  })

  test('a hash with another algorithm or cost, or one it cannot read, needs rehashing', async () => {
    const current = await hashPassword('pw', ARGON2ID)
    expect(needsRehash(current, ARGON2ID)).toBe(false)
    expect(needsRehash(current, { ...ARGON2ID, memory: 65536 })).toBe(true)
    expect(needsRehash(current, { ...ARGON2ID, time: 3 })).toBe(true)
    expect(needsRehash(current, { ...ARGON2ID, parallelism: 2 })).toBe(true)
    expect(needsRehash(current, SCRYPT)).toBe(true)
    const scrypt = await hashPassword('pw', SCRYPT)
    expect(needsRehash(scrypt, ARGON2ID)).toBe(true)
    expect(needsRehash(scrypt, SCRYPT)).toBe(false)
    expect(needsRehash('bcrypt$whatever', ARGON2ID)).toBe(true)
    expect(dummyHash(ARGON2ID)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(isReadableHash(dummyHash(ARGON2ID))).toBe(true)
    expect(await verifyPassword('', dummyHash(ARGON2ID))).toBe(false)
  })
})

describe('password hashing (scrypt, PASSWORD_HASH=scrypt and hashes stored before Argon2id)', () => {
  test("PASSWORD_HASH=scrypt hashes at OWASP's scrypt minimum, N=2^17 r=8 p=1, and the memory cap lets it run", async () => {
    expect(passwordHashing(loadConfig({ PASSWORD_HASH: 'scrypt' }))).toEqual({
      algorithm: 'scrypt',
      ...OWASP_SCRYPT,
    })
    // 128 MiB of V: Node's default maxmem (32 MiB) and the old fixed 64 MiB cap refuse it
    expect(maxmemFor(OWASP_SCRYPT)).toBeGreaterThan(128 * 1024 * 1024)
    const hash = await hashPassword('correct horse', { algorithm: 'scrypt', ...OWASP_SCRYPT })
    expect(hash).toMatch(/^scrypt\$131072\$8\$1\$/)
    expect(await verifyPassword('correct horse', hash)).toBe(true)
    expect(await verifyPassword('wrong horse', hash)).toBe(false)
  })

  test('the scrypt cost is configurable and validated', () => {
    expect(loadConfig({ SCRYPT_N: '16384' }).scrypt).toEqual({ N: 16384, r: 8, p: 1 })
    expect(loadConfig({ SCRYPT_N: '262144', SCRYPT_P: '2' }).scrypt).toEqual({
      N: 262144,
      r: 8,
      p: 2,
    })
    expect(() => loadConfig({ SCRYPT_N: '100000' })).toThrow(/power of two/)
    expect(() => loadConfig({ SCRYPT_N: '512' })).toThrow(/scrypt/)
  })

  test('a scrypt hash with other parameters, or absurd ones, needs rehashing or is refused', async () => {
    const weak = await hashPassword('pw', { algorithm: 'scrypt', N: 1024, r: 8, p: 1 })
    expect(needsRehash(weak, SCRYPT)).toBe(true)
    expect(await verifyPassword('pw', weak)).toBe(true)
    // a stored hash asking for absurd memory is refused, not computed
    expect(await verifyPassword('pw', 'scrypt$1073741824$8$1$AAAA$AAAA')).toBe(false)
    expect(dummyHash(SCRYPT)).toMatch(/^scrypt\$16384\$8\$1\$/)
  })
})

describe('rehash at the next successful sign-in', () => {
  let app: App
  beforeAll(async () => {
    app = await testApp()
  })
  afterAll(async () => {
    await app.stop()
  })

  test('a stored scrypt hash (made before Argon2id was the default) is replaced by an Argon2id one', async () => {
    const alice = await app.deps.store.users.byUsername('alice')
    if (!alice) throw new Error('no fixture alice')
    // the fixtures are hashed with the server's default
    expect(needsRehash(alice.passwordHash, ARGON2ID)).toBe(false)
    const old = await hashPassword('wonderland', { algorithm: 'scrypt', ...TEST_SCRYPT })
    await app.deps.store.users.upsert({ ...alice, passwordHash: old }, {})

    // a failed sign-in leaves it alone
    await signInAndRedeem(app, { username: 'alice', password: 'nope', scope: 'openid' }).catch(
      () => undefined,
    )
    expect((await app.deps.store.users.get(alice.id))?.passwordHash).toBe(old)

    // the scrypt hash still verifies: the user signs in, and the hash becomes Argon2id
    await signInAndRedeem(app, { username: 'alice', password: 'wonderland', scope: 'openid' })
    const stored = (await app.deps.store.users.get(alice.id))?.passwordHash ?? ''
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(await verifyPassword('wonderland', stored)).toBe(true)
    // and the user still signs in with it, without another rehash
    await signInAndRedeem(app, { username: 'alice', password: 'wonderland', scope: 'openid' })
    expect((await app.deps.store.users.get(alice.id))?.passwordHash).toBe(stored)
  })

  test('an Argon2id hash at a lower cost is replaced by one at the configured cost', async () => {
    const bob = await app.deps.store.users.byUsername('bob')
    if (!bob) throw new Error('no fixture bob')
    const weak = await hashPassword('builder', { ...ARGON2ID, memory: 1024, time: 1 })
    await app.deps.store.users.upsert({ ...bob, passwordHash: weak }, {})
    await signInAndRedeem(app, { username: 'bob', password: 'builder', scope: 'openid' })
    const stored = (await app.deps.store.users.get(bob.id))?.passwordHash ?? ''
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(await verifyPassword('builder', stored)).toBe(true)
  })
})

describe('fixtures stored before Argon2id was the default', () => {
  test('are rehashed at start when their hash still matches the fixture password', async () => {
    const app = await testApp()
    try {
      const alice = await app.deps.store.users.byUsername('alice')
      const bob = await app.deps.store.users.byUsername('bob')
      if (!alice || !bob) throw new Error('no fixture alice or bob')
      const old = await hashPassword('wonderland', SCRYPT)
      // bob's password was changed by its operator: not the fixture's, so left alone
      const changed = await hashPassword('not-builder', SCRYPT)
      await app.deps.store.users.upsert({ ...alice, passwordHash: old }, {})
      await app.deps.store.users.upsert({ ...bob, passwordHash: changed }, {})

      await loadFixtures(app.deps.store, ARGON2ID)
      const stored = (await app.deps.store.users.get(alice.id))?.passwordHash ?? ''
      expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
      expect(await verifyPassword('wonderland', stored)).toBe(true)
      expect((await app.deps.store.users.get(bob.id))?.passwordHash).toBe(changed)
    } finally {
      await app.stop()
    }
  })
})
