import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Deps } from '../deps.ts'

/** Headers every response carries, the parser's refusals included (INTERFACE.md §7). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
}

/** Node's parser error codes and the status each is answered with. */
const STATUS_OF: Readonly<Record<string, [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [
    431,
    'Request Header Fields Too Large',
    'the request headers are too large',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'the request did not arrive in time'],
  HPE_INVALID_METHOD: [400, 'Bad Request', 'the request method is not understood'],
}

/**
 * Answers what Node's HTTP parser refuses (a 16 KiB header, an unknown method, a malformed
 * request line) in the JSON error shape instead of hapi's bare `400 Bad Request` with no body.
 * Node gives the socket, not a response object, to `clientError` listeners; the bytes written
 * here are the complete, fixed response Node's documentation shows for this event, with a
 * JSON body. Replaces hapi's own listener on `listener`.
 */
export function answerClientErrors(
  listener: HttpServer,
  deps: Pick<Deps, 'log'>,
  extraHeaders: Readonly<Record<string, string>> = {},
): void {
  // RFC 9110 §10.1.1: an expectation other than 100-continue cannot be met. Node answers it
  // with a bare 417 and no body unless someone listens; this one answers in the JSON shape
  listener.removeAllListeners('checkExpectation')
  listener.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    deps.log('client-error', { reason: 'expectation', status: 417 })
    const body = JSON.stringify({
      error: 'invalid_request',
      error_description: 'the Expect header asks for something this server cannot do',
    })
    res.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      ...SECURITY_HEADERS,
      ...extraHeaders,
      connection: 'close',
    })
    res.end(body)
    // the body the client may still send is not read: the connection closes after the answer
    req.resume()
  })
  listener.removeAllListeners('clientError')
  listener.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const code = err.code ?? ''
    // a response already under way on this socket (a pipelined request) cannot get another
    const active = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    // a TLS-level failure (https forwards `tlsClientError` here: a handshake that timed out or
    // failed) has no HTTP exchange to answer, and bytes written to a socket whose handshake
    // never completed wait forever: without destroying it, TLS_HANDSHAKE_TIMEOUT would leave
    // every silent connection open
    const tls = /^ERR_(TLS|SSL)_/.test(code)
    if (tls || code === 'ECONNRESET' || !socket.writable || active?.headersSent) {
      socket.destroy()
      return
    }
    const [status, reason, description] = STATUS_OF[code] ?? [
      400,
      'Bad Request',
      'the request is malformed',
    ]
    deps.log('client-error', { reason: code, status })
    answerOnSocket(socket, status, reason, description, extraHeaders)
  })
  // Node closes a CONNECT request's connection without a word unless someone listens: this
  // server is no proxy, so it is a method not allowed here (RFC 9110 §9.3.6, §15.5.6)
  listener.removeAllListeners('connect')
  listener.on('connect', (_req: IncomingMessage, socket: Socket) => {
    deps.log('client-error', { reason: 'connect', status: 405 })
    answerOnSocket(socket, 405, 'Method Not Allowed', 'method CONNECT is not allowed here', {
      ...extraHeaders,
      allow: 'GET, HEAD, POST, OPTIONS',
    })
  })
}

/**
 * Writes a whole, fixed HTTP/1.1 answer with a JSON error body and closes the connection: for
 * the events where Node hands over the socket, not a response object (the bytes are what Node's
 * documentation shows for `clientError`).
 */
function answerOnSocket(
  socket: Socket,
  status: number,
  reason: string,
  description: string,
  extraHeaders: Readonly<Record<string, string>>,
): void {
  const body = JSON.stringify({ error: 'invalid_request', error_description: description })
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    ...SECURITY_HEADERS,
    ...extraHeaders,
    connection: 'close',
  }
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  socket.end(`HTTP/1.1 ${String(status)} ${reason}\r\n${head}\r\n${body}`)
}
