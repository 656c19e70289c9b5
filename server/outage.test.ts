import { randomBytes } from 'node:crypto'
import * as net from 'node:net'
import { createServer, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { freePort } from './test-helpers.ts'
import { openDatabase } from './store/knex/index.ts'
import { postgresAvailable, TEST_PG_URL, testApp } from './test-helpers.ts'

const PG = new URL(TEST_PG_URL)

/** A loopback TCP proxy in front of PostgreSQL that the test can cut and restore. */
function cuttableProxy(port: number) {
  let server: Server | undefined
  const sockets = new Set<Socket>()
  const up = () =>
    new Promise<void>((resolve) => {
      if (server?.listening) {
        resolve()
        return
      }
      server = createServer((client) => {
        const upstream = createConnection()
        sockets.add(client).add(upstream)
        client.pipe(upstream).pipe(client)
        const close = () => {
          client.destroy()
          upstream.destroy()
        }
        client.on('error', close).on('close', close)
        upstream.on('error', close).on('close', close)
      })
      server.listen(port, '127.0.0.1', resolve)
    })
  const createConnection = () => net.createConnection(Number(PG.port || 5432), PG.hostname)
  const down = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy()
      sockets.clear()
      if (server) server.close(() => resolve())
      else resolve()
    })
  return { up, down }
}

const pgUp = await postgresAvailable()

describe.skipIf(!pgUp)('storage outage on PostgreSQL', () => {
  let app: App
  let proxy: ReturnType<typeof cuttableProxy>
  const schema = `outage_${process.pid}_${randomBytes(4).toString('hex')}`
  beforeAll(async () => {
    const port = await freePort()
    proxy = cuttableProxy(port)
    await proxy.up()
    const url = new URL(PG.toString())
    url.port = String(port)
    url.hostname = '127.0.0.1'
    app = await testApp({ databaseUrl: url.toString(), databaseSchema: schema })
  })
  afterAll(async () => {
    await proxy.up()
    await app.stop()
    const knex = openDatabase(PG.toString())
    await knex.raw('drop schema if exists ?? cascade', [schema])
    await knex.destroy()
    await proxy.down()
  })

  const token = () =>
    app.server.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload:
        'grant_type=client_credentials&client_id=service-client&client_secret=service-secret',
    })

  test('503 temporarily_unavailable while the database is gone, normal service after, no restart', async () => {
    expect((await token()).statusCode).toBe(200)
    expect((await app.server.inject('/health/ready')).statusCode).toBe(200)
    await proxy.down()
    const during = await token()
    expect(during.statusCode).toBe(503)
    expect(JSON.parse(during.payload)).toMatchObject({ error: 'temporarily_unavailable' })
    expect(during.headers['retry-after']).toBe('5')
    const notReady = await app.server.inject('/health/ready')
    expect(notReady.statusCode).toBe(503)
    expect(JSON.parse(notReady.payload)).toEqual({
      status: 'unavailable',
      error: 'temporarily_unavailable',
      error_description: 'the store is unreachable',
    })
    expect(notReady.headers).toMatchObject({ 'retry-after': '5', 'cache-control': 'no-store' })
    expect((await app.server.inject('/health/live')).statusCode).toBe(200)
    await proxy.up()
    let after = await token()
    for (let i = 0; i < 10 && after.statusCode !== 200; i++) after = await token()
    expect(after.statusCode).toBe(200)
    expect((await app.server.inject('/health/ready')).statusCode).toBe(200)
  }, 60_000)
})
