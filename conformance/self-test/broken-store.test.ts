import { expect, test } from 'vitest'
import { wrappedStores } from './wrapped-stores.ts'
import { storedToken } from '../../server/test-helpers.ts'
import {
  clientCountersUncounted,
  failuresChargedToClient,
  refreshMintsOrphans,
  refreshTokensNeverExpire,
  sessionsOutliveLogout,
} from './broken-store.ts'

const broken = wrappedStores()

test('refreshTokensNeverExpire: a refresh token reads as never expiring, an access token as stored', async () => {
  const store = await broken(refreshTokensNeverExpire)
  await store.tokens.insert(storedToken({ kind: 'refresh', id: 'rt', expiresAt: 1100 }))
  await store.tokens.insert(storedToken({ id: 'at', expiresAt: 1100 }))
  expect((await store.tokens.get('rt'))?.expiresAt).toBe(Infinity)
  expect((await store.tokens.get('at'))?.expiresAt).toBe(1100)
})

test('sessionsOutliveLogout: ending a session leaves it live in the store', async () => {
  const store = await broken(sessionsOutliveLogout)
  await store.sessions.insert({ digest: 's', userId: 'alice', authTime: 1000, expiresAt: 2000 })
  await store.sessions.end('s', 1001)
  expect(await store.sessions.get('s', 1002)).toMatchObject({ userId: 'alice' })
})

test('refreshMintsOrphans: only the first access token of a refresh token stays linked to it', async () => {
  const store = await broken(refreshMintsOrphans)
  await store.tokens.insert(storedToken({ kind: 'refresh', id: 'rt', expiresAt: 5000 }))
  await store.tokens.insert(storedToken({ id: 'with-code', parentId: 'rt' }))
  await store.tokens.insert(storedToken({ id: 'minted', parentId: 'rt' }))
  await store.tokens.revoke('rt', 1001)
  expect((await store.tokens.get('with-code'))?.revokedAt).not.toBeNull()
  expect((await store.tokens.get('minted'))?.revokedAt).toBeNull()
})

test('failuresChargedToClient: failures count per client_id whatever their address, with no per-address total', async () => {
  const store = await broken(failuresChargedToClient)
  for (const address of ['127.0.0.1', '::1', '10.0.0.2']) {
    await store.rateLimits.hit(`token:authfail:${address}:app`, 0, 60)
    expect(await store.rateLimits.hit(`token:authfail:${address}`, 0, 60)).toBe(1)
  }
  expect(await store.rateLimits.count('token:authfail:192.0.2.9:app', 0)).toBe(3)
  expect(await store.rateLimits.count('token:client:app:failures', 0)).toBe(3)
  expect(await store.rateLimits.count('token:authfail:127.0.0.1', 0)).toBe(0)
  // the other counters count as ever
  await store.rateLimits.hit('token:client:app', 0, 60)
  expect(await store.rateLimits.count('token:client:app', 0)).toBe(1)
})

test('clientCountersUncounted: the per-client counters never count, the others do', async () => {
  const store = await broken(clientCountersUncounted)
  for (let i = 0; i < 3; i++) {
    expect(await store.rateLimits.hit('token:client:app', 0, 60)).toBe(1)
    expect(await store.rateLimits.hit('revoke:authfail:127.0.0.1:app', 0, 60)).toBe(1)
    await store.rateLimits.hit('token:ip:127.0.0.1', 0, 60)
  }
  expect(await store.rateLimits.count('token:client:app', 0)).toBe(0)
  expect(await store.rateLimits.count('token:ip:127.0.0.1', 0)).toBe(3)
})
