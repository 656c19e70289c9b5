import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from '../app.ts'
import { loadConfig } from '../config.ts'
import { signInAndRedeem, testApp } from '../test-helpers.ts'
import {
  dummyHash,
  hashPassword,
  maxmemFor,
  needsRehash,
  OWASP_SCRYPT,
  TEST_SCRYPT,
  verifyPassword,
} from './passwords.ts'

describe('password hashing (scrypt)', () => {
  test("the default is OWASP's minimum, N=2^17 r=8 p=1, and the memory cap lets it run", async () => {
    expect(loadConfig({}).scrypt).toEqual({ N: 131072, r: 8, p: 1 })
    // 128 MiB of V: Node's default maxmem (32 MiB) and the old fixed 64 MiB cap refuse it
    expect(maxmemFor(OWASP_SCRYPT)).toBeGreaterThan(128 * 1024 * 1024)
    const hash = await hashPassword('correct horse')
    expect(hash).toMatch(/^scrypt\$131072\$8\$1\$/)
    expect(await verifyPassword('correct horse', hash)).toBe(true)
    expect(await verifyPassword('wrong horse', hash)).toBe(false)
  })

  test('the cost is configurable and validated', () => {
    expect(loadConfig({ SCRYPT_N: '16384' }).scrypt).toEqual({ N: 16384, r: 8, p: 1 })
    expect(loadConfig({ SCRYPT_N: '262144', SCRYPT_P: '2' }).scrypt).toEqual({
      N: 262144,
      r: 8,
      p: 2,
    })
    expect(() => loadConfig({ SCRYPT_N: '100000' })).toThrow(/power of two/)
    expect(() => loadConfig({ SCRYPT_N: '512' })).toThrow(/scrypt/)
  })

  test('a hash with other parameters, or one it cannot read, needs rehashing', async () => {
    const weak = await hashPassword('pw', { N: 1024, r: 8, p: 1 })
    expect(needsRehash(weak, TEST_SCRYPT)).toBe(true)
    expect(needsRehash(await hashPassword('pw', TEST_SCRYPT), TEST_SCRYPT)).toBe(false)
    expect(needsRehash('bcrypt$whatever', TEST_SCRYPT)).toBe(true)
    // a stored hash asking for absurd memory is refused, not computed
    expect(await verifyPassword('pw', 'scrypt$1073741824$8$1$AAAA$AAAA')).toBe(false)
    expect(dummyHash(TEST_SCRYPT)).toMatch(/^scrypt\$16384\$8\$1\$/)
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

  test('a weaker stored hash is replaced by one with the configured parameters', async () => {
    const alice = await app.deps.store.users.byUsername('alice')
    if (!alice) throw new Error('no fixture alice')
    const weak = await hashPassword('wonderland', { N: 1024, r: 8, p: 1 })
    await app.deps.store.users.upsert({ ...alice, passwordHash: weak }, {})

    // a failed sign-in leaves it alone
    await signInAndRedeem(app, { username: 'alice', password: 'nope', scope: 'openid' }).catch(
      () => undefined,
    )
    expect((await app.deps.store.users.get(alice.id))?.passwordHash).toBe(weak)

    await signInAndRedeem(app, { username: 'alice', password: 'wonderland', scope: 'openid' })
    const stored = (await app.deps.store.users.get(alice.id))?.passwordHash ?? ''
    expect(stored).not.toBe(weak)
    expect(stored).toMatch(new RegExp(`^scrypt\\$${TEST_SCRYPT.N}\\$8\\$1\\$`))
    expect(await verifyPassword('wonderland', stored)).toBe(true)
    // and the user still signs in with it
    await signInAndRedeem(app, { username: 'alice', password: 'wonderland', scope: 'openid' })
  })
})
