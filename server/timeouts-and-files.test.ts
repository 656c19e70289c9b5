import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:tls'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { listeningApp } from './test-helpers.ts'
import type { App } from './app.ts'
import { loadConfig } from './config.ts'
import { loadTls, type TlsMaterial } from './tls.ts'

let app: App
let tls: TlsMaterial
let port: number
let dataDir: string
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'idp-files-'))
  ;({ app, tls, port } = await listeningApp({
    dataDir,
    databaseUrl: `sqlite:${join(dataDir, 'db', 'idp.sqlite')}`,
    // short, so the test does not wait for the 10 s default
    requestTimeout: 2,
  }))
})
afterAll(async () => {
  await app.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

/** Sends `bytes` and never the rest; resolves with what the server answered once it hangs up. */
function incomplete(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: tls.ca, servername: '127.0.0.1' }, () =>
      socket.write(bytes),
    )
    let data = ''
    socket.on('data', (c: Buffer) => (data += c.toString()))
    socket.on('error', reject)
    socket.on('close', () => resolve(data))
  })
}

describe('REQUEST_TIMEOUT: an incomplete request is dropped, not held for minutes', () => {
  // the server's own timeout (2 s here, 10 s by default) closes these; without it Node holds
  // a body for 300 s and headers for 60 s, far past this test's 20 s limit
  test(
    'a body that never completes gets 408 and the connection closed',
    { timeout: 20_000 },
    async () => {
      const answer = await incomplete(
        'POST /auth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type=',
      )
      expect(answer.split('\r\n')[0]).toMatch(/^HTTP\/1\.1 408/)
    },
  )

  test('headers that never complete get the connection closed', { timeout: 20_000 }, async () => {
    const answer = await incomplete('GET /.well-known/jwks.json HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    expect(answer.split('\r\n')[0]).toMatch(/^HTTP\/1\.1 408/)
  })
})

describe('files holding secrets are owner-only', () => {
  test('the SQLite database (signing keys) and its directory', () => {
    const db = join(dataDir, 'db', 'idp.sqlite')
    expect(statSync(db).mode & 0o777).toBe(0o600)
    expect(statSync(join(dataDir, 'db')).mode & 0o077).toBe(0)
  })

  test('the dev TLS private key', async () => {
    const config = loadConfig({}, { dataDir, databaseUrl: 'sqlite::memory:' })
    await loadTls({ ...config, hosts: ['127.0.0.1'] })
    const key = join(dataDir, 'tls', 'server-key.pem')
    expect(statSync(key).mode & 0o777).toBe(0o600)
  })
})

describe('a handler that outlives the response timeout gets a 503, not a closed socket', () => {
  test('the response timeout comes before the socket timeout', () => {
    const { server, socket } = app.server.settings.routes?.timeout as {
      server: number
      socket: number
    }
    // requestTimeout is 2 s here: 42 s to answer, 52 s before the socket is closed under it
    expect(server).toBe(42_000)
    expect(socket).toBeGreaterThan(server)
  })

  test("hapi's 503 is answered temporarily_unavailable with Retry-After", async () => {
    // a route of the test's own with a short response timeout, standing for a starved handler
    app.server.route({
      method: 'GET',
      path: '/test-only/slow',
      options: { timeout: { server: 50 } },
      handler: async () => {
        await new Promise((resolve) => setTimeout(resolve, 500))
        return 'late'
      },
    })
    const res = await app.server.inject('/test-only/slow')
    expect(res.statusCode).toBe(503)
    expect(res.headers['retry-after']).toBe('5')
    expect(JSON.parse(res.payload)).toMatchObject({ error: 'temporarily_unavailable' })
  })
})
