import { afterEach, expect, test } from 'vitest'
import type { Fault } from '../deps.ts'
import { withStorageFaults } from './faulty-store.ts'
import { createKnexStore, migrate, openDatabase } from './knex/index.ts'
import type { Store, StoredCode, StoredToken } from './store.ts'

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

const code: StoredCode = {
  digest: 'code-digest',
  clientId: 'conformance-client',
  userId: 'alice',
  redirectUri: 'https://client.example/callback',
  codeChallenge: 'challenge',
  scope: 'openid',
  nonce: null,
  authTime: 1000,
  expiresAt: 1060,
}
const binding = { clientId: code.clientId, redirectUri: code.redirectUri }
const token = (over: Partial<StoredToken>): StoredToken => ({
  id: 'token-id',
  kind: 'access',
  clientId: code.clientId,
  subject: 'alice',
  scope: 'openid',
  issuedAt: 1000,
  expiresAt: 1300,
  revokedAt: null,
  codeDigest: null,
  parentId: null,
  ...over,
})

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

test('redirect-mismatch-spends-code: a request with another redirect_uri spends the code', async () => {
  const store = await storeWith('redirect-mismatch-spends-code')
  await store.codes.insert(code)
  const wrong = { ...binding, redirectUri: 'https://client.example/other' }
  expect(await store.codes.consume(code.digest, 1001, wrong)).toMatchObject({ firstUse: true })
  expect(await store.codes.consume(code.digest, 1001, binding)).toMatchObject({ firstUse: false })
})

test('codes-repeat-per-sign-in: a code stored again keeps its first record', async () => {
  const store = await storeWith('codes-repeat-per-sign-in')
  await store.codes.insert(code)
  await store.codes.insert({ ...code, nonce: 'second' })
  expect((await store.codes.consume(code.digest, 1001, binding))?.code.nonce).toBeNull()
})

test('code-expiry-unchecked: stored code expiries read as never', async () => {
  const store = await storeWith('code-expiry-unchecked')
  await store.codes.insert(code)
  expect((await store.codes.consume(code.digest, 5000, binding))?.code.expiresAt).toBe(Infinity)
})

test('pkce-failure-keeps-code: a code stays redeemable until it has issued a token', async () => {
  const store = await storeWith('pkce-failure-keeps-code')
  await store.codes.insert(code)
  expect(await store.codes.consume(code.digest, 1001, binding)).toMatchObject({ firstUse: true })
  expect(await store.codes.consume(code.digest, 1001, binding)).toMatchObject({ firstUse: true })
  await store.tokens.insert(token({ codeDigest: code.digest }))
  expect(await store.codes.consume(code.digest, 1001, binding)).toMatchObject({ firstUse: false })
})

test('login-unthrottled and login-spraying-unthrottled: the login counters never count', async () => {
  const all = await storeWith('login-unthrottled')
  const spraying = await storeWith('login-spraying-unthrottled')
  for (let i = 0; i < 3; i++) {
    expect(await all.rateLimits.hit('login:1.2.3.4:u:failures', 0, 60)).toBe(1)
    expect(await all.rateLimits.hit('loginaddress:1.2.3.4:failures', 0, 60)).toBe(1)
    expect(await spraying.rateLimits.hit('loginaddress:1.2.3.4:failures', 0, 60)).toBe(1)
    await spraying.rateLimits.hit('login:1.2.3.4:u:failures', 0, 60)
    await all.rateLimits.hit('token:client:app', 0, 60)
  }
  expect(await all.rateLimits.count('login:1.2.3.4:u:failures', 0)).toBe(0)
  expect(await spraying.rateLimits.count('loginaddress:1.2.3.4:failures', 0)).toBe(0)
  // the other counters count as ever
  expect(await spraying.rateLimits.count('login:1.2.3.4:u:failures', 0)).toBe(3)
  expect(await all.rateLimits.count('token:client:app', 0)).toBe(3)
})
