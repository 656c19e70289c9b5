import { randomBytes } from 'node:crypto'
import type { Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { generateSigningKey } from '../keys/keystore.ts'
import { createKnexStore, migrate, openDatabase } from './knex/index.ts'
import type { Store, StoredCode } from './store.ts'
import { postgresAvailable, TEST_PG_URL } from '../test-helpers.ts'

const PG_URL = TEST_PG_URL

const backends: {
  name: string
  open: () => Promise<{ store: Store; knex: Knex; drop: () => Promise<void> }>
}[] = [
  {
    name: 'sqlite',
    async open() {
      const knex = openDatabase('sqlite::memory:')
      await migrate(knex)
      return { store: createKnexStore(knex), knex, drop: () => Promise.resolve() }
    },
  },
  {
    name: 'postgresql',
    async open() {
      // each run gets its own schema, so runs never see each other's rows
      const schema = `test_${process.pid}_${randomBytes(4).toString('hex')}`
      const knex = openDatabase(PG_URL, schema)
      await migrate(knex, schema)
      return {
        store: createKnexStore(knex),
        knex,
        drop: async () => {
          await knex.raw('drop schema if exists ?? cascade', [schema])
        },
      }
    },
  },
]

const pgUp = await postgresAvailable()

for (const backend of backends) {
  describe.skipIf(backend.name === 'postgresql' && !pgUp)(
    `store contracts on ${backend.name}`,
    () => {
      let store: Store
      let knex: Knex
      let drop: () => Promise<void>
      beforeAll(async () => {
        ;({ store, knex, drop } = await backend.open())
      })
      afterAll(async () => {
        await drop()
        await knex.destroy()
      })

      const code = (digest: string): StoredCode => ({
        digest,
        clientId: 'c',
        userId: 'u',
        redirectUri: 'https://client.example/cb',
        codeChallenge: 'x'.repeat(43),
        scope: 'openid',
        nonce: null,
        authTime: 1,
        expiresAt: 2_000_000_000,
      })

      test('of 20 concurrent consumers of one code exactly one gets the first use', async () => {
        await store.codes.insert(code('race'))
        const results = await Promise.all(
          Array.from({ length: 20 }, () => store.codes.consume('race', 100)),
        )
        expect(results.filter((r) => r?.firstUse).length).toBe(1)
        expect(results.every((r) => r?.code.digest === 'race')).toBe(true)
        expect(await store.codes.consume('unknown', 100)).toBeUndefined()
      })

      test('concurrent bootstraps on an empty key table create one key', async () => {
        const keys = await Promise.all([
          generateSigningKey(1),
          generateSigningKey(1),
          generateSigningKey(1),
        ])
        const inserted = await Promise.all(keys.map((k) => store.keys.insertIfNone(k)))
        expect(inserted.filter(Boolean)).toHaveLength(1)
        expect(await store.keys.list()).toHaveLength(1)
      })

      test('rate-limit counters count every concurrent hit exactly once', async () => {
        const counts = await Promise.all(
          Array.from({ length: 25 }, () => store.rateLimits.hit('k', 60, 60)),
        )
        expect([...counts].sort((a, b) => a - b)).toEqual(
          Array.from({ length: 25 }, (_, i) => i + 1),
        )
        expect(await store.rateLimits.hit('k', 120, 60)).toBe(1)
      })

      test('revoking a refresh token revokes the access tokens minted from it, and only those', async () => {
        const base = {
          clientId: 'c',
          subject: 'u',
          scope: 'openid',
          issuedAt: 1,
          expiresAt: 2_000_000_000,
          revokedAt: null,
          codeDigest: 'cd',
        }
        await store.tokens.insert({ ...base, id: 'rt', kind: 'refresh', parentId: null })
        await store.tokens.insert({ ...base, id: 'at1', kind: 'access', parentId: 'rt' })
        await store.tokens.insert({
          ...base,
          id: 'at2',
          kind: 'access',
          parentId: null,
          codeDigest: 'other',
        })
        await store.tokens.revoke('rt', 50)
        expect((await store.tokens.get('rt'))?.revokedAt).toBe(50)
        expect((await store.tokens.get('at1'))?.revokedAt).toBe(50)
        expect((await store.tokens.get('at2'))?.revokedAt).toBeNull()
        await store.tokens.revokeByCode('other', 60)
        expect((await store.tokens.get('at2'))?.revokedAt).toBe(60)
      })

      test('sessions end and expire', async () => {
        await store.sessions.insert({ digest: 's', userId: 'u', authTime: 10, expiresAt: 100 })
        expect(await store.sessions.get('s', 50)).toMatchObject({ userId: 'u', authTime: 10 })
        expect(await store.sessions.get('s', 100)).toBeUndefined()
        await store.sessions.end('s', 60)
        expect(await store.sessions.get('s', 50)).toBeUndefined()
      })

      test('an interaction can be taken once', async () => {
        await store.interactions.insert({
          id: 'i',
          request: { a: 1 },
          csrfDigest: 'd',
          expiresAt: 100,
        })
        expect((await store.interactions.get('i', 50))?.request).toEqual({ a: 1 })
        const takes = await Promise.all([
          store.interactions.take('i'),
          store.interactions.take('i'),
        ])
        expect(takes.filter(Boolean)).toHaveLength(1)
      })
    },
  )
}
