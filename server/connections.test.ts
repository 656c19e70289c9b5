import { once } from 'node:events'
import { connect as tcp, type Socket } from 'node:net'
import { request, type RequestOptions } from 'node:https'
import { connect as tlsOver } from 'node:tls'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createServer, type App } from './app.ts'
import { loadConfig, type Config } from './config.ts'
import { freePort } from './test-helpers.ts'
import { createDevCertificate, type TlsMaterial } from './tls.ts'

let tls: TlsMaterial
const apps: App[] = []

async function started(overrides: Partial<Config>): Promise<{ app: App; port: number }> {
  const port = await freePort()
  const config = loadConfig(
    {},
    {
      port,
      host: '127.0.0.1',
      baseUrl: `https://127.0.0.1:${port}`,
      databaseUrl: 'sqlite::memory:',
      ...overrides,
    },
  )
  const app = await createServer(config, { tls, log: () => undefined })
  await app.start()
  apps.push(app)
  return { app, port }
}

beforeAll(async () => {
  tls = await createDevCertificate(['127.0.0.1'])
})
afterAll(async () => {
  for (const app of apps) await app.stop()
})

/** A TCP connection that never starts TLS; `closed` settles when the server hangs up. */
function silent(port: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = tcp({ host: '127.0.0.1', port }, () =>
      resolve({
        socket,
        closed: new Promise<void>((done) => {
          if (socket.destroyed) done()
          else socket.once('close', () => done())
        }),
      }),
    )
    socket.on('error', () => undefined)
    socket.once('error', reject)
  })
}

/** Resolves with `value` once `promise` settles, or with `late` after `ms` (a bounded wait). */
const within = <T>(promise: Promise<T>, ms: number, late: T): Promise<T> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<T>((resolve) => (timer = setTimeout(() => resolve(late), ms))),
  ]).finally(() => clearTimeout(timer))
}

/** GET /health/live over HTTPS, connected as `options` say; the status, or the error's code. */
function health(options: RequestOptions): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', path: '/health/live', ...options }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.setTimeout(15_000, () => req.destroy(new Error('timed out')))
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
    req.end()
  })
}

/** GET /health/live over HTTPS from `localAddress`; the status, or the error's code. */
const live = (port: number, localAddress: string): Promise<number | string> =>
  health({ port, ca: tls.ca, localAddress, agent: false })

/** GET /health/live over HTTPS on an already open TCP `socket`; the status, or the error's code. */
const liveOver = (socket: Socket): Promise<number | string> =>
  // no agent: the request goes over the socket createConnection gives
  health({ createConnection: () => tlsOver({ socket, ca: tls.ca, host: '127.0.0.1' }) })

describe('sockets are bounded: silent connections cannot starve the server', () => {
  test(
    'a connection that never completes its TLS handshake is closed after TLS_HANDSHAKE_TIMEOUT',
    { timeout: 30_000 },
    async () => {
      const { port } = await started({ tlsHandshakeTimeout: 1 })
      const held = await Promise.all([silent(port), silent(port), silent(port)])
      // Node's default would hold them for 120 s; the 1 s timeout closes them
      const closed = await within(
        Promise.all(held.map((h) => h.closed)).then(() => true),
        20_000,
        false,
      )
      expect(closed, 'the silent connections were still open after 20 s').toBe(true)
      expect(await live(port, '127.0.0.1')).toBe(200)
    },
  )

  test(
    'one address holding MAX_CONNECTIONS_PER_ADDRESS sockets has its next ones dropped, and other addresses are served',
    { timeout: 30_000 },
    async () => {
      const { port } = await started({ tlsHandshakeTimeout: 60, maxConnectionsPerAddress: 5 })
      const held = await Promise.all(Array.from({ length: 8 }, () => silent(port)))
      let dropped = 0
      let third: () => void = () => undefined
      const threeDropped = new Promise<void>((resolve) => (third = resolve))
      for (const h of held)
        void h.closed.then(() => {
          if (++dropped === 3) third()
        })
      // the three beyond the cap are closed at once; the five within it wait for their handshake
      await within(threeDropped, 10_000, undefined)
      expect(dropped).toBe(3)
      expect(held.filter((h) => !h.socket.destroyed)).toHaveLength(5)
      // another address is served meanwhile; the capped one is not, until it lets go
      expect(await live(port, '127.0.0.2')).toBe(200)
      expect(await live(port, '127.0.0.1')).not.toBe(200)
      for (const h of held) h.socket.destroy()
      await Promise.all(held.map((h) => h.closed))
      // the server sees those closes a moment after the client: each try is a real request,
      // and a bounded number of them
      let status: number | string = 'not tried'
      for (let i = 0; i < 50 && status !== 200; i++) status = await live(port, '127.0.0.1')
      expect(status).toBe(200)
    },
  )

  test(
    'beyond MAX_CONNECTIONS in all, new connections are dropped while the open ones are still served, and service resumes when they close',
    { timeout: 30_000 },
    async () => {
      const CAP = 4
      // no per-address cap: every connection comes from 127.0.0.1 here, so only the global one
      // is at work
      const { app, port } = await started({
        tlsHandshakeTimeout: 60,
        maxConnections: CAP,
        maxConnectionsPerAddress: 0,
      })
      const listener = app.server.listener
      let accepted = 0
      let allAccepted: () => void = () => undefined
      const capReached = new Promise<void>((resolve) => (allAccepted = resolve))
      listener.on('connection', () => {
        if (++accepted === CAP) allAccepted()
      })
      const held = await Promise.all(Array.from({ length: CAP }, () => silent(port)))
      // bounded: the server accepts the CAP connections it was sent
      await within(capReached, 10_000, undefined)
      expect(accepted).toBe(CAP)

      // the next connection is dropped as it arrives (Node's 'drop', server.maxConnections),
      // so a new client is not served
      const dropped = once(listener, 'drop')
      const extra = await silent(port)
      expect(
        await within(
          extra.closed.then(() => 'closed'),
          10_000,
          'still open',
        ),
      ).toBe('closed')
      expect(
        await within(
          dropped.then(() => 'drop'),
          10_000,
          'no drop',
        ),
      ).toBe('drop')
      expect(await live(port, '127.0.0.1')).not.toBe(200)

      // a connection accepted within the cap is still served: TLS and a request on it now
      const [first, ...others] = held
      expect(await liveOver(first?.socket ?? extra.socket)).toBe(200)

      // once the held connections close, new ones are served again: each try is a real
      // request, and a bounded number of them (the server sees the closes a moment later)
      for (const h of held) h.socket.destroy()
      await Promise.all(others.map((h) => h.closed))
      let status: number | string = 'not tried'
      for (let i = 0; i < 50 && status !== 200; i++) status = await live(port, '127.0.0.1')
      expect(status).toBe(200)
    },
  )
})
