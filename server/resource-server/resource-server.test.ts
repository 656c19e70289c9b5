import type { Server } from '@hapi/hapi'
import { generateKeyPair, SignJWT, type JSONWebKeySet } from 'jose'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from '../app.ts'
import { signInAndRedeem, testApp } from '../test-helpers.ts'
import { createExampleApi } from './example-api.ts'
import { createVerifier, VerifyError, type Verifier } from './verifier.ts'

let idp: App
let jwks: JSONWebKeySet
let verifier: Verifier
let api: Server
const tokens: Record<string, string> = {}

beforeAll(async () => {
  idp = await testApp()
  jwks = JSON.parse((await idp.server.inject('/.well-known/jwks.json')).payload) as JSONWebKeySet
  verifier = createVerifier({ issuer: 'https://idp.test', audience: 'conformance-client', jwks })
  api = await createExampleApi({ verifier })
  const scope = 'openid read:documents write:documents'
  const alice = await signInAndRedeem(idp, { username: 'alice', password: 'wonderland', scope })
  const bob = await signInAndRedeem(idp, { username: 'bob', password: 'builder', scope })
  const aliceRead = await signInAndRedeem(idp, {
    username: 'alice',
    password: 'wonderland',
    scope: 'openid read:documents',
  })
  Object.assign(tokens, {
    alice: alice.access_token,
    bob: bob.access_token,
    aliceRead: aliceRead.access_token,
    aliceId: alice.id_token,
  })
})
afterAll(async () => {
  await api.stop()
  await idp.stop()
})

const call = (method: string, url: string, token?: string) =>
  api.inject({
    method,
    url,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  })

describe('createVerifier', () => {
  test('accepts the reference server’s access tokens and exposes typed claims', async () => {
    const claims = await verifier.verify(tokens.alice)
    expect(claims).toMatchObject({
      sub: 'usr_8f14e45fceea167a',
      roles: ['admin'],
      org_id: 'org-1',
      client_id: 'conformance-client',
    })
    expect(claims.scopes).toEqual(['openid', 'read:documents', 'write:documents'])
  })

  test('refuses an ID token, a wrong audience, a foreign key, alg none and expiry, with typed errors', async () => {
    const code = async (p: Promise<unknown>) => {
      try {
        await p
        return 'accepted'
      } catch (err) {
        expect(err).toBeInstanceOf(VerifyError)
        expect((err as Error).message).not.toContain(tokens.alice?.slice(0, 20))
        return (err as VerifyError).code
      }
    }
    expect(await code(verifier.verify(tokens.aliceId))).toBe('wrong_type')
    expect(
      await code(
        createVerifier({ issuer: 'https://idp.test', audience: 'other-client', jwks }).verify(
          tokens.alice,
        ),
      ),
    ).toBe('wrong_audience')
    expect(
      await code(
        createVerifier({
          issuer: 'https://idp.test/',
          audience: 'conformance-client',
          jwks,
        }).verify(tokens.alice),
      ),
    ).toBe('wrong_issuer')
    const later = () => Math.floor(Date.now() / 1000) + 3600 + 60
    expect(
      await code(
        createVerifier({
          issuer: 'https://idp.test',
          audience: 'conformance-client',
          jwks,
          now: later,
        }).verify(tokens.alice),
      ),
    ).toBe('expired')
    const { privateKey } = await generateKeyPair('RS256')
    const [header] = (tokens.alice ?? '').split('.')
    const kid = (JSON.parse(Buffer.from(header ?? '', 'base64url').toString()) as { kid: string })
      .kid
    const forged = await new SignJWT({ scope: 'read:documents' })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid })
      .setIssuer('https://idp.test')
      .setAudience('conformance-client')
      .setSubject('x')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey)
    expect(await code(verifier.verify(forged))).toBe('bad_signature')
    const [, payload] = (tokens.alice ?? '').split('.')
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${payload ?? ''}.`
    expect(await code(verifier.verify(none))).toBe('malformed')
    expect(await code(verifier.verify(undefined))).toBe('missing')
    expect(await code(verifier.verify('x'.repeat(9000)))).toBe('malformed')
  })
})

describe('example API', () => {
  test('401 with a challenge without a token or with a bad one', async () => {
    const none = await call('GET', '/documents')
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer realm="documents"')
    const bad = await call('GET', '/documents', 'garbage')
    expect(bad.statusCode).toBe(401)
    expect(bad.headers['www-authenticate']).toMatch(/error="invalid_token"/)
  })

  test('tenant filter: each user sees only their organisation’s documents', async () => {
    const alice = JSON.parse((await call('GET', '/documents', tokens.alice)).payload) as {
      documents: { id: string }[]
    }
    const bob = JSON.parse((await call('GET', '/documents', tokens.bob)).payload) as {
      documents: { id: string }[]
    }
    expect(alice.documents.map((d) => d.id)).toEqual(['doc-1', 'doc-2'])
    expect(bob.documents.map((d) => d.id)).toEqual(['doc-3'])
    expect((await call('GET', '/documents/doc-3', tokens.alice)).statusCode).toBe(403)
  })

  test('scope check: a token without write:documents cannot delete', async () => {
    const res = await call('DELETE', '/documents/doc-1', tokens.aliceRead)
    expect(res.statusCode).toBe(403)
    expect(JSON.parse(res.payload)).toMatchObject({ error: 'insufficient_scope' })
    expect(res.headers['www-authenticate']).toMatch(/scope="write:documents"/)
  })

  test('role and ownership: only admins reach /admin/users; the admin may delete another’s document', async () => {
    expect((await call('GET', '/admin/users', tokens.bob)).statusCode).toBe(403)
    expect((await call('GET', '/admin/users', tokens.alice)).statusCode).toBe(200)
    expect((await call('DELETE', '/documents/doc-2', tokens.alice)).statusCode).toBe(204)
  })
})
