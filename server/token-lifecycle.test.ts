import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { signInAndRedeem, testApp } from './test-helpers.ts'

let app: App
beforeAll(async () => {
  app = await testApp()
})
afterAll(async () => {
  await app.stop()
})

const SERVICE = { client_id: 'service-client', client_secret: 'service-secret' }
const MAIN = { client_id: 'conformance-client', client_secret: 'conformance-secret' }

const post = (url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  app.server.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
  })

const json = (res: { payload: string }) => JSON.parse(res.payload) as Record<string, unknown>

async function serviceToken(scope?: string): Promise<string> {
  const res = await post('/auth/token', {
    grant_type: 'client_credentials',
    ...SERVICE,
    ...(scope ? { scope } : {}),
  })
  expect(res.statusCode).toBe(200)
  return json(res).access_token as string
}

describe('client credentials, introspection and revocation', () => {
  test('a client_credentials token introspects active, and inactive once revoked', async () => {
    const token = await serviceToken()
    const active = json(await post('/auth/introspect', { token, ...SERVICE }))
    expect(active).toMatchObject({
      active: true,
      client_id: 'service-client',
      sub: 'service-client',
      scope: 'api:reports',
      token_type: 'Bearer',
    })
    const revoked = await post('/auth/revoke', { token, ...SERVICE })
    expect(revoked.statusCode).toBe(200)
    expect(json(revoked)).toEqual({ message: 'the token is no longer active' })
    expect(json(await post('/auth/introspect', { token, ...SERVICE }))).toEqual({ active: false })
    // revoking again, or revoking garbage, is the same 200
    expect(json(await post('/auth/revoke', { token, ...SERVICE }))).toEqual({
      message: 'the token is no longer active',
    })
    expect((await post('/auth/revoke', { token: 'garbage', ...SERVICE })).statusCode).toBe(200)
  })

  test('another client sees another client’s token as inactive and cannot revoke it', async () => {
    const token = await serviceToken()
    expect(json(await post('/auth/introspect', { token, ...MAIN }))).toEqual({ active: false })
    await post('/auth/revoke', { token, ...MAIN })
    expect(json(await post('/auth/introspect', { token, ...SERVICE }))).toMatchObject({
      active: true,
    })
  })

  test('introspection and revocation need client authentication', async () => {
    const token = await serviceToken()
    for (const url of ['/auth/introspect', '/auth/revoke']) {
      const res = await post(url, { token, client_id: 'service-client', client_secret: 'wrong' })
      expect(res.statusCode).toBe(401)
      expect(json(res)).toMatchObject({ error: 'invalid_client' })
      const missing = await post(url, { ...SERVICE })
      expect(missing.statusCode).toBe(400)
      expect(json(missing)).toMatchObject({ error: 'invalid_request' })
    }
  })

  test('client_credentials never grants user scopes and respects the client scope set', async () => {
    for (const scope of ['openid', 'api:reports offline_access', 'write:documents', 'nope']) {
      const res = await post('/auth/token', { grant_type: 'client_credentials', ...SERVICE, scope })
      expect(res.statusCode).toBe(400)
      expect(json(res)).toMatchObject({ error: 'invalid_scope' })
    }
    expect(
      (
        await post('/auth/token', {
          grant_type: 'client_credentials',
          ...SERVICE,
          scope: 'read:documents api:reports',
        })
      ).statusCode,
    ).toBe(200)
  })
})

describe('user-info', () => {
  test('no token: 401 with a bare Bearer challenge', async () => {
    const res = await app.server.inject('/auth/user-info')
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe('Bearer realm="idp"')
  })

  test('a token without openid is insufficient_scope (403)', async () => {
    const token = await serviceToken()
    const res = await app.server.inject({
      url: '/auth/user-info',
      headers: { authorization: `bearer ${token}` },
    })
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toMatch(/error="insufficient_scope"/)
  })

  test('a revoked or garbage token is invalid_token (401)', async () => {
    const token = await serviceToken()
    await post('/auth/revoke', { token, ...SERVICE })
    for (const t of [token, 'garbage', `${token}x`]) {
      const res = await app.server.inject({
        url: '/auth/user-info',
        headers: { authorization: `Bearer ${t}` },
      })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/)
      expect(json(res)).toMatchObject({ error: 'invalid_token' })
    }
  })

  test('header and body token together is invalid_request', async () => {
    const token = await serviceToken()
    const res = await post(
      '/auth/user-info',
      { access_token: token },
      { authorization: `Bearer ${token}` },
    )
    expect(res.statusCode).toBe(400)
    expect(json(res)).toMatchObject({ error: 'invalid_request' })
  })
})

describe('user tokens: refresh, user-info and the revocation cascade', () => {
  const alice = { username: 'alice', password: 'wonderland' }
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

  test('POST user-info with only the Authorization header and no body is answered', async () => {
    const tokens = await signInAndRedeem(app, { ...alice, scope: 'openid profile' })
    const res = await app.server.inject({
      method: 'POST',
      url: '/auth/user-info',
      headers: bearer(tokens.access_token ?? ''),
    })
    expect(res.statusCode).toBe(200)
    expect(Object.keys(json(res)).sort()).toEqual(['name', 'picture', 'sub', 'updated_at'])
  })

  test('a narrowed refresh leaves the grant whole; a wider one is invalid_scope', async () => {
    const full = 'openid profile email offline_access read:documents'
    const tokens = await signInAndRedeem(app, { ...alice, scope: full })
    const refresh = (scope?: string) =>
      post('/auth/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token ?? '',
        ...MAIN,
        ...(scope ? { scope } : {}),
      })
    const narrowed = await refresh('openid read:documents')
    expect(json(narrowed)).toMatchObject({ scope: 'openid read:documents' })
    expect(json(narrowed)).not.toHaveProperty('refresh_token')
    expect(json(await refresh())).toMatchObject({ scope: full })
    const wider = await refresh('openid write:documents')
    expect(wider.statusCode).toBe(400)
    expect(json(wider)).toMatchObject({ error: 'invalid_scope' })
  })

  test('revoking a refresh token revokes the access tokens of its grant', async () => {
    const tokens = await signInAndRedeem(app, { ...alice, scope: 'openid offline_access' })
    const rt = tokens.refresh_token ?? ''
    const minted = await post('/auth/token', {
      grant_type: 'refresh_token',
      refresh_token: rt,
      ...MAIN,
    })
    const accessTokens = [tokens.access_token ?? '', json(minted).access_token as string]
    expect((await post('/auth/revoke', { token: rt, ...MAIN })).statusCode).toBe(200)
    for (const token of [rt, ...accessTokens])
      expect(json(await post('/auth/introspect', { token, ...MAIN }))).toEqual({ active: false })
    for (const token of accessTokens) {
      const res = await app.server.inject({ url: '/auth/user-info', headers: bearer(token) })
      expect(res.statusCode).toBe(401)
    }
  })
})

describe('races on one SQLite file', () => {
  test('concurrent refresh, revoke and introspect of one token: no 5xx, and revoked after', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'races-')), 'idp.sqlite')
    const onFile = await testApp({ databaseUrl: `sqlite:${file}` })
    try {
      const tokens = await signInAndRedeem(onFile, {
        username: 'alice',
        password: 'wonderland',
        scope: 'openid offline_access',
      })
      const rt = tokens.refresh_token ?? ''
      const at = tokens.access_token ?? ''
      expect(rt).toMatch(/\S{20,}/)
      const form = (url: string, body: Record<string, string>) =>
        onFile.server.inject({
          method: 'POST',
          url,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ ...body, ...MAIN }).toString(),
        })
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          i % 3 === 0
            ? form('/auth/token', { grant_type: 'refresh_token', refresh_token: rt })
            : i % 3 === 1
              ? form('/auth/revoke', { token: rt })
              : form('/auth/introspect', { token: at }),
        ),
      )
      expect(results.map((r) => r.statusCode).filter((s) => s >= 500)).toEqual([])
      for (const r of results.filter((x) => x.statusCode === 400))
        expect(json(r).error).toBe('invalid_grant')
      const after = await form('/auth/token', { grant_type: 'refresh_token', refresh_token: rt })
      expect(after.statusCode).toBe(400)
      expect(json(await form('/auth/introspect', { token: at })).active).toBe(false)
    } finally {
      await onFile.stop()
    }
  })
})
