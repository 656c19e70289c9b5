import { connect as tcp } from 'node:net'
import { connect } from 'node:tls'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { freePort, listeningApp } from './test-helpers.ts'
import type { App } from './app.ts'
import type { TlsMaterial } from './tls.ts'

// INTERFACE.md §7: every error answer is {error, error_description}, including what Node's
// HTTP parser refuses before hapi sees a request; nosniff and HSTS are on every response.

let app: App
let tls: TlsMaterial
let port: number
let plainPort: number
beforeAll(async () => {
  plainPort = await freePort()
  ;({ app, tls, port } = await listeningApp({ httpPort: plainPort }))
})
afterAll(async () => {
  await app.stop()
})

/**
 * Sends raw bytes over TLS (or to the plain listener) and returns the whole answer (the server
 * closes the connection).
 */
function raw(
  bytes: string,
  plain = false,
  // an answer that closes the connection itself can be waited for without half-closing first
  halfClose = true,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const send = () => (halfClose ? socket.end(bytes) : socket.write(bytes))
    const socket = plain
      ? tcp({ host: '127.0.0.1', port: plainPort }, send)
      : connect({ host: '127.0.0.1', port, ca: tls.ca, servername: '127.0.0.1' }, send)
    let data = ''
    socket.on('data', (c: Buffer) => (data += c.toString('latin1')))
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers = Object.fromEntries(
        lines.map((l) => [
          l.slice(0, l.indexOf(':')).toLowerCase(),
          l.slice(l.indexOf(':') + 1).trim(),
        ]),
      )
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body })
    })
  })
}

describe("requests Node's HTTP parser refuses", () => {
  test('a 20 KiB header is answered 431 in the JSON error shape', async () => {
    const res = await raw(
      `GET /.well-known/openid-configuration HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`,
    )
    expect(res.status).toBe(431)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['strict-transport-security']).toMatch(/max-age=/)
    expect(JSON.parse(res.body)).toEqual({
      error: 'invalid_request',
      error_description: 'the request headers are too large',
    })
  })

  test('an unknown method and a malformed request line get the JSON shape', async () => {
    for (const line of ['FROB / HTTP/1.1', 'GET / HTTP/9.x']) {
      const res = await raw(`${line}\r\nHost: 127.0.0.1\r\n\r\n`)
      expect(res.status, line).toBe(400)
      expect(JSON.parse(res.body), line).toMatchObject({ error: 'invalid_request' })
      expect(
        typeof (JSON.parse(res.body) as { error_description: unknown }).error_description,
      ).toBe('string')
      expect(res.headers['x-content-type-options'], line).toBe('nosniff')
    }
  })

  test('an Expect header other than 100-continue is answered 417 in the JSON error shape', async () => {
    const body = 'grant_type=client_credentials'
    const res = await raw(
      `POST /auth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-foo\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    )
    expect(res.status).toBe(417)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.headers['strict-transport-security']).toMatch(/max-age=/)
    expect(JSON.parse(res.body)).toMatchObject({ error: 'invalid_request' })
    expect(typeof (JSON.parse(res.body) as { error_description: unknown }).error_description).toBe(
      'string',
    )
  })
})

describe('answers Node would write itself, bare', () => {
  const jsonError = (res: { headers: Record<string, string>; body: string }): unknown => {
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    return JSON.parse(res.body)
  }

  test('an HTTP/1.1 request without Host, or with two, is 400 in the JSON shape (RFC 9112 §3.2)', async () => {
    const none = await raw('GET /.well-known/jwks.json HTTP/1.1\r\n\r\n')
    expect(none.status).toBe(400)
    expect(jsonError(none)).toEqual({
      error: 'invalid_request',
      error_description: 'an HTTP/1.1 request needs a Host header',
    })
    expect(none.headers['strict-transport-security']).toMatch(/max-age=/)
    const two = await raw(
      'GET /.well-known/jwks.json HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n',
    )
    expect(two.status).toBe(400)
    expect(jsonError(two)).toEqual({
      error: 'invalid_request',
      error_description: 'the request has more than one Host header',
    })
    // HTTP/1.0 has no Host requirement (its answer closes the connection)
    const old = await raw('GET /.well-known/jwks.json HTTP/1.0\r\n\r\n', false, false)
    expect(old.status).toBe(200)
  })

  test('CONNECT (this server is no proxy) is 405 in the JSON shape, not a silent close', async () => {
    const res = await raw('CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n')
    expect(res.status).toBe(405)
    expect(jsonError(res)).toEqual({
      error: 'invalid_request',
      error_description: 'method CONNECT is not allowed here',
    })
    expect(res.headers.allow).toBeTruthy()
  })

  test('the plain listener answers a request without Host, and an unmet Expect, in the JSON shape', async () => {
    const none = await raw('GET / HTTP/1.1\r\n\r\n', true)
    expect(none.status).toBe(400)
    expect(jsonError(none)).toMatchObject({ error: 'invalid_request' })
    const expectation = await raw(
      'POST /auth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-foo\r\nContent-Length: 3\r\n\r\na=b',
      true,
    )
    expect(expectation.status).toBe(417)
    expect(jsonError(expectation)).toMatchObject({ error: 'invalid_request' })
  })
})

describe('security headers', () => {
  test('nosniff and HSTS are on JSON answers, errors and pages alike', async () => {
    const answers = [
      await app.server.inject('/.well-known/openid-configuration'),
      await app.server.inject('/.well-known/jwks.json'),
      await app.server.inject('/nope'),
      await app.server.inject({ method: 'POST', url: '/auth/token', payload: 'x=1' }),
      await app.server.inject('/auth/authorize'),
    ]
    for (const res of answers) {
      expect(res.headers['x-content-type-options'], res.request.url.pathname).toBe('nosniff')
      expect(res.headers['strict-transport-security'], res.request.url.pathname).toMatch(/max-age=/)
    }
  })
})
