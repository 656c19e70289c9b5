import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { check, createRunResources, register, runCheck } from './check.ts'
import { endpointLabel, endpointUrl, resolveEndpoints } from './endpoints.ts'
import { revocationChecks } from '../checks/revocation.ts'
import { authorizeUrl, revokeRaw } from './requests.ts'
import { resolveTarget, type Target } from './target.ts'

// A provider whose discovery document the test sets: where it mounts revocation, what it omits.
let server: Server
let base: string
let discovery: { status: number; body: unknown }
const requests: string[] = []

const target = (): Target =>
  resolveTarget({
    baseUrl: base,
    clients: {
      main: { id: 'c', secret: 's', redirectUri: undefined, postLogoutRedirectUri: undefined },
    },
    users: { primary: { username: 'u', password: 'p' } },
  })

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method ?? ''} ${req.url ?? ''}`)
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (req.url === '/.well-known/openid-configuration') json(discovery.status, discovery.body)
    else if (req.url === '/oauth/v2/revoke' || req.url === '/auth/revoke')
      json(200, { message: `revoked at ${req.url}` })
    else json(404, { error: 'not_found', error_description: 'none' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise((resolve) => server.close(resolve)))

register({
  'REV-05': check(async (ctx) => {
    await revokeRaw(ctx, 'a-token')
  }),
})

describe('endpoint URLs come from the discovery document', () => {
  test('an advertised endpoint is used; one not named falls back to the interface path, with why', async () => {
    discovery = {
      status: 200,
      body: { revocation_endpoint: `${base}/oauth/v2/revoke`, token_endpoint: 42 },
    }
    const endpoints = await resolveEndpoints(target())
    expect(endpoints.urls.revocation_endpoint).toBe(`${base}/oauth/v2/revoke`)
    expect(endpoints.urls.token_endpoint).toBe(`${base}/auth/token`)
    expect(endpoints.fallbacks.token_endpoint).toBe('the discovery document gives 42')
    expect(endpoints.fallbacks.userinfo_endpoint).toBe('the discovery document does not name it')
    expect(endpoints.fallbacks.revocation_endpoint).toBeUndefined()
    const on = { ...target(), endpoints }
    expect(endpointUrl(on, 'revocation_endpoint')).toBe(`${base}/oauth/v2/revoke`)
    expect(authorizeUrl({ target: on }, [['a', 'b c']])).toBe(`${base}/auth/authorize?a=b+c`)
  })

  test('a check sends its requests where discovery says, read once per run', async () => {
    discovery = { status: 200, body: { revocation_endpoint: `${base}/oauth/v2/revoke` } }
    requests.length = 0
    const t = target()
    const resources = createRunResources(t, { reuseSessions: false })
    const [a, b] = [await runCheck('REV-05', t, resources), await runCheck('REV-05', t, resources)]
    expect(a.exchanges.map((x) => new URL(x.url).pathname)).toEqual(['/oauth/v2/revoke'])
    expect(b.verdict).toBe('pass')
    expect(requests.filter((r) => r.includes('openid-configuration'))).toHaveLength(1)
    // the revocation endpoint came from discovery: no note about a fallback
    expect(a.notes.filter((n) => n.includes('interface'))).toEqual([])
  })

  test('discovery unreachable or refused: the interface paths, and the check that used one says so', async () => {
    discovery = { status: 500, body: { error: 'server_error', error_description: 'down' } }
    const t = target()
    const r = await runCheck('REV-05', t, createRunResources(t, { reuseSessions: false }))
    expect(r.exchanges.map((x) => new URL(x.url).pathname)).toEqual(['/auth/revoke'])
    expect(r.notes).toContain(
      "revocation_endpoint: requests went to the interface's path /auth/revoke, as the discovery document answered HTTP 500",
    )
    // nothing answers: bounded, and never thrown
    const nowhere = await resolveEndpoints({ baseUrl: 'http://127.0.0.1:1', ca: undefined }, 2000)
    expect(nowhere.urls.token_endpoint).toBe('http://127.0.0.1:1/auth/token')
    expect(nowhere.fallbacks.token_endpoint).toMatch(/^the discovery document could not be read/)
  })

  test('an advertised URL that would take the client secret elsewhere in the clear is not used', async () => {
    discovery = {
      status: 200,
      body: {
        revocation_endpoint: 'http://attacker.example/revoke',
        token_endpoint: `https://user:pw@${new URL(base).host}/t`,
        introspection_endpoint: 'not a url',
      },
    }
    const endpoints = await resolveEndpoints(target())
    expect(endpoints.urls.revocation_endpoint).toBe(`${base}/auth/revoke`)
    expect(endpoints.fallbacks.revocation_endpoint).toMatch(/neither https nor the target's origin/)
    expect(endpoints.fallbacks.token_endpoint).toMatch(/credentials or a fragment/)
    expect(endpoints.fallbacks.introspection_endpoint).toMatch(/not a URL/)
  })

  test('messages and notes name the endpoint the requests went to, not the interface path (blind round 5, b)', async () => {
    discovery = { status: 200, body: { revocation_endpoint: `${base}/oauth/v2/revoke` } }
    const endpoints = await resolveEndpoints(target())
    const on = { ...target(), endpoints }
    expect(endpointLabel(on, 'revocation_endpoint')).toBe('/oauth/v2/revoke')
    // not advertised: the interface path it fell back to
    expect(endpointLabel(on, 'token_endpoint')).toBe('/auth/token')
    // on another origin: the origin too
    const elsewhere = {
      ...on,
      endpoints: {
        ...endpoints,
        urls: { ...endpoints.urls, token_endpoint: 'https://as.example/t?x=1' },
      },
    }
    expect(endpointLabel(elsewhere, 'token_endpoint')).toBe('https://as.example/t')

    // REV-07 against it: the POST without a token is answered 200 (a failure), the GET with a
    // query 404 (a note); both name /oauth/v2/revoke
    const t = target()
    const resources = {
      ...createRunResources(t, { reuseSessions: false }),
      checks: new Map([['REV-07', revocationChecks['REV-07']]] as const),
    }
    const r = await runCheck('REV-07', t, resources)
    expect(r.verdict).toBe('fail')
    expect(r.notes).toContain(
      'GET /oauth/v2/revoke (RFC 7009 §2.1: POST) was answered 404, not 405 (SHOULD)',
    )
    expect(JSON.stringify([r.message, r.notes, r.more])).not.toContain('/auth/revoke')
  })
})
