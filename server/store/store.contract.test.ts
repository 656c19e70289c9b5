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

      test('a consumer with another client or redirect_uri leaves the code unused', async () => {
        await store.codes.insert(code('bound'))
        const right = { clientId: 'c', redirectUri: 'https://client.example/cb' }
        for (const wrong of [
          { ...right, redirectUri: 'https://client.example/cb/' },
          { ...right, clientId: 'other' },
        ])
          expect(await store.codes.consume('bound', 100, wrong)).toMatchObject({
            firstUse: false,
            unbound: true,
          })
        expect((await store.codes.consume('bound', 100, right))?.firstUse).toBe(true)
        // once spent, a replay is a replay whoever presents it
        const replay = await store.codes.consume('bound', 100, { ...right, clientId: 'other' })
        expect(replay).toMatchObject({ firstUse: false })
        expect(replay?.unbound).toBeUndefined()
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

      test('reading a rate-limit counter adds no hit', async () => {
        expect(await store.rateLimits.count('read', 60)).toBe(0)
        await store.rateLimits.hit('read', 60, 60)
        await store.rateLimits.hit('read', 60, 60)
        expect(await store.rateLimits.count('read', 60)).toBe(2)
        expect(await store.rateLimits.count('read', 60)).toBe(2)
        expect(await store.rateLimits.count('read', 120)).toBe(0)
      })

      test('concurrent token inserts and lookups (grouped into shared statements) each see their own row', async () => {
        const base = {
          kind: 'access' as const,
          clientId: 'c',
          scope: 'openid',
          issuedAt: 1,
          expiresAt: 2_000_000_000,
          revokedAt: null,
          codeDigest: null,
          parentId: null,
        }
        const ids = Array.from({ length: 60 }, (_, i) => `group-${i}`)
        await Promise.all(ids.map((id) => store.tokens.insert({ ...base, id, subject: `s-${id}` })))
        const found = await Promise.all([...ids, 'group-none'].map((id) => store.tokens.get(id)))
        expect(found.map((t) => t?.subject)).toEqual([...ids.map((id) => `s-${id}`), undefined])
        // a duplicate id fails its insert, and every insert is reported as it went
        const again = await Promise.allSettled([
          store.tokens.insert({ ...base, id: 'group-0', subject: 'dup' }),
          store.tokens.insert({ ...base, id: 'group-new', subject: 'new' }),
        ])
        expect(again[0].status).toBe('rejected')
        const fresh = await store.tokens.get('group-new')
        expect(again[1].status === 'fulfilled').toBe(fresh !== undefined)
        expect((await store.tokens.get('group-0'))?.subject).toBe('s-group-0')
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

      test('upsert replaces a client and its branding, and a user and all their roles', async () => {
        const client = {
          id: 'file-client',
          secretDigest: 'a'.repeat(64),
          name: 'First',
          redirectUris: ['http://127.0.0.1/cb'],
          postLogoutRedirectUris: [],
          grantTypes: ['authorization_code'],
          scopes: ['openid'],
          defaultScopes: [],
          roleDefinitions: { admin: ['x'] },
          clientRoles: [],
        }
        const branding = {
          logo_url: 'https://a.example/l.png',
          brand_color: '#000000',
          application_name: 'First',
          privacy_policy_url: 'https://a.example/p',
          terms_of_service_url: 'https://a.example/t',
        }
        await store.clients.upsert(client, branding)
        await store.clients.upsert(
          { ...client, name: 'Second', scopes: ['openid', 'y'] },
          undefined,
        )
        expect(await store.clients.get('file-client')).toMatchObject({
          name: 'Second',
          scopes: ['openid', 'y'],
        })
        expect(await store.clients.branding('file-client')).toBeUndefined()
        await store.clients.upsert(client, branding)
        expect(await store.clients.branding('file-client')).toEqual(branding)

        const user = {
          id: 'usr_file',
          username: 'carol',
          passwordHash: 'h1',
          name: 'Carol',
          picture: '',
          email: 'carol@example.com',
          emailVerified: false,
          orgId: 'org-9',
          updatedAt: 5,
        }
        await store.users.upsert(user, { 'file-client': ['admin', 'admin'] })
        expect(await store.users.roles('usr_file', 'file-client')).toEqual(['admin'])
        await store.users.upsert({ ...user, passwordHash: 'h2', emailVerified: true }, {})
        expect(await store.users.byUsername('carol')).toMatchObject({
          passwordHash: 'h2',
          emailVerified: true,
        })
        expect(await store.users.roles('usr_file', 'file-client')).toEqual([])
      })

      test('purge deletes only what can no longer matter', async () => {
        const policy = { spentCodeRetention: 1000, rateLimitHorizon: 60, tokenGrace: 10 }
        const now = 50_000
        await store.codes.insert({ ...code('p-unused-expired'), expiresAt: now - 1 })
        await store.codes.insert({ ...code('p-unused-live'), expiresAt: now + 60 })
        await store.codes.insert({ ...code('p-spent-recent'), expiresAt: now - 500 })
        await store.codes.insert({ ...code('p-spent-old'), expiresAt: now - 2000 })
        await store.codes.consume('p-spent-recent', now - 600)
        await store.codes.consume('p-spent-old', now - 2100)
        const token = {
          kind: 'refresh' as const,
          clientId: 'c',
          subject: 'u',
          scope: 'openid',
          issuedAt: 1,
          revokedAt: null,
          codeDigest: null,
          parentId: null,
        }
        await store.tokens.insert({ ...token, id: 'p-t-old', expiresAt: now - 11 })
        await store.tokens.insert({ ...token, id: 'p-t-grace', expiresAt: now - 5 })
        await store.tokens.insert({ ...token, id: 'p-t-live', expiresAt: now + 5, revokedAt: 7 })
        await store.sessions.insert({
          digest: 'p-s-old',
          userId: 'u',
          authTime: 1,
          expiresAt: now - 1,
        })
        await store.sessions.insert({
          digest: 'p-s-live',
          userId: 'u',
          authTime: 1,
          expiresAt: now + 99,
        })
        await store.interactions.insert({
          id: 'p-i-old',
          request: {},
          csrfDigest: 'd',
          expiresAt: now - 1,
        })
        await store.interactions.insert({
          id: 'p-i-live',
          request: {},
          csrfDigest: 'd',
          expiresAt: now + 1,
        })
        const retired = await generateSigningKey(1)
        await store.keys.insert({ ...retired, kid: 'p-retired', retireAt: now - 1 })
        await store.keys.insert({ ...retired, kid: 'p-retiring', retireAt: now + 1 })

        const counts = await store.purge(now, policy)
        expect(counts).toMatchObject({
          auth_codes: 2,
          tokens: 1,
          signing_keys: 1,
        })
        // the spent code whose tokens may still live stays, so a replay can revoke them
        expect(await store.codes.consume('p-spent-recent', now)).toMatchObject({ firstUse: false })
        expect(await store.codes.consume('p-spent-old', now)).toBeUndefined()
        expect(await store.codes.consume('p-unused-expired', now)).toBeUndefined()
        expect((await store.codes.consume('p-unused-live', now))?.firstUse).toBe(true)
        expect(await store.tokens.get('p-t-old')).toBeUndefined()
        expect(await store.tokens.get('p-t-grace')).toBeDefined()
        expect((await store.tokens.get('p-t-live'))?.revokedAt).toBe(7)
        // asked about a time when they were live: gone only if purged
        expect(await store.sessions.get('p-s-old', now - 10)).toBeUndefined()
        expect(await store.sessions.get('p-s-live', now)).toBeDefined()
        expect(await store.interactions.get('p-i-old', now - 10)).toBeUndefined()
        expect(await store.interactions.get('p-i-live', now)).toBeDefined()
        expect((await store.keys.list()).map((k) => k.kid)).toContain('p-retiring')
        expect((await store.keys.list()).map((k) => k.kid)).not.toContain('p-retired')
        expect(await store.purge(now, policy)).toMatchObject({ auth_codes: 0, tokens: 0 })
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
