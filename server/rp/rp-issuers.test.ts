import { createHash, randomBytes } from 'node:crypto'
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  importJWK,
  jwtVerify,
  type JSONWebKeySet,
  type JWK,
} from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../app.ts'
import { testApp } from '../test-helpers.ts'
import { RP_TESTS } from './catalogue.ts'
import { FOREIGN_AUDIENCE } from './plugin.ts'

const BASE = 'https://idp.test'
const REDIRECT = 'https://client.example/callback'
const form = { 'content-type': 'application/x-www-form-urlencoded' }

let app: App
beforeAll(async () => {
  app = await testApp({ explain: true })
})
afterAll(async () => {
  await app.stop()
})

const cookiesOf = (headers: Record<string, unknown>): string => {
  const set = headers['set-cookie']
  const list = Array.isArray(set) ? (set as string[]) : typeof set === 'string' ? [set] : []
  return list.map((c) => c.split(';')[0] ?? '').join('; ')
}

/** A whole sign-in at one test issuer, with `server.inject`: the callback and token response. */
async function signIn(
  test: string,
  options: { state?: string; nonce?: string; scope?: string } = {},
): Promise<{ callback: URL; tokens: Record<string, unknown>; status: number }> {
  const verifier = randomBytes(32).toString('base64url')
  const query = new URLSearchParams({
    client_id: 'conformance-client',
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: options.scope ?? 'openid profile offline_access',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...(options.state !== undefined ? { state: options.state } : {}),
    ...(options.nonce !== undefined ? { nonce: options.nonce } : {}),
  })
  const start = await app.server.inject(`/rp/${test}/auth/authorize?${query.toString()}`)
  expect(start.statusCode).toBe(302)
  const forwarded = new URL(start.headers.location ?? '')
  expect(forwarded.origin + forwarded.pathname).toBe(`${BASE}/auth/authorize`)
  const page = await app.server.inject(forwarded.pathname + forwarded.search)
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]+)"`).exec(page.payload)?.[1] ?? ''
  const login = await app.server.inject({
    method: 'POST',
    url: '/auth/login',
    headers: { ...form, cookie: cookiesOf(page.headers) },
    payload: new URLSearchParams({
      interaction: field('interaction'),
      csrf: field('csrf'),
      username: 'alice',
      password: 'wonderland',
      action: 'login',
    }).toString(),
  })
  const callback = new URL(login.headers.location ?? 'https://x.invalid')
  const res = await app.server.inject({
    method: 'POST',
    url: `/rp/${test}/auth/token`,
    headers: form,
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code') ?? '',
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: 'conformance-client',
      client_secret: 'conformance-secret',
    }).toString(),
  })
  return {
    callback,
    tokens: JSON.parse(res.payload) as Record<string, unknown>,
    status: res.statusCode,
  }
}

async function jwksOf(test: string): Promise<JSONWebKeySet> {
  const res = await app.server.inject(`/rp/${test}/.well-known/jwks.json`)
  return JSON.parse(res.payload) as JSONWebKeySet
}

/** Verifies as a correct client would; resolves to the claims or rejects with jose's reason. */
async function verify(test: string, idToken: unknown) {
  const { payload } = await jwtVerify(String(idToken), createLocalJWKSet(await jwksOf(test)), {
    issuer: `${BASE}/rp/${test}`,
    audience: 'conformance-client',
    algorithms: ['RS256'],
    requiredClaims: ['iat', 'exp', 'sub'],
  })
  return payload
}

/** Verifies with one given key of the test issuer's JWKS. */
async function verifyWith(test: string, idToken: unknown, key: JWK | undefined) {
  if (!key) throw new Error('no such key')
  const { payload } = await jwtVerify(String(idToken), await importJWK(key, 'RS256'), {
    issuer: `${BASE}/rp/${test}`,
    audience: 'conformance-client',
    algorithms: ['RS256'],
  })
  return payload
}

async function events(test: string) {
  const res = await app.server.inject(`/rp/${test}/observations`)
  return (
    JSON.parse(res.payload) as { events: { kind: string; detail?: string; finding?: string }[] }
  ).events
}

/** The test issuer's user-info, called with `token` as its Bearer token. */
const userInfoAt = (test: string, token: unknown) =>
  app.server.inject({
    url: `/rp/${test}/auth/user-info`,
    headers: { authorization: `Bearer ${String(token)}` },
  })

/** A refresh at the test issuer's token endpoint as conformance-client, `params` added. */
const refreshAt = (test: string, refreshToken: unknown, params: Record<string, string>) =>
  app.server.inject({
    method: 'POST',
    url: `/rp/${test}/auth/token`,
    headers: form,
    payload: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: String(refreshToken),
      client_id: 'conformance-client',
      ...params,
    }).toString(),
  })

describe('RP test issuers', () => {
  it("lists every test with its issuer, each ID a Foundation name (rp-… or its module's oidcc-client-test-…)", async () => {
    const res = await app.server.inject('/rp')
    const body = JSON.parse(res.payload) as { tests: { id: string; issuer: string }[] }
    expect(body.tests.map((t) => t.id)).toEqual(RP_TESTS.map((t) => t.id))
    for (const t of body.tests) {
      expect(t.id).toMatch(/^(rp-|oidcc-client-test-)/)
      expect(t.issuer).toBe(`${BASE}/rp/${t.id}`)
    }
  })

  it('serves a discovery document of its own issuer, endpoints under its path, and RFC 9207', async () => {
    const res = await app.server.inject('/rp/rp-id_token-aud/.well-known/openid-configuration')
    const doc = JSON.parse(res.payload) as Record<string, unknown>
    expect(doc.issuer).toBe(`${BASE}/rp/rp-id_token-aud`)
    expect(doc.token_endpoint).toBe(`${BASE}/rp/rp-id_token-aud/auth/token`)
    expect(doc.jwks_uri).toBe(`${BASE}/rp/rp-id_token-aud/.well-known/jwks.json`)
    expect(doc.authorization_response_iss_parameter_supported).toBe(true)
    expect(doc.end_session_endpoint).toBeUndefined()
    const seen = await events('rp-id_token-aud')
    expect(seen.at(-1)).toMatchObject({ kind: 'discovery' })
    expect(seen.map((e) => e.kind)).not.toContain('fault-delivered')
  })

  it('rp-discovery-issuer-not-matching-config: the document names another issuer, and so do the ID token and callback; a sign-in begun from it is a tainted use', async () => {
    const test = 'rp-discovery-issuer-not-matching-config'
    const since = app.deps.explain?.list().at(-1)?.seq ?? 0
    for (const path of ['openid-configuration', 'oauth-authorization-server']) {
      const res = await app.server.inject(`/rp/${test}/.well-known/${path}`)
      const doc = JSON.parse(res.payload) as Record<string, unknown>
      // fetched from {base}/rp/{test}, it says it is {base}: OIDC Discovery §4.3 forbids its use
      expect(doc.issuer).toBe(BASE)
      expect(doc.authorization_endpoint).toBe(`${BASE}/rp/${test}/auth/authorize`)
      expect(doc.jwks_uri).toBe(`${BASE}/rp/${test}/.well-known/jwks.json`)
    }
    let kinds = (await events(test)).map((e) => e.kind)
    expect(kinds).toEqual(['discovery', 'fault-delivered', 'discovery', 'fault-delivered'])
    const { callback, tokens } = await signIn(test, { state: 's', nonce: 'n' })
    // consistent with the document: only comparing the document with its URL catches the fault
    expect(callback.searchParams.get('iss')).toBe(BASE)
    const { payload } = await jwtVerify(
      String(tokens.id_token),
      createLocalJWKSet(await jwksOf(test)),
      { issuer: BASE, audience: 'conformance-client', algorithms: ['RS256'] },
    )
    expect(payload.nonce).toBe('n')
    await userInfoAt(test, tokens.access_token)
    const uses = (await events(test)).filter((e) => e.kind === 'tainted-use').map((e) => e.detail)
    expect(uses).toEqual([
      expect.stringMatching(/^started a sign-in at the authorization endpoint of a discovery/),
      expect.stringMatching(/^called user-info with the access token/),
    ])
    const findings = app.deps.explain?.list({ since }) ?? []
    expect(findings.map((f) => f.code)).toContain(`rp.${test}`)
    // the other tests' issuers are untouched
    kinds = (await events('rp-id_token-sig-rs256')).map((e) => e.kind)
    expect(kinds).not.toContain('tainted-use')
  })

  it('answers an unknown test with 404 in the JSON error shape', async () => {
    const res = await app.server.inject('/rp/rp-nonsense/.well-known/openid-configuration')
    expect(res.statusCode).toBe(404)
    expect(JSON.parse(res.payload)).toMatchObject({ error: 'invalid_request' })
  })

  it('the control signs in cleanly: state restored, iss of the test issuer, a verifiable ID token', async () => {
    const { callback, tokens } = await signIn('rp-id_token-sig-rs256', { state: 's1', nonce: 'n1' })
    expect(callback.searchParams.get('state')).toBe('s1')
    expect(callback.searchParams.get('iss')).toBe(`${BASE}/rp/rp-id_token-sig-rs256`)
    const claims = await verify('rp-id_token-sig-rs256', tokens.id_token)
    expect(claims.nonce).toBe('n1')
    expect(tokens.token_type).toBe('Bearer')
  })

  it('leaves the normal issuer alone: a normal sign-in keeps its iss and state', async () => {
    const { signInAndRedeem } = await import('../test-helpers.ts')
    const tokens = await signInAndRedeem(app, {
      username: 'alice',
      password: 'wonderland',
      scope: 'openid',
    })
    expect(decodeJwt(tokens.id_token ?? '').iss).toBe(BASE)
    const page = await app.server.inject(
      `/auth/authorize?${new URLSearchParams({ client_id: 'conformance-client', redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'rp.not-a-marker', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }).toString()}`,
    )
    expect(page.statusCode).toBe(200)
  })

  const refused: [string, RegExp][] = [
    ['rp-id_token-bad-sig-rs256-code-flow', /signature verification failed/],
    ['rp-id_token-issuer-mismatch', /unexpected "iss" claim value/],
    ['rp-id_token-aud', /unexpected "aud" claim value/],
    ['rp-id_token-expired', /"exp" claim timestamp check failed/],
    ['rp-id_token-iat', /missing required "iat" claim/],
    ['rp-id_token-kid-unknown', /no applicable key found/],
    ['rp-id_token-sub', /missing required "sub" claim/],
  ]
  it.each(refused)('%s: a correct verifier refuses its ID token', async (test, reason) => {
    const { tokens } = await signIn(test, { state: 's', nonce: 'n' })
    await expect(verify(test, tokens.id_token)).rejects.toThrow(reason)
    expect((await events(test)).map((e) => e.kind)).toContain('fault-delivered')
  })

  it('rp-id_token-alg-none-refused: an unsecured JWT', async () => {
    const { tokens } = await signIn('rp-id_token-alg-none-refused', { nonce: 'n' })
    expect(decodeProtectedHeader(String(tokens.id_token)).alg).toBe('none')
    expect(String(tokens.id_token).endsWith('.')).toBe(true)
  })

  it('rp-id_token-aud-multiple-no-azp: two audiences, no azp', async () => {
    const { tokens } = await signIn('rp-id_token-aud-multiple-no-azp', { nonce: 'n' })
    const claims = await verify('rp-id_token-aud-multiple-no-azp', tokens.id_token)
    expect(claims.aud).toEqual(['conformance-client', FOREIGN_AUDIENCE])
    expect(claims.azp).toBeUndefined()
  })

  it('rp-nonce-invalid and rp-nonce-missing change the nonce that was sent', async () => {
    const a = await signIn('rp-nonce-invalid', { nonce: 'sent' })
    expect((await verify('rp-nonce-invalid', a.tokens.id_token)).nonce).not.toBe('sent')
    const b = await signIn('rp-nonce-missing', { nonce: 'sent' })
    expect((await verify('rp-nonce-missing', b.tokens.id_token)).nonce).toBeUndefined()
  })

  it('rp-nonce-invalid does not apply to a client that sent no nonce, and says so', async () => {
    await signIn('rp-nonce-invalid', {})
    const last = (await events('rp-nonce-invalid')).filter((e) => e.kind === 'not-applicable')
    expect(last.at(-1)?.detail).toMatch(/no nonce/)
  })

  it('rp-id_token-bad-at_hash-code-flow: at_hash is not that of the access token', async () => {
    const { tokens } = await signIn('rp-id_token-bad-at_hash-code-flow', { nonce: 'n' })
    const claims = await verify('rp-id_token-bad-at_hash-code-flow', tokens.id_token)
    const expected = createHash('sha256')
      .update(String(tokens.access_token))
      .digest()
      .subarray(0, 16)
      .toString('base64url')
    expect(claims.at_hash).not.toBe(expected)
  })

  it('rp-token_type-missing drops token_type; rp-token-response-extra-members adds members', async () => {
    expect((await signIn('rp-token_type-missing')).tokens.token_type).toBeUndefined()
    const extra = (await signIn('rp-token-response-extra-members')).tokens
    expect(extra.rp_test_unknown_member).toBeDefined()
    expect(extra.token_type).toBe('Bearer')
  })

  it('rp-response-state-mismatch changes the state; redeeming its code is a tainted use and a finding', async () => {
    const since = app.deps.explain?.list().at(-1)?.seq ?? 0
    const { callback, status } = await signIn('rp-response-state-mismatch', { state: 'mine' })
    expect(callback.searchParams.get('state')).not.toBe('mine')
    expect(status).toBe(200)
    const kinds = (await events('rp-response-state-mismatch')).map((e) => e.kind)
    expect(kinds).toEqual(expect.arrayContaining(['fault-delivered', 'tainted-use']))
    const findings = app.deps.explain?.list({ since }) ?? []
    expect(findings.map((f) => f.code)).toContain('rp.rp-response-state-mismatch')
    expect(findings.find((f) => f.code === 'rp.rp-response-state-mismatch')?.title).toMatch(
      /^your client accepted/,
    )
  })

  it('rp-response-iss-mismatch answers with the normal issuer in iss', async () => {
    const { callback } = await signIn('rp-response-iss-mismatch', { state: 's' })
    expect(callback.searchParams.get('iss')).toBe(BASE)
    expect(callback.searchParams.get('state')).toBe('s')
  })

  it('rp-userinfo-bad-sub-claim: user-info sub differs; each answer is recorded, a later use of the token is no acceptance', async () => {
    const { tokens } = await signIn('rp-userinfo-bad-sub-claim', { nonce: 'n' })
    const idSub = (await verify('rp-userinfo-bad-sub-claim', tokens.id_token)).sub
    const call = () => userInfoAt('rp-userinfo-bad-sub-claim', tokens.access_token)
    const first = await call()
    expect((JSON.parse(first.payload) as { sub: string }).sub).not.toBe(idSub)
    let kinds = (await events('rp-userinfo-bad-sub-claim')).map((e) => e.kind)
    expect(kinds).toContain('userinfo')
    expect(kinds).toContain('fault-delivered')
    expect(kinds).not.toContain('tainted-use')
    // Core §5.3.4 forbids using the response, not the access token: what the client does with
    // the response is for its sign-in command to report
    await call()
    kinds = (await events('rp-userinfo-bad-sub-claim')).map((e) => e.kind)
    expect(kinds.filter((k) => k === 'userinfo')).toHaveLength(2)
    expect(kinds).not.toContain('tainted-use')
  })

  it("records the issuer's refusals with their cause: Basic client authentication, no PKCE", async () => {
    const test = 'rp-token-response-extra-members'
    const basic = await app.server.inject({
      method: 'POST',
      url: `/rp/${test}/auth/token`,
      headers: {
        ...form,
        authorization: `Basic ${Buffer.from('conformance-client:conformance-secret').toString('base64')}`,
      },
      payload:
        'grant_type=authorization_code&code=x&redirect_uri=https%3A%2F%2Fclient.example%2Fcallback',
    })
    expect(basic.statusCode).toBe(401)
    const refused = (await events(test)).filter((e) => e.kind === 'issuer-refused')
    expect(refused.at(-1)).toMatchObject({
      detail: expect.stringMatching(
        /^the token endpoint answered invalid_client: client authentication must use client_secret_post/,
      ) as unknown,
      finding: 'client-auth.basic',
    })
    const start = await app.server.inject(
      `/rp/${test}/auth/authorize?${new URLSearchParams({
        client_id: 'conformance-client',
        redirect_uri: REDIRECT,
        response_type: 'code',
        scope: 'openid',
        state: 's',
      }).toString()}`,
    )
    const forwarded = new URL(start.headers.location ?? '')
    const answer = await app.server.inject(forwarded.pathname + forwarded.search)
    expect(new URL(answer.headers.location ?? 'https://x.invalid').searchParams.get('error')).toBe(
      'invalid_request',
    )
    const last = (await events(test)).filter((e) => e.kind === 'issuer-refused').at(-1)
    expect(last).toMatchObject({ finding: 'pkce.missing' })
    expect(last?.detail).toMatch(/^the authorize endpoint answered invalid_request: /)
  })

  it('records a tainted access token used at user-info and a tainted refresh token redeemed', async () => {
    const test = 'rp-id_token-aud'
    const { tokens } = await signIn(test, { nonce: 'n' })
    await userInfoAt(test, tokens.access_token)
    const refreshed = await refreshAt(test, tokens.refresh_token, {
      client_secret: 'conformance-secret',
    })
    expect(refreshed.statusCode).toBe(200)
    const uses = (await events(test)).filter((e) => e.kind === 'tainted-use').map((e) => e.detail)
    expect(uses).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/user-info/),
        expect.stringMatching(/refresh/),
      ]),
    )
  })

  it('rp-key-rotation-op-sign-key-native signs with a new kid each time, published with the previous one', async () => {
    const test = 'rp-key-rotation-op-sign-key-native'
    const a = await signIn(test, { nonce: 'n' })
    const b = await signIn(test, { nonce: 'n' })
    const kidA = decodeProtectedHeader(String(a.tokens.id_token)).kid
    const kidB = decodeProtectedHeader(String(b.tokens.id_token)).kid
    expect(kidA).not.toBe(kidB)
    expect((await jwksOf(test)).keys.map((k) => k.kid)).toEqual([kidB, kidA])
    await verify(test, b.tokens.id_token)
  })

  it('rp-key-rotation-op-sign-key: the second sign-in replaces the key, and a JWKS kept from the first cannot verify it', async () => {
    const test = 'rp-key-rotation-op-sign-key'
    const first = await signIn(test, { nonce: 'n' })
    const kept = await jwksOf(test)
    const kidA = decodeProtectedHeader(String(first.tokens.id_token)).kid
    expect(kept.keys.map((k) => k.kid)).toEqual([kidA])
    await verify(test, first.tokens.id_token)
    // a JWKS fetched between the sign-ins is still the first key's
    expect((await jwksOf(test)).keys.map((k) => k.kid)).toEqual([kidA])
    const second = await signIn(test, { nonce: 'n' })
    const kidB = decodeProtectedHeader(String(second.tokens.id_token)).kid
    expect(kidB).not.toBe(kidA)
    expect((await jwksOf(test)).keys.map((k) => k.kid)).toEqual([kidB])
    await verify(test, second.tokens.id_token)
    await expect(
      jwtVerify(String(second.tokens.id_token), createLocalJWKSet(kept), {
        algorithms: ['RS256'],
      }),
    ).rejects.toThrow(/no applicable key found/)
    const kinds = (await events(test)).map((e) => e.kind)
    expect(kinds.filter((k) => k === 'key-rotated')).toHaveLength(1)
    expect(kinds.indexOf('key-rotated')).toBeGreaterThan(kinds.indexOf('token-issued'))
  })

  it('rp-jwks-two-keys publishes two keys and signs with the second', async () => {
    const test = 'rp-jwks-two-keys'
    const { tokens } = await signIn(test, { nonce: 'n' })
    const set = await jwksOf(test)
    expect(set.keys).toHaveLength(2)
    expect(decodeProtectedHeader(String(tokens.id_token)).kid).toBe(set.keys[1]?.kid)
    await verify(test, tokens.id_token)
  })

  it('rp-id_token-kid-absent-single-jwks: no kid anywhere, one key, and a correct verifier signs in', async () => {
    const test = 'rp-id_token-kid-absent-single-jwks'
    const { tokens } = await signIn(test, { nonce: 'n' })
    const set = await jwksOf(test)
    expect(set.keys).toHaveLength(1)
    expect(set.keys[0]?.kid).toBeUndefined()
    expect(decodeProtectedHeader(String(tokens.id_token)).kid).toBeUndefined()
    await verify(test, tokens.id_token)
  })

  it('rp-id_token-kid-absent-multiple-jwks: no kid anywhere, two keys, the second signs', async () => {
    const test = 'rp-id_token-kid-absent-multiple-jwks'
    const { tokens } = await signIn(test, { nonce: 'n' })
    const set = await jwksOf(test)
    expect(set.keys.map((k) => k.kid)).toEqual([undefined, undefined])
    expect(decodeProtectedHeader(String(tokens.id_token)).kid).toBeUndefined()
    // a verifier that picks by kid alone cannot choose (jose refuses), one that tries each
    // key in turn finds the second
    await expect(verify(test, tokens.id_token)).rejects.toThrow(/multiple matching keys/)
    const [first, second] = set.keys
    await expect(verifyWith(test, tokens.id_token, first)).rejects.toThrow(/signature/)
    await verifyWith(test, tokens.id_token, second)
  })

  it('rp-init-logout: its own end_session_endpoint records the hint, the URI and state, and redirects only for a hint it issued and a registered URI', async () => {
    const test = 'rp-init-logout'
    const doc = JSON.parse(
      (await app.server.inject(`/rp/${test}/.well-known/openid-configuration`)).payload,
    ) as Record<string, unknown>
    expect(doc.end_session_endpoint).toBe(`${BASE}/rp/${test}/auth/logout`)
    const { tokens } = await signIn(test, { state: 's', nonce: 'n' })
    const hint = String(tokens.id_token)
    const logoutCalls = async () =>
      (
        JSON.parse((await app.server.inject(`/rp/${test}/observations`)).payload) as {
          events: { kind: string; logout?: unknown; clientId?: string }[]
        }
      ).events.filter((e) => e.kind === 'logout')
    const logout = (params: Record<string, string>) =>
      app.server.inject(`/rp/${test}/auth/logout?${new URLSearchParams(params).toString()}`)
    const uri = 'https://client.example/logged-out'
    const ok = await logout({ id_token_hint: hint, post_logout_redirect_uri: uri, state: 'st 1' })
    expect(ok.statusCode).toBe(302)
    expect(ok.headers.location).toBe(`${uri}?state=st+1`)
    expect(String(ok.headers['set-cookie'])).toMatch(/__Host-idp_session=;/)
    // by POST as well (303), and without state none comes back
    const posted = await app.server.inject({
      method: 'POST',
      url: `/rp/${test}/auth/logout`,
      headers: form,
      payload: new URLSearchParams({
        id_token_hint: hint,
        post_logout_redirect_uri: uri,
      }).toString(),
    })
    expect(posted.statusCode).toBe(303)
    expect(posted.headers.location).toBe(uri)
    // never an open redirect: a foreign hint, no hint, an unregistered URI get the error page
    const { tokens: other } = await signIn('rp-id_token-sig-rs256')
    const wrong: Record<string, string>[] = [
      { id_token_hint: String(other.id_token), post_logout_redirect_uri: uri, state: 'x' },
      { client_id: 'conformance-client', post_logout_redirect_uri: uri, state: 'x' },
      { id_token_hint: hint, post_logout_redirect_uri: 'https://evil.example/', state: 'x' },
    ]
    for (const params of wrong) {
      const res = await logout(params)
      expect(res.statusCode, JSON.stringify(params)).toBe(400)
      expect(res.headers.location).toBeUndefined()
      expect(res.payload).toMatch(/Sign-out error/)
    }
    // a hint without a URI ends the session on the logged-out page
    expect((await logout({ id_token_hint: hint })).statusCode).toBe(200)
    const calls = await logoutCalls()
    expect(calls.map((e) => e.logout)).toEqual([
      { hint: 'issued-here', redirectUri: 'registered', state: true },
      { hint: 'issued-here', redirectUri: 'registered', state: false },
      { hint: 'not-issued-here', redirectUri: 'no-client', state: true },
      { hint: 'missing', redirectUri: 'registered', state: true },
      { hint: 'issued-here', redirectUri: 'not-registered', state: true },
      { hint: 'issued-here', redirectUri: 'missing', state: false },
    ])
    expect(calls[0]?.clientId).toBe('conformance-client')
    // bad input: the JSON error shape, recorded as a refusal; other issuers serve no logout
    const repeated = await app.server.inject(
      `/rp/${test}/auth/logout?state=a&state=b&id_token_hint=${hint}`,
    )
    expect(repeated.statusCode).toBe(400)
    expect(JSON.parse(repeated.payload)).toMatchObject({ error: 'invalid_request' })
    const elsewhere = await app.server.inject(
      `/rp/rp-id_token-aud/auth/logout?id_token_hint=${hint}`,
    )
    expect(elsewhere.statusCode).toBe(404)
    expect(JSON.parse(elsewhere.payload)).toMatchObject({ error: 'invalid_request' })
  })

  it('oidcc-client-test-missing-aud: an ID token without aud (nor azp); using its access token is a tainted use', async () => {
    const test = 'oidcc-client-test-missing-aud'
    const { tokens } = await signIn(test, { state: 's', nonce: 'n' })
    const claims = decodeJwt(String(tokens.id_token))
    expect(claims.aud).toBeUndefined()
    expect(claims.azp).toBeUndefined()
    expect(claims.sub).toBeDefined()
    // a correct verifier refuses it for the missing aud, everything else being right
    await expect(verify(test, tokens.id_token)).rejects.toThrow(/missing required "aud" claim/)
    await userInfoAt(test, tokens.access_token)
    const seen = await events(test)
    expect(seen.map((e) => e.kind)).toContain('fault-delivered')
    expect(seen.filter((e) => e.kind === 'tainted-use').map((e) => e.detail)).toEqual([
      expect.stringMatching(/^called user-info with the access token/),
    ])
  })

  it('oidcc-client-test-refresh-token: records the refresh, tells a refreshed access token at user-info from the sign-in one, and a refused refresh as one', async () => {
    const test = 'oidcc-client-test-refresh-token'
    const { tokens } = await signIn(test, { state: 's', nonce: 'n' })
    const userInfo = (token: unknown) => userInfoAt(test, token)
    const refresh = (params: Record<string, string>) =>
      refreshAt(test, tokens.refresh_token, params)
    expect((await userInfo(tokens.access_token)).statusCode).toBe(200)
    const refreshed = await refresh({ client_secret: 'conformance-secret' })
    expect(refreshed.statusCode).toBe(200)
    const fresh = JSON.parse(refreshed.payload) as Record<string, unknown>
    expect(fresh.access_token).not.toBe(tokens.access_token)
    expect((await userInfo(fresh.access_token)).statusCode).toBe(200)
    // RFC 6749 §6: a confidential client must authenticate its refresh
    const unauthenticated = await refresh({})
    expect(unauthenticated.statusCode).toBeGreaterThanOrEqual(400)
    expect((JSON.parse(unauthenticated.payload) as { error?: unknown }).error).toMatch(/^invalid_/)
    const seen = (await events(test)) as { kind: string; detail?: string; grant?: string }[]
    expect(seen.map((e) => [e.kind, e.grant])).toEqual([
      ['authorize', undefined],
      ['token-issued', undefined],
      ['userinfo', undefined],
      ['refreshed', undefined],
      ['userinfo', 'refresh_token'],
      ['issuer-refused', 'refresh_token'],
    ])
    expect(seen.at(-1)?.detail).toMatch(
      /^the token endpoint answered invalid_\w+: .*\(to a refresh_token grant\)$/,
    )
    // a token refreshed at another issuer is no refreshed token here
    const other = await signIn('rp-id_token-sig-rs256')
    const elsewhere = await refreshAt('rp-id_token-sig-rs256', other.tokens.refresh_token, {
      client_secret: 'conformance-secret',
    })
    await userInfo((JSON.parse(elsewhere.payload) as Record<string, unknown>).access_token)
    expect((await events(test)).at(-1)).toMatchObject({ kind: 'userinfo' })
    expect((await events(test)).at(-1)).not.toHaveProperty('grant')
  })

  for (const [test, back] of [
    ['rp-init-logout-other-state', 'another state'],
    ['rp-init-logout-no-state', 'no state'],
  ] as const)
    it(`${test}: a correct logout with state is redirected back with ${back}; one without state gets none, and no deviation is recorded`, async () => {
      const doc = JSON.parse(
        (await app.server.inject(`/rp/${test}/.well-known/openid-configuration`)).payload,
      ) as Record<string, unknown>
      expect(doc.end_session_endpoint).toBe(`${BASE}/rp/${test}/auth/logout`)
      const { tokens } = await signIn(test, { state: 's', nonce: 'n' })
      const uri = 'https://client.example/logged-out'
      const logout = (params: Record<string, string>) =>
        app.server.inject(
          `/rp/${test}/auth/logout?${new URLSearchParams({ id_token_hint: String(tokens.id_token), post_logout_redirect_uri: uri, ...params }).toString()}`,
        )
      const withState = await logout({ state: 'sent-state' })
      expect(withState.statusCode).toBe(302)
      const location = new URL(withState.headers.location ?? '')
      expect(location.origin + location.pathname).toBe(uri)
      if (test === 'rp-init-logout-other-state') {
        expect(location.searchParams.get('state')).toMatch(/^other-/)
        expect(location.searchParams.get('state')).not.toBe('sent-state')
      } else expect(location.searchParams.has('state')).toBe(false)
      const without = await logout({})
      expect(without.headers.location).toBe(uri)
      const seen = await events(test)
      expect(seen.map((e) => e.kind)).toEqual([
        'discovery',
        'authorize',
        'token-issued',
        'logout',
        'fault-delivered',
        'logout',
      ])
      // a faulty logout request gets the error page, as at rp-init-logout, and no deviation
      const foreign = await logout({ id_token_hint: 'not-a-token', state: 'x' })
      expect(foreign.statusCode).toBe(400)
      expect((await events(test)).at(-1)).toMatchObject({ kind: 'logout' })
    })

  it('the signed-in beacon of a negative test is recorded and raises its finding', async () => {
    const res = await app.server.inject(
      '/rp/rp-id_token-aud/signed-in?client_id=conformance-client',
    )
    expect(res.statusCode).toBe(204)
    const finding = app.deps.explain?.list().at(-1)
    expect(finding?.code).toBe('rp.rp-id_token-aud')
    expect(finding?.clientId).toBe('conformance-client')
  })
})

describe('RP test issuers switched off', () => {
  it('RP_TESTS=false serves no /rp, and production refuses them on', async () => {
    const off = await testApp({ rpTests: false })
    try {
      expect((await off.server.inject('/rp')).statusCode).toBe(404)
    } finally {
      await off.stop()
    }
    const { loadConfig } = await import('../config.ts')
    expect(loadConfig({ NODE_ENV: 'production' }, { baseUrl: BASE }).rpTests).toBe(false)
    expect(() =>
      loadConfig({ NODE_ENV: 'production', RP_TESTS: 'true' }, { baseUrl: BASE }),
    ).toThrow(/RP_TESTS cannot be on/)
  })
})
