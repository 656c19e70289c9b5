import type { IncomingMessage } from 'node:http'
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi'
import { invalidRequest } from '../errors.ts'

/**
 * The most of a refused request body the server reads and throws away so that its sender gets
 * the answer (4 MiB; no route accepts more than 64 KiB). A client reads a response reliably only
 * once it has written its request: a server that closes while body bytes are still arriving
 * resets the connection (its TCP answers unread data with RST), and Node's http client and undici
 * then report ECONNRESET or EPIPE instead of the 413 (RFC 9112 §9.6 describes the lingering close this needs).
 * Reading costs the server what the client sends, never more, so the bound is on bytes, and a
 * slow sender is still cut off by REQUEST_TIMEOUT.
 */
export const DRAIN_LIMIT = 4 * 1024 * 1024

const tooLarge = () => invalidRequest('the request body is too large', { status: 413 })

/**
 * hapi's payload reader (wreck) calls `destroy()` on the request when a body of undeclared
 * length (chunked) passes the route's `maxBytes`, or a gzip body does not inflate, and Node
 * then destroys the socket before hapi writes its answer: the client saw ECONNRESET, never the
 * 413. Here that call, the only one made without an error while the body is still arriving,
 * leaves the socket open: hapi then reads the rest of the body away and answers, as it does for
 * a declared body over the limit. Past `drainLimit` further bytes the socket is destroyed after
 * all (a client sending that much gets a reset, as it would from any server).
 */
function keepSocketForTheAnswer(req: IncomingMessage, drainLimit: number): void {
  const destroy = req.destroy.bind(req)
  req.destroy = (error?: Error) => {
    if (error !== undefined || req.complete) return destroy(error)
    req.destroy = destroy
    let drained = 0
    req.on('data', (chunk: Buffer) => {
      drained += chunk.length
      if (drained > drainLimit) destroy()
    })
    return req
  }
}

/**
 * Every refused body gets its answer: a declared length over `drainLimit` is refused 413 before
 * anything is read (the answer says `Connection: close`); any other body is read to its end, at
 * most `drainLimit` bytes past the route's limit, before the 413, so the client can read it.
 */
export const bodyLimit = (drainLimit = DRAIN_LIMIT): Plugin<undefined> => ({
  name: 'body-limit',
  register(server) {
    server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
      const req = request.raw.req
      const declared = req.headers['content-length']
      if (declared !== undefined && Number(declared) > drainLimit) throw tooLarge()
      if (declared !== undefined || req.headers['transfer-encoding'] !== undefined)
        keepSocketForTheAnswer(req, drainLimit)
      return h.continue
    })
  },
})
