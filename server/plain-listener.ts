import { createServer, type Server } from 'node:http'
import { HSTS } from './plugins/transport.ts'

/**
 * The optional plain-HTTP listener (ARCHITECTURE.md, HTTPS only): every request gets a JSON
 * error and nothing else, never a document, a token or a redirect. The body of the request is
 * not read, so a credential sent over plain HTTP is never processed.
 */
export function createPlainListener(): Server {
  // without Host Node would answer a bare 400 itself: this one answers every request the same way
  return createServer({ requireHostHeader: false }, (req, res) => {
    const body = JSON.stringify({
      error: 'invalid_request',
      error_description: 'plain HTTP is not served; use https',
    })
    res.writeHead(400, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'strict-transport-security': HSTS,
      connection: 'close',
    })
    res.end(body)
    req.resume()
  })
}
