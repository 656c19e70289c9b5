import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as oidc from 'openid-client'
import { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from '../app.ts'
import { loadConfig, type Config } from '../config.ts'
import type { TlsMaterial } from '../tls.ts'
import { listeningApp, testApp, windowFromNow } from '../test-helpers.ts'
import type { Finding } from './findings.ts'

/**
 * Client-check mode at the HTTP boundary: a real HTTPS server with an integrator's clients
 * file, a well-behaved openid-client that must cause no finding, and a scripted client that
 * makes each mistake once and must cause exactly the finding for it.
 */

const dir = mkdtempSync(join(tmpdir(), 'explain-'))
const clientsFile = join(dir, 'clients.json')
writeFileSync(
  clientsFile,
  JSON.stringify({
    clients: [
      {
        client_id: 'my-app',
        client_secret: 'my-app-secret',
        // a native app: loopback redirect, any port at run time (RFC 8252 §7.3)
        redirect_uris: ['http://127.0.0.1:3000/cb'],
        scopes: ['openid', 'profile', 'email', 'offline_access', 'read:notes'],
        roles: { editor: ['read:notes'] },
      },
      {
        client_id: 'my-service',
        client_secret: 'my-service-secret',
        grant_types: ['client_credentials'],
        scopes: ['read:notes'],
        default_scopes: ['read:notes'],
      },
    ],
  }),
)
const usersFile = join(dir, 'users.json')
writeFileSync(
  usersFile,
  JSON.stringify({
    users: [
      {
        username: 'carol',
        password: 'carol-password',
        name: 'Carol',
        email: 'carol@example.com',
        org_id: 'org-7',
        roles: { 'my-app': ['editor'] },
      },
    ],
  }),
)

const REDIRECT = 'http://127.0.0.1:54321/cb'
const APP = { id: 'my-app', secret: 'my-app-secret' }

let app: App
let base: string
let agent: Agent
// the token limit and its window, which the polling test lowers and starts when it begins
let tokenLimit = windowFromNow(10_000, 60)
const printed: Finding[] = []

const get = (url: string, init: RequestInit = {}) =>
  fetch(url, { ...init, redirect: 'manual', dispatcher: agent } as RequestInit)
const form = (path: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
  get(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body).toString(),
  })

beforeAll(async () => {
  let tls: TlsMaterial
  let port: number
  ;({ app, tls, port } = await listeningApp(
    {},
    {
      env: { CLIENTS_FILE: clientsFile, USERS_FILE: usersFile, EXPLAIN: 'true' },
      options: (config) => ({
        rateLimits: (): Config['rateLimits'] => ({ ...config.rateLimits, token: tokenLimit }),
        onFinding: (f) => printed.push(f),
      }),
    },
  ))
  base = `https://127.0.0.1:${port}`
  agent = new Agent({ connect: { ca: tls.ca } })
})
afterAll(async () => {
  await app.stop()
  await agent.close()
})

async function findingsSince(since: number): Promise<Finding[]> {
  const res = await get(`${base}/dev/findings.json?since=${since}`)
  expect(res.status).toBe(200)
  return ((await res.json()) as { findings: Finding[] }).findings
}
const lastSeq = async (): Promise<number> =>
  ((await (await get(`${base}/dev/findings.json`)).json()) as { last_seq: number }).last_seq

/** Runs `act` and returns the codes of the findings it caused. */
async function findingsOf(act: () => Promise<unknown>): Promise<string[]> {
  const since = await lastSeq()
  await act()
  return (await findingsSince(since)).map((f) => f.code)
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** The browser's part, by hand: open the login page, sign in as carol, return the callback. */
async function signIn(authorizeUrl: string): Promise<URL> {
  const page = await get(authorizeUrl)
  const html = await page.text()
  expect(page.status, html).toBe(200)
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? ''
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  const login = await form(
    '/auth/login',
    {
      interaction: field('interaction'),
      csrf: field('csrf'),
      username: 'carol',
      password: 'carol-password',
      action: 'login',
    },
    { cookie },
  )
  expect(login.status).toBe(303)
  return new URL(login.headers.get('location') ?? '')
}

/** A scripted authorize request: S256, state and nonce unless `params` says otherwise. */
function authorizeUrl(params: Record<string, string | undefined> = {}) {
  const { verifier, challenge } = pkce()
  const all: Record<string, string | undefined> = {
    client_id: APP.id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid profile offline_access',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  }
  const query = new URLSearchParams(
    Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined),
  )
  return { url: `${base}/auth/authorize?${query}`, verifier }
}

async function codeFor(params: Record<string, string | undefined> = {}) {
  const { url, verifier } = authorizeUrl(params)
  const callback = await signIn(url)
  return { code: callback.searchParams.get('code') ?? '', verifier }
}

const redeem = (code: string, verifier: string, extra: Record<string, string> = {}) =>
  form('/auth/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: APP.id,
    client_secret: APP.secret,
    ...extra,
  })

async function tokens(): Promise<Record<string, string>> {
  const { code, verifier } = await codeFor()
  const res = await redeem(code, verifier)
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, string>
}

describe('explain mode with an integrator’s clients file', () => {
  test('a well-behaved openid-client (the suite’s defaults) causes no finding at all', async () => {
    const customFetch: oidc.CustomFetch = (url, options) =>
      fetch(url, { ...options, dispatcher: agent } as RequestInit)
    const config = await oidc.discovery(
      new URL(base),
      APP.id,
      undefined,
      oidc.ClientSecretPost(APP.secret),
      { [oidc.customFetch]: customFetch },
    )
    const service = await oidc.discovery(
      new URL(base),
      'my-service',
      undefined,
      oidc.ClientSecretPost('my-service-secret'),
      { [oidc.customFetch]: customFetch },
    )
    const codes = await findingsOf(async () => {
      const verifier = oidc.randomPKCECodeVerifier()
      const state = oidc.randomState()
      const nonce = oidc.randomNonce()
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: 'openid profile email offline_access read:notes',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      })
      const callback = await signIn(url.href)
      const grant = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
      })
      expect(grant.claims()?.sub).toMatch(/^usr_/)
      const info = await oidc.fetchUserInfo(config, grant.access_token, grant.claims()?.sub ?? '')
      expect(info.email).toBe('carol@example.com')
      const refreshed = await oidc.refreshTokenGrant(config, grant.refresh_token ?? '')
      expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(true)
      await oidc.tokenRevocation(config, refreshed.refresh_token ?? grant.refresh_token ?? '')
      const cc = await oidc.clientCredentialsGrant(service, { scope: 'read:notes' })
      expect(cc.access_token).toBeTruthy()
    })
    expect(codes).toEqual([])
  })

  test('an authorize request without state', async () => {
    expect(await findingsOf(() => get(authorizeUrl({ state: undefined }).url))).toEqual([
      'authorize.no-state',
    ])
  })

  test('an openid authorize request without nonce', async () => {
    expect(await findingsOf(() => get(authorizeUrl({ nonce: undefined }).url))).toEqual([
      'authorize.no-nonce',
    ])
  })

  test('PKCE plain, explicit or by omitting the method', async () => {
    const verifier = randomBytes(32).toString('base64url')
    for (const method of ['plain', undefined]) {
      const codes = await findingsOf(async () => {
        const res = await get(
          authorizeUrl({ code_challenge: verifier, code_challenge_method: method }).url,
        )
        // refused: back to the client with invalid_request
        expect(new URL(res.headers.get('location') ?? '').searchParams.get('error')).toBe(
          'invalid_request',
        )
      })
      expect(codes).toEqual(['pkce.plain'])
    }
  })

  test('a code_verifier outside 43-128 characters', async () => {
    const { code } = await codeFor()
    const codes = await findingsOf(async () => {
      const res = await redeem(code, 'too-short')
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error_description: string }).error_description).toMatch(
        /43 to 128 characters.*this one has 9/,
      )
    })
    expect(codes).toEqual(['pkce.verifier-length'])
  })

  test('a code redeemed twice', async () => {
    const { code, verifier } = await codeFor()
    expect(await findingsOf(() => redeem(code, verifier))).toEqual([])
    expect(await findingsOf(() => redeem(code, verifier))).toEqual(['code.reused'])
  })

  test('a redirect_uri at the token endpoint that differs from the authorize request', async () => {
    const { code, verifier } = await codeFor()
    // registered (any loopback port), but not the one the authorize request used
    const codes = await findingsOf(() =>
      redeem(code, verifier, { redirect_uri: 'http://127.0.0.1:3000/cb' }),
    )
    expect(codes).toEqual(['code.redirect-uri-mismatch'])
  })

  test('client credentials in a Basic header', async () => {
    const basic = Buffer.from(`${APP.id}:${APP.secret}`).toString('base64')
    const codes = await findingsOf(async () => {
      const res = await form(
        '/auth/token',
        { grant_type: 'client_credentials' },
        { authorization: `Basic ${basic}` },
      )
      expect(res.status).toBe(401)
    })
    expect(codes).toEqual(['client-auth.basic'])
    expect(JSON.stringify(await findingsSince(0))).not.toContain(basic)
  })

  test('a missing, wrong or unknown client credential is named, though the answer is the same invalid_client', async () => {
    const cc = (body: Record<string, string>) =>
      form('/auth/token', { grant_type: 'client_credentials', ...body })
    const cases: [Record<string, string>, string][] = [
      [{ client_id: APP.id }, 'client-auth.missing-secret'],
      [{ client_id: APP.id, client_secret: 'not-the-secret' }, 'client-auth.wrong-secret'],
      [{ client_id: 'no-such-app', client_secret: APP.secret }, 'client-auth.unknown-client'],
    ]
    const bodies: unknown[] = []
    for (const [body, code] of cases) {
      const codes = await findingsOf(async () => {
        const res = await cc(body)
        expect(res.status).toBe(401)
        bodies.push(await res.json())
      })
      expect(codes, code).toEqual([code])
    }
    // the findings tell the integrator; the answers still tell an attacker nothing
    expect(bodies[1]).toEqual(bodies[2])
    expect(JSON.stringify(await findingsSince(0))).not.toContain('not-the-secret')
  })

  test('a token in the query string', async () => {
    const { access_token } = await tokens()
    const codes = await findingsOf(() => get(`${base}/auth/user-info?access_token=${access_token}`))
    expect(codes).toEqual(['token.in-query'])
    expect(JSON.stringify(await findingsSince(0))).not.toContain(access_token)
  })

  test('a refresh token used by another client', async () => {
    const { refresh_token } = await tokens()
    const codes = await findingsOf(() =>
      form('/auth/token', {
        grant_type: 'refresh_token',
        refresh_token: refresh_token ?? '',
        client_id: 'conformance-client',
        client_secret: 'conformance-secret',
      }),
    )
    expect(codes).toEqual(['refresh.other-client'])
  })

  test('an ID token sent as an access token', async () => {
    const { id_token } = await tokens()
    const codes = await findingsOf(async () => {
      const res = await get(`${base}/auth/user-info`, {
        headers: { authorization: `Bearer ${id_token}` },
      })
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(/is an ID token/)
    })
    expect(codes).toEqual(['id-token-as-access-token'])
  })

  test('polling the token endpoint into the rate limit: one finding per window', async () => {
    tokenLimit = windowFromNow(3, 60)
    try {
      const codes = await findingsOf(async () => {
        const statuses = []
        for (let i = 0; i < 6; i++) {
          const res = await form('/auth/token', {
            grant_type: 'client_credentials',
            client_id: 'my-service',
            client_secret: 'my-service-secret',
          })
          statuses.push(res.status)
        }
        expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(3)
      })
      expect(codes).toEqual(['rate-limit.polling'])
    } finally {
      tokenLimit = windowFromNow(10_000, 60)
    }
  })

  test('findings carry severity, reference and advice, print one line each, and list on /dev/findings', async () => {
    const all = await findingsSince(0)
    expect(all.length).toBeGreaterThanOrEqual(10)
    for (const f of all) {
      expect(f.severity).toMatch(/^(error|warning|info)$/)
      expect(f.reference).toMatch(/RFC \d+|INTERFACE\.md|OpenID Connect/)
      expect(f.advice.length).toBeGreaterThan(20)
    }
    expect(printed.map((f) => f.seq)).toEqual(all.map((f) => f.seq))
    const page = await get(`${base}/dev/findings?client_id=my-app`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/text\/html/)
    const html = await page.text()
    expect(html).toContain('data-code="authorize.no-state"')
    expect(html).not.toContain('data-code="rate-limit.polling"') // my-service's
    const json = await get(`${base}/dev/findings.json?since=abc`)
    expect(json.status).toBe(400)
    expect(await json.json()).toMatchObject({ error: 'invalid_request' })
  })
})

describe('explain mode off', () => {
  test('no /dev/findings, no recorder', async () => {
    const off = await testApp()
    try {
      expect(off.deps.explain).toBeUndefined()
      for (const url of ['/dev/findings', '/dev/findings.json'])
        expect((await off.server.inject(url)).statusCode).toBe(404)
    } finally {
      await off.stop()
    }
  })

  test('explain cannot be switched on in production', () => {
    expect(() => loadConfig({ EXPLAIN: 'true', NODE_ENV: 'production' })).toThrow(
      /EXPLAIN cannot be on when NODE_ENV=production/,
    )
  })
})
