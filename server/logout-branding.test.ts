import { createHash, randomBytes } from 'node:crypto'
import type { ServerInjectResponse } from '@hapi/hapi'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { testApp } from './test-helpers.ts'

let app: App
let now = Math.floor(Date.now() / 1000)
beforeAll(async () => {
  app = await testApp(
    {
      rateLimits: {
        token: { limit: 3, window: 60 },
        introspect: { limit: 100, window: 60 },
        revoke: { limit: 100, window: 60 },
        userinfo: { limit: 100, window: 60 },
        login: { limit: 100, window: 60 },
        loginaddress: { limit: 100, window: 60 },
        public: { limit: 100, window: 60 },
      },
    },
    { clock: () => now },
  )
})
afterAll(async () => {
  await app.stop()
})

const cookiesOf = (res: ServerInjectResponse): string[] => {
  const set = res.headers['set-cookie']
  return (Array.isArray(set) ? set : set ? [set] : []).map((c) => c.split(';')[0] ?? '')
}
const form = (url: string, body: Record<string, string>, cookie = '') =>
  app.server.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: new URLSearchParams(body).toString(),
  })

/** Signs alice in; returns the session cookie and an ID token. */
async function signIn(): Promise<{ session: string; idToken: string }> {
  // a fresh token-limit window (3 per minute here), so every sign-in can redeem its code
  now += 60
  const verifier = randomBytes(32).toString('base64url')
  const query = new URLSearchParams({
    client_id: 'conformance-client',
    redirect_uri: 'https://client.example/callback',
    response_type: 'code',
    scope: 'openid',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })
  const page = await app.server.inject(`/auth/authorize?${query}`)
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]+)"`).exec(page.payload)?.[1] ?? ''
  const login = await form(
    '/auth/login',
    {
      interaction: field('interaction'),
      csrf: field('csrf'),
      username: 'alice',
      password: 'wonderland',
      action: 'login',
    },
    cookiesOf(page).join('; '),
  )
  const session = cookiesOf(login).find((c) => c.startsWith('__Host-idp_session=')) ?? ''
  const code = new URL(login.headers.location ?? '').searchParams.get('code') ?? ''
  const tokens = await form('/auth/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: 'https://client.example/callback',
    client_id: 'conformance-client',
    client_secret: 'conformance-secret',
  })
  return { session, idToken: (JSON.parse(tokens.payload) as { id_token: string }).id_token }
}

describe('logout', () => {
  test('a valid hint and a registered URI: redirect with exactly state, and the session ends', async () => {
    const { session, idToken } = await signIn()
    const res = await app.server.inject({
      url: `/auth/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: 'https://client.example/logged-out', state: 's1' })}`,
      headers: { cookie: session },
    })
    expect(res.statusCode).toBe(302)
    expect(res.headers.location).toBe('https://client.example/logged-out?state=s1')
    const after = await app.server.inject({
      url: '/auth/authorize?client_id=conformance-client&redirect_uri=https%3A%2F%2Fclient.example%2Fcallback&response_type=code&scope=openid&prompt=none&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256',
      headers: { cookie: session },
    })
    expect(new URL(after.headers.location ?? '').searchParams.get('error')).toBe('login_required')
  })

  test('an expired hint still identifies the client; without state the redirect has no query', async () => {
    const { session, idToken } = await signIn()
    now += 7200
    try {
      const res = await app.server.inject({
        url: `/auth/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: 'https://client.example/logged-out' })}`,
        headers: { cookie: session },
      })
      expect(res.headers.location).toBe('https://client.example/logged-out')
    } finally {
      now -= 7200
    }
  })

  test('unregistered URIs, tampered hints and no hint never redirect', async () => {
    const { idToken } = await signIn()
    const [h, p, s] = idToken.split('.')
    const tampered = `${h ?? ''}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p ?? '', 'base64url').toString()), aud: 'other-client' })).toString('base64url')}.${s ?? ''}`
    const cases: Record<string, string>[] = [
      { id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/' },
      { id_token_hint: idToken, post_logout_redirect_uri: 'https://client.example/logged-out?x=1' },
      { id_token_hint: idToken, post_logout_redirect_uri: 'https://other.example/logged-out' },
      { id_token_hint: tampered, post_logout_redirect_uri: 'https://client.example/logged-out' },
      { post_logout_redirect_uri: 'https://client.example/logged-out' },
    ]
    for (const params of cases) {
      const res = await app.server.inject(`/auth/logout?${new URLSearchParams(params)}`)
      expect(res.headers.location).toBeUndefined()
      expect(res.headers['content-type']).toMatch(/text\/html/)
    }
  })

  test('a POST with the session cookie behaves as the GET, with 303', async () => {
    const { session, idToken } = await signIn()
    const res = await form(
      '/auth/logout',
      {
        id_token_hint: idToken,
        post_logout_redirect_uri: 'https://client.example/logged-out',
        state: 's2',
      },
      session,
    )
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('https://client.example/logged-out?state=s2')
    expect(cookiesOf(res)).toContain('__Host-idp_session=')
  })

  test('a cross-site POST (no Lax session cookie) is turned into a GET that carries it', async () => {
    const params = {
      id_token_hint: 'h.i.nt',
      post_logout_redirect_uri: 'https://client.example/logged-out',
      state: 's3',
    }
    const res = await form('/auth/logout', params)
    expect(res.statusCode).toBe(303)
    const location = new URL(res.headers.location ?? '')
    expect(location.pathname).toBe('/auth/logout')
    expect(Object.fromEntries(location.searchParams)).toEqual(params)
  })

  test('without a hint the user confirms, then the session ends', async () => {
    const { session } = await signIn()
    const page = await app.server.inject({ url: '/auth/logout', headers: { cookie: session } })
    expect(page.statusCode).toBe(200)
    expect(page.payload).toContain('Sign out?')
    const field = (name: string) =>
      new RegExp(`name="${name}" value="([^"]+)"`).exec(page.payload)?.[1] ?? ''
    const done = await form(
      '/auth/logout',
      { interaction: field('interaction'), csrf: field('csrf'), action: 'confirm' },
      [session, ...cookiesOf(page)].join('; '),
    )
    expect(done.statusCode).toBe(200)
    expect(done.payload).toContain('You are signed out')
  })
})

describe('branding', () => {
  test('returns exactly the public record', async () => {
    const res = await app.server.inject('/auth/branding?client_id=conformance-client')
    expect(JSON.parse(res.payload)).toEqual({
      logo_url: 'https://client.example/logo.png',
      brand_color: '#1A73E8',
      application_name: 'Conformance Client',
      privacy_policy_url: 'https://client.example/privacy',
      terms_of_service_url: 'https://client.example/terms',
    })
  })
  test('missing and unknown client ids are JSON errors', async () => {
    expect((await app.server.inject('/auth/branding')).statusCode).toBe(400)
    const unknown = await app.server.inject('/auth/branding?client_id=nope')
    expect(unknown.statusCode).toBe(404)
    expect(JSON.parse(unknown.payload)).toMatchObject({ error: 'invalid_request' })
  })
})

describe('rate limiting', () => {
  test('counts per client_id, sends the headers, and answers 429 with Retry-After past the limit', async () => {
    const attempt = () =>
      form('/auth/token', {
        grant_type: 'client_credentials',
        client_id: 'probe-client',
        client_secret: 'x',
      })
    const seen = []
    for (let i = 0; i < 4; i++) seen.push(await attempt())
    expect(seen.map((r) => r.statusCode)).toEqual([401, 401, 401, 429])
    expect(seen.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0'])
    expect(seen[3]?.headers['retry-after']).toMatch(/^\d+$/)
    expect(JSON.parse(seen[3]?.payload ?? '')).toMatchObject({ error: 'temporarily_unavailable' })
    expect(Number(seen[0]?.headers['x-ratelimit-reset'])).toBeGreaterThan(now)
    // another client id has its own budget
    const other = await form('/auth/token', {
      grant_type: 'client_credentials',
      client_id: 'service-client',
      client_secret: 'service-secret',
    })
    expect(other.statusCode).toBe(200)
    expect(other.headers['x-ratelimit-limit']).toBe('3')
  })
})
