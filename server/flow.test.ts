import { createHash, randomBytes } from 'node:crypto'
import type { ServerInjectResponse } from '@hapi/hapi'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { testApp } from './test-helpers.ts'

const CLIENT = { client_id: 'conformance-client', client_secret: 'conformance-secret' }
const REDIRECT = 'https://client.example/callback'

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

const cookiesOf = (res: ServerInjectResponse): string[] => {
  const set = res.headers['set-cookie']
  return (Array.isArray(set) ? set : set ? [set] : []).map((c) => c.split(';')[0] ?? '')
}

let app: App
beforeAll(async () => {
  app = await testApp()
})
afterAll(async () => {
  await app.stop()
})

/** Authorize, sign in as alice, and return the code and the session cookie. */
async function signIn(
  params: Record<string, string>,
  user = { username: 'alice', password: 'wonderland' },
) {
  const { verifier, challenge } = pkce()
  const query = new URLSearchParams({
    client_id: CLIENT.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid profile email offline_access',
    state: 'st-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  })
  const page = await app.server.inject(`/auth/authorize?${query}`)
  expect(page.statusCode).toBe(200)
  const interaction = /name="interaction" value="([^"]+)"/.exec(page.payload)?.[1] ?? ''
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.payload)?.[1] ?? ''
  const res = await app.server.inject({
    method: 'POST',
    url: '/auth/login',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookiesOf(page).join('; '),
    },
    payload: new URLSearchParams({ interaction, csrf, ...user, action: 'login' }).toString(),
  })
  return { res, verifier, page }
}

const redeem = (form: Record<string, string>) =>
  app.server.inject({
    method: 'POST',
    url: '/auth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT,
      ...CLIENT,
      ...form,
    }).toString(),
  })

describe('authorization code flow', () => {
  test('sign-in redirects with code and state, and the code redeems for the token set', async () => {
    const { res, verifier } = await signIn({ nonce: 'n-1' })
    expect(res.statusCode).toBe(303)
    const location = new URL(res.headers.location ?? '')
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
    expect(location.searchParams.get('state')).toBe('st-1')
    const code = location.searchParams.get('code') ?? ''
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const tokens = await redeem({ code, code_verifier: verifier })
    expect(tokens.statusCode).toBe(200)
    expect(tokens.headers['cache-control']).toBe('no-store')
    expect(tokens.headers.pragma).toBe('no-cache')
    const body = JSON.parse(tokens.payload) as Record<string, string>
    expect(Object.keys(body).sort()).toEqual([
      'access_token',
      'expires_in',
      'id_token',
      'refresh_token',
      'scope',
      'token_type',
    ])
    expect(decodeProtectedHeader(body.access_token ?? '')).toMatchObject({
      alg: 'RS256',
      typ: 'at+jwt',
    })
    expect(decodeJwt(body.access_token ?? '')).toMatchObject({
      sub: 'usr_8f14e45fceea167a',
      aud: 'conformance-client',
      roles: ['admin'],
      org_id: 'org-1',
    })
    expect(decodeJwt(body.id_token ?? '')).toMatchObject({
      nonce: 'n-1',
      email: 'alice@example.com',
      email_verified: true,
    })
    const replay = await redeem({ code, code_verifier: verifier })
    expect(replay.statusCode).toBe(400)
    expect(JSON.parse(replay.payload)).toMatchObject({ error: 'invalid_grant' })
  })

  test('of concurrent redemptions of one code exactly one succeeds', async () => {
    const { res, verifier } = await signIn({})
    const code = new URL(res.headers.location ?? '').searchParams.get('code') ?? ''
    const all = await Promise.all(
      Array.from({ length: 8 }, () => redeem({ code, code_verifier: verifier })),
    )
    expect(all.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400])
  })

  test('a wrong password re-renders the form with a generic error and issues no code', async () => {
    const { res } = await signIn({}, { username: 'alice', password: 'nope' })
    const unknown = await signIn({}, { username: 'nobody', password: 'nope' })
    expect(res.statusCode).toBe(401)
    expect(unknown.res.statusCode).toBe(401)
    expect(res.payload).toContain('Incorrect username or password.')
    expect(unknown.res.payload).toContain('Incorrect username or password.')
    expect(res.headers.location).toBeUndefined()
  })

  test('a live session skips the login page, and prompt=login shows it again', async () => {
    const { res } = await signIn({})
    const cookie = cookiesOf(res).find((c) => c.startsWith('__Host-idp_session=')) ?? ''
    const { challenge } = pkce()
    const query = new URLSearchParams({
      client_id: CLIENT.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    const silent = await app.server.inject({
      url: `/auth/authorize?${query}&prompt=none`,
      headers: { cookie },
    })
    expect(silent.statusCode).toBe(302)
    expect(new URL(silent.headers.location ?? '').searchParams.get('code')).toBeTruthy()
    const again = await app.server.inject({
      url: `/auth/authorize?${query}&prompt=login`,
      headers: { cookie },
    })
    expect(again.statusCode).toBe(200)
    const none = await app.server.inject(`/auth/authorize?${query}&prompt=none`)
    expect(new URL(none.headers.location ?? '').searchParams.get('error')).toBe('login_required')
  })
})
