import { afterEach, expect, test } from 'vitest'
import type { Fault } from '../deps.ts'
import { withStorageFaults } from './faulty-store.ts'
import { createKnexStore, migrate, openDatabase } from './knex/index.ts'
import type { Store } from './store.ts'
import { storedCode, storedToken } from '../test-helpers.ts'

const opened: Store[] = []
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

async function storeWith(...faults: Fault[]): Promise<Store> {
  const knex = openDatabase('sqlite::memory:')
  await migrate(knex)
  const store = createKnexStore(knex)
  opened.push(store)
  return withStorageFaults(store, new Set(faults))
}

const code = storedCode
const binding = { clientId: code.clientId, redirectUri: code.redirectUri }
const token = storedToken

test('without faults the wrapper passes every call through unchanged', async () => {
  const store = await storeWith()
  await store.codes.insert(code)
  expect(
    await store.codes.consume(code.digest, 1001, { ...binding, redirectUri: 'https://x' }),
  ).toMatchObject({ firstUse: false, unbound: true })
  expect(await store.codes.consume(code.digest, 1001, binding)).toEqual({ code, firstUse: true })
  expect(await store.codes.consume(code.digest, 1002, binding)).toMatchObject({ firstUse: false })
  await store.tokens.insert(token({ kind: 'refresh', id: 'rt', expiresAt: 1100 }))
  expect((await store.tokens.get('rt'))?.expiresAt).toBe(1100)
  await store.sessions.insert({ digest: 's', userId: 'alice', authTime: 1000, expiresAt: 2000 })
  await store.sessions.end('s', 1001)
  expect(await store.sessions.get('s', 1002)).toBeUndefined()
})

test('refresh-expiry-unchecked: stored refresh token expiries read as never', async () => {
  const store = await storeWith('refresh-expiry-unchecked')
  await store.tokens.insert(token({ kind: 'refresh', id: 'rt', expiresAt: 1100 }))
  await store.tokens.insert(token({ id: 'at', expiresAt: 1100 }))
  expect((await store.tokens.get('rt'))?.expiresAt).toBe(Infinity)
  expect((await store.tokens.get('at'))?.expiresAt).toBe(1100)
})

test('logout-keeps-session: ending a session leaves it live in the store', async () => {
  const store = await storeWith('logout-keeps-session')
  await store.sessions.insert({ digest: 's', userId: 'alice', authTime: 1000, expiresAt: 2000 })
  await store.sessions.end('s', 1001)
  expect(await store.sessions.get('s', 1002)).toMatchObject({ userId: 'alice' })
})
