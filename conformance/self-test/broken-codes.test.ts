import { expect, test } from 'vitest'
import { wrappedStores } from './wrapped-stores.ts'
import {
  clientsOfEveryGrant,
  codesNeverExpire,
  codesSpentByAnyRequest,
  failedRedemptionsKeepCodes,
} from './broken-codes.ts'
import { storedCode, storedToken } from '../../server/test-helpers.ts'

// The store wrappers of the self-test's broken servers (issue 34: moved out of the server's
// store/faulty-store.ts). The hapi extensions are proven by the sabotages that use them.

const storeWrappedBy = wrappedStores()

const code = storedCode
const binding = { clientId: code.clientId, redirectUri: code.redirectUri }
const token = storedToken

test('codesSpentByAnyRequest: a request with another redirect_uri spends the code', async () => {
  const store = await storeWrappedBy(codesSpentByAnyRequest)
  await store.codes.insert(code)
  const wrong = { ...binding, redirectUri: 'https://client.example/other' }
  expect(await store.codes.consume(code.digest, 1001, wrong)).toMatchObject({ firstUse: true })
  expect(await store.codes.consume(code.digest, 1001, binding)).toMatchObject({ firstUse: false })
})

test('codesNeverExpire: a stored code reads as never expiring', async () => {
  const store = await storeWrappedBy(codesNeverExpire)
  await store.codes.insert(code)
  expect((await store.codes.consume(code.digest, 5000, binding))?.code.expiresAt).toBe(Infinity)
})

test('failedRedemptionsKeepCodes: a code stays redeemable until it has issued a token', async () => {
  const store = await storeWrappedBy(failedRedemptionsKeepCodes())
  await store.codes.insert(code)
  expect(await store.codes.consume(code.digest, 1001, binding)).toMatchObject({ firstUse: true })
  expect(await store.codes.consume(code.digest, 1001, binding)).toMatchObject({ firstUse: true })
  await store.tokens.insert(token({ codeDigest: code.digest }))
  expect(await store.codes.consume(code.digest, 1001, binding)).toMatchObject({ firstUse: false })
  // a request of another client or redirect_uri still spends nothing
  await store.codes.insert({ ...code, digest: 'other' })
  const wrong = { ...binding, clientId: 'other-client' }
  expect(await store.codes.consume('other', 1001, wrong)).toMatchObject({ unbound: true })
})

test('clientsOfEveryGrant: every client reads as registered for the three grants', async () => {
  const store = await storeWrappedBy(clientsOfEveryGrant)
  await store.clients.upsert(
    {
      id: 'code-only',
      secretDigest: 'x',
      name: 'Code only',
      redirectUris: ['https://client.example/callback'],
      postLogoutRedirectUris: [],
      grantTypes: ['authorization_code'],
      scopes: ['openid'],
      defaultScopes: [],
      roleDefinitions: {},
      clientRoles: [],
    },
    undefined,
  )
  expect((await store.clients.get('code-only'))?.grantTypes).toEqual([
    'authorization_code',
    'refresh_token',
    'client_credentials',
  ])
  expect(await store.clients.get('nobody')).toBeUndefined()
})
