import { connect } from 'node:tls'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { freePort } from './test-helpers.ts'
import { createServer, type App } from './app.ts'
import { loadConfig } from './config.ts'
import { TEST_SCRYPT } from './users/passwords.ts'
import { createDevCertificate, type TlsMaterial } from './tls.ts'

// INTERFACE.md §7: every error answer is {error, error_description}, including what Node's
// HTTP parser refuses before hapi sees a request; nosniff and HSTS are on every response.

let app: App
let tls: TlsMaterial
let port: number
beforeAll(async () => {
  port = await freePort()
  tls = await createDevCertificate(['127.0.0.1'])
  const config = loadConfig(
    {},
    {
      port,
      host: '127.0.0.1',
      baseUrl: `https://127.0.0.1:${port}`,
      // below OWASP's minimum on purpose: a test server
      scrypt: TEST_SCRYPT,
      databaseUrl: 'sqlite::memory:',
    },
  )
  app = await createServer(config, { tls, log: () => undefined })
  await app.start()
})
afterAll(async () => {
  await app.stop()
})

/** Sends raw bytes over TLS and returns the whole answer (the server closes the connection). */
function raw(
  bytes: string,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: tls.ca, servername: '127.0.0.1' }, () =>
      socket.end(bytes),
    )
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
