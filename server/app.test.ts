import { request as httpRequest } from 'node:http'
import { afterEach, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { OAuthError, invalidGrant } from './errors.ts'
import { freePort } from './test-helpers.ts'
import { testApp } from './test-helpers.ts'

let app: App | undefined
afterEach(async () => {
  await app?.stop()
  app = undefined
})

describe('error rendering', () => {
  test('an OAuthError thrown by a handler keeps its class through hapi and renders as JSON', async () => {
    app = await testApp()
    let seen: unknown
    app.server.ext(
      'onPreResponse',
      (request, h) => {
        seen = request.response
        return h.continue
      },
      { before: ['oauth-errors'] },
    )
    app.server.route({
      method: 'GET',
      path: '/test/throw',
      handler: () => {
        throw invalidGrant('code expired')
      },
    })
    const res = await app.server.inject('/test/throw')
    expect(seen).toBeInstanceOf(OAuthError)
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(res.payload)).toEqual({
      error: 'invalid_grant',
      error_description: 'code expired',
    })
  })

  test('an unexpected error is a 500 server_error that reveals nothing', async () => {
    const events: string[] = []
    app = await testApp({}, { log: (event) => events.push(event) })
    app.server.route({
      method: 'GET',
      path: '/test/crash',
      handler: () => {
        throw new Error('secret internals')
      },
    })
    const res = await app.server.inject('/test/crash')
    expect(res.statusCode).toBe(500)
    expect(JSON.parse(res.payload)).toEqual({
      error: 'server_error',
      error_description: 'the server encountered an unexpected condition',
    })
    expect(res.payload).not.toContain('secret')
    expect(events).toEqual(['error'])
  })

  test('unknown routes are 404 and wrong methods 405 with Allow, in the JSON shape', async () => {
    app = await testApp()
    const missing = await app.server.inject('/nope')
    expect(missing.statusCode).toBe(404)
    expect(JSON.parse(missing.payload)).toMatchObject({ error: 'invalid_request' })
    const wrong = await app.server.inject({ method: 'PUT', url: '/.well-known/jwks.json' })
    expect(wrong.statusCode).toBe(405)
    expect(wrong.headers.allow).toBe('GET, HEAD')
    expect(JSON.parse(wrong.payload)).toMatchObject({ error: 'invalid_request' })
  })
})

describe('transport', () => {
  test('HSTS is on every response, errors included', async () => {
    app = await testApp()
    for (const url of ['/.well-known/openid-configuration', '/nope']) {
      const res = await app.server.inject(url)
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains')
    }
  })

  test('behind a trusted proxy, a request that did not arrive over https is refused', async () => {
    app = await testApp({ trustProxy: 1 })
    const plain = await app.server.inject({
      url: '/.well-known/openid-configuration',
      headers: { 'x-forwarded-proto': 'http' },
    })
    expect(plain.statusCode).toBe(400)
    expect(JSON.parse(plain.payload)).toMatchObject({ error: 'invalid_request' })
    const missing = await app.server.inject('/.well-known/openid-configuration')
    expect(missing.statusCode).toBe(400)
    const tls = await app.server.inject({
      url: '/.well-known/openid-configuration',
      headers: { 'x-forwarded-proto': 'https' },
    })
    expect(tls.statusCode).toBe(200)
  })

  test('the plain listener answers every request with a JSON error and never a document', async () => {
    const httpPort = await freePort()
    app = await testApp({ httpPort, port: await freePort() })
    await app.start()
    const res = await new Promise<{
      status: number | undefined
      body: string
      location: string | undefined
    }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: httpPort, path: '/.well-known/openid-configuration' },
        (r) => {
          let body = ''
          r.on('data', (c: Buffer) => (body += c.toString()))
          r.on('end', () => resolve({ status: r.statusCode, body, location: r.headers.location }))
        },
      )
      req.on('error', reject)
      req.end()
    })
    expect(res.status).toBe(400)
    expect(res.location).toBeUndefined()
    expect(JSON.parse(res.body)).toEqual({
      error: 'invalid_request',
      error_description: 'plain HTTP is not served; use https',
    })
  })
})

describe('discovery and JWKS', () => {
  test('discovery advertises the configured issuer and the decided members', async () => {
    app = await testApp()
    const doc = JSON.parse(
      (await app.server.inject('/.well-known/openid-configuration')).payload,
    ) as Record<string, unknown>
    expect(doc.issuer).toBe('https://idp.test')
    expect(doc.token_endpoint).toBe('https://idp.test/auth/token')
    expect(doc.request_uri_parameter_supported).toBe(false)
    expect(doc.revocation_endpoint_auth_methods_supported).toEqual(['client_secret_post'])
    const rfc8414 = JSON.parse(
      (await app.server.inject('/.well-known/oauth-authorization-server')).payload,
    ) as unknown
    expect(rfc8414).toEqual(doc)
  })

  test('the JWKS publishes public members only', async () => {
    app = await testApp()
    const { keys } = JSON.parse((await app.server.inject('/.well-known/jwks.json')).payload) as {
      keys: Record<string, unknown>[]
    }
    expect(keys).toHaveLength(1)
    expect(Object.keys(keys[0] ?? {}).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
  })
})
