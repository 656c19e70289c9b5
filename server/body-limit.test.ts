import { request } from 'node:https'
import { connect } from 'node:tls'
import { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { DRAIN_LIMIT } from './plugins/body-limit.ts'
import { listeningApp } from './test-helpers.ts'
import type { TlsMaterial } from './tls.ts'

// A body over a route's limit gets 413 in INTERFACE.md §7's JSON shape, and the client can read
// it: the server reads a bounded amount of the refused body away before it answers, instead of
// resetting a connection the client is still writing to (which Node's http client and undici
// report as ECONNRESET or EPIPE, never the answer).

let app: App
let tls: TlsMaterial
let port: number
let dispatcher: Agent
beforeAll(async () => {
  ;({ app, tls, port } = await listeningApp())
  dispatcher = new Agent({ connect: { ca: tls.ca } })
})
afterAll(async () => {
  await dispatcher.close()
  await app.stop()
})

const TOO_LARGE = { error: 'invalid_request', error_description: 'the request body is too large' }
const FORM = 'application/x-www-form-urlencoded'
const KiB = 1024
const MiB = 1024 * KiB

type Answer = { status: number; connection: string | undefined; body: unknown } | { error: string }

/**
 * POSTs `size` bytes to /auth/token with Node's https client, in 16 KiB writes that respect
 * backpressure; with `chunked` the length is not declared. The answer, or the error's code.
 */
function nodePost(size: number, chunked: boolean): Promise<Answer> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { 'content-type': FORM }
    if (!chunked) headers['content-length'] = size
    const req = request(
      { host: '127.0.0.1', port, path: '/auth/token', method: 'POST', ca: tls.ca, headers },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            body: JSON.parse(body) as unknown,
          }),
        )
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }))
      },
    )
    req.setTimeout(20_000, () => req.destroy(new Error('no answer within 20 s')))
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }))
    const chunk = Buffer.alloc(16 * KiB, 'a')
    let sent = 0
    const pump = (): void => {
      while (sent < size) {
        const n = Math.min(chunk.length, size - sent)
        sent += n
        if (!req.write(chunk.subarray(0, n))) {
          req.once('drain', pump)
          return
        }
      }
      req.end()
    }
    pump()
  })
}

/** The same with undici's fetch (Node's own): a Buffer declares its length, a stream does not. */
async function undiciPost(size: number, chunked: boolean): Promise<Answer> {
  const bytes = Buffer.alloc(size, 'a')
  const body = chunked
    ? new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < size; at += 64 * KiB)
            controller.enqueue(bytes.subarray(at, at + 64 * KiB))
          controller.close()
        },
      })
    : bytes
  try {
    const res = await fetch(`https://127.0.0.1:${port}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body,
      duplex: 'half',
      dispatcher,
      signal: AbortSignal.timeout(20_000),
    } as RequestInit)
    return {
      status: res.status,
      connection: res.headers.get('connection') ?? undefined,
      body: (await res.json()) as unknown,
    }
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause
    return { error: cause?.code ?? (err as Error).message }
  }
}

describe('a body over the limit is answered 413 in the JSON shape, and the client reads it', () => {
  for (const [client, post] of [
    ['node:https', nodePost],
    ['undici fetch', undiciPost],
  ] as const) {
    for (const size of [64 * KiB, 2 * MiB]) {
      for (const chunked of [false, true]) {
        const how = chunked ? 'chunked' : 'with Content-Length'
        test(`${client}, ${String(size / KiB)} KiB ${how}`, async () => {
          const answer = await post(size, chunked)
          expect(answer).toMatchObject({ status: 413, body: TOO_LARGE })
        })
      }
    }
  }

  test('a declared length past the drain limit is refused before it is read, with Connection: close', async () => {
    const answer = await nodePost(DRAIN_LIMIT + MiB, false)
    expect(answer).toEqual({ status: 413, connection: 'close', body: TOO_LARGE })
  })
})

describe('what the server reads of a refused body is bounded', () => {
  test(`an endless chunked body is cut off once ${String(DRAIN_LIMIT / MiB)} MiB past the limit are read away`, async () => {
    // raw TLS: the client goes on writing whatever the server says; it stops at 64 MiB at most
    const most = 64 * MiB
    const written = await new Promise<number | 'still open'>((resolve) => {
      let sent = 0
      const socket = connect({ host: '127.0.0.1', port, ca: tls.ca }, () => {
        socket.write(
          `POST /auth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${FORM}\r\nTransfer-Encoding: chunked\r\n\r\n`,
        )
        const chunk = `4000\r\n${'a'.repeat(16 * KiB)}\r\n`
        const pump = (): void => {
          while (sent < most && !socket.destroyed) {
            sent += 16 * KiB
            if (!socket.write(chunk)) {
              socket.once('drain', pump)
              return
            }
          }
        }
        pump()
      })
      const timer = setTimeout(() => {
        socket.destroy()
        resolve('still open')
      }, 20_000)
      socket.on('error', () => undefined)
      socket.on('data', () => undefined)
      socket.on('close', () => {
        clearTimeout(timer)
        resolve(sent)
      })
    })
    expect(written, 'the server never closed the connection').not.toBe('still open')
    // the server stopped reading: the client could not write all it had (without the bound,
    // the server reads for REQUEST_TIMEOUT, long enough to take all 64 MiB over loopback)
    expect(written).toBeLessThan(most)
  })
})
