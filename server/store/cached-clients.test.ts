import { expect, test } from 'vitest'
import { cachedClients } from './cached-clients.ts'
import type { Branding, Client, ClientRepository } from './store.ts'

const client = (id: string, name = id): Client => ({
  id,
  secretDigest: 'd',
  name,
  redirectUris: [],
  postLogoutRedirectUris: [],
  grantTypes: [],
  scopes: [],
  defaultScopes: [],
  roleDefinitions: {},
  clientRoles: [],
})

function fakeRepo() {
  const rows = new Map<string, Client>([['a', client('a')]])
  let reads = 0
  const repo: ClientRepository = {
    get: (id) => {
      reads++
      return Promise.resolve(rows.get(id))
    },
    insertIfAbsent: (c) => {
      if (!rows.has(c.id)) rows.set(c.id, c)
      return Promise.resolve()
    },
    upsert: (c) => {
      rows.set(c.id, c)
      return Promise.resolve()
    },
    branding: () => Promise.resolve(undefined),
  }
  return { repo, rows, reads: () => reads }
}

test('hits are served from memory until the TTL, then read again', async () => {
  const { repo, rows, reads } = fakeRepo()
  let t = 0
  const cached = cachedClients(repo, { ttlSeconds: 10, now: () => t })
  expect((await cached.get('a'))?.name).toBe('a')
  expect((await cached.get('a'))?.name).toBe('a')
  expect(reads()).toBe(1)
  rows.set('a', client('a', 'changed elsewhere'))
  t = 9_999
  expect((await cached.get('a'))?.name).toBe('a')
  t = 10_000
  expect((await cached.get('a'))?.name).toBe('changed elsewhere')
  expect(reads()).toBe(2)
})

test('writes through the cache take effect at once; unknown ids are never cached', async () => {
  const { repo, reads } = fakeRepo()
  const cached = cachedClients(repo, { now: () => 0 })
  await cached.get('a')
  await cached.upsert(client('a', 'renamed'), undefined)
  expect((await cached.get('a'))?.name).toBe('renamed')
  expect(await cached.get('nope')).toBeUndefined()
  expect(await cached.get('nope')).toBeUndefined()
  expect(reads()).toBe(4)
})

test('the cache is bounded', async () => {
  const { repo, rows, reads } = fakeRepo()
  for (let i = 0; i < 5; i++) rows.set(`c${i}`, client(`c${i}`))
  const cached = cachedClients(repo, { maxEntries: 2, now: () => 0 })
  for (const id of ['c0', 'c1', 'c2']) await cached.get(id)
  const before = reads()
  await cached.get('c0') // evicted by c2: read again
  await cached.get('c2') // still cached
  expect(reads() - before).toBe(1)
})

const brand = (logo: string): Branding => ({
  logo_url: logo,
  brand_color: '#000000',
  application_name: 'A',
  privacy_policy_url: 'https://a.example/privacy',
  terms_of_service_url: 'https://a.example/terms',
})

test("a cached client's branding is served from memory with it, dropped when it is written, and never cached for an unknown id", async () => {
  const { repo } = fakeRepo()
  const brandingReads: string[] = []
  let logo = 'https://a.example/logo.png'
  repo.branding = (id) => {
    brandingReads.push(id)
    return Promise.resolve(id === 'a' ? brand(logo) : undefined)
  }
  let t = 0
  const cached = cachedClients(repo, { ttlSeconds: 10, now: () => t })
  await cached.get('a')
  expect(await cached.branding('a')).toEqual(brand(logo))
  expect(await cached.branding('a')).toEqual(brand(logo))
  expect(brandingReads).toEqual(['a'])
  // a write through the cache is seen at once
  logo = 'https://a.example/new.png'
  await cached.upsert(client('a'), brand(logo))
  await cached.get('a')
  expect(await cached.branding('a')).toEqual(brand(logo))
  expect(brandingReads).toEqual(['a', 'a'])
  // and it expires with the client
  t = 10_000
  await cached.branding('a')
  expect(brandingReads).toEqual(['a', 'a', 'a'])
  // ids that name no client are read every time
  await cached.branding('nope')
  await cached.branding('nope')
  expect(brandingReads.filter((id) => id === 'nope')).toHaveLength(2)
})
