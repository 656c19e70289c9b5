import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../app.ts'
import { testApp } from '../test-helpers.ts'
import { FINDING_KINDS } from './findings.ts'

let app: App
beforeAll(async () => {
  app = await testApp({ explain: true })
})
afterAll(async () => {
  await app.stop()
})

const authorize = (params: Record<string, string>) =>
  app.server.inject(
    `/auth/authorize?${new URLSearchParams({
      client_id: 'conformance-client',
      redirect_uri: 'https://client.example/callback',
      response_type: 'code',
      scope: 'openid',
      ...params,
    }).toString()}`,
  )

const newCodes = async (action: () => Promise<unknown>): Promise<string[]> => {
  const since = app.deps.explain?.list().at(-1)?.seq ?? 0
  await action()
  return (app.deps.explain?.list({ since }) ?? []).map((f) => f.code)
}

describe('explain mode, tightened (issue 23)', () => {
  it('a request without PKCE is refused and leaves pkce.missing', async () => {
    let status = 0
    const codes = await newCodes(async () => {
      status = (await authorize({ state: 's', nonce: 'n' })).statusCode
    })
    expect(status).toBe(302)
    expect(codes).toEqual(['pkce.missing'])
    expect(FINDING_KINDS['pkce.missing'].severity).toBe('error')
  })

  it('no state and no nonce are informational when PKCE protects the request (RFC 9700 §2.1)', async () => {
    const codes = await newCodes(() =>
      authorize({
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }),
    )
    expect(codes).toEqual(['authorize.no-state', 'authorize.no-nonce'])
    for (const code of ['authorize.no-state', 'authorize.no-nonce'] as const) {
      expect(FINDING_KINDS[code].severity).toBe('info')
      expect(FINDING_KINDS[code].reference).toMatch(/RFC 9700 §2\.1/)
    }
  })

  it('the Basic-authentication advice names the setting of several libraries', () => {
    const advice = FINDING_KINDS['client-auth.basic'].advice
    for (const library of [
      'openid-client v6',
      'openid-client v5',
      'express-openid-connect',
      'Auth.js',
    ])
      expect(advice).toContain(library)
  })

  it('a logout error is titled as one, and a trailing-slash mismatch is named', async () => {
    const res = await app.server.inject(
      `/auth/logout?${new URLSearchParams({ client_id: 'conformance-client', post_logout_redirect_uri: 'https://client.example/logged-out/' }).toString()}`,
    )
    expect(res.statusCode).toBe(400)
    expect(res.payload).toContain('<title>Sign-out error')
    expect(res.payload).toMatch(/differs only by a trailing slash/)
    const other = await app.server.inject(
      `/auth/logout?${new URLSearchParams({ client_id: 'conformance-client', post_logout_redirect_uri: 'https://elsewhere.example/' }).toString()}`,
    )
    expect(other.payload).not.toMatch(/trailing slash/)
  })

  it('an authorize error page is still a sign-in error', async () => {
    const res = await authorize({ client_id: 'no-such-client' })
    expect(res.payload).toContain('<title>Sign-in error')
  })
})
