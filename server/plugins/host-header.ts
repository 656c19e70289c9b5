import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi'
import { invalidRequest } from '../errors.ts'

/**
 * RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
 * request message that lacks a Host header field and to any request message that contains more
 * than one Host header field line". Node refuses the first itself with a bare 400 and no body
 * (its `requireHostHeader`, turned off where the listeners are made so that this answers in the
 * JSON error shape) and keeps the first of several Host lines; both are refused here.
 */
export const hostHeader: Plugin<undefined> = {
  name: 'host-header',
  register(server) {
    server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
      // an injected request (server.inject) has no header lines; shot always sets one Host
      const rawHeaders = request.raw.req.rawHeaders as string[] | undefined
      if (rawHeaders === undefined) return h.continue
      const { httpVersion } = request.raw.req
      let lines = 0
      for (let i = 0; i < rawHeaders.length; i += 2)
        if (rawHeaders[i]?.toLowerCase() === 'host') lines++
      if (lines > 1) throw invalidRequest('the request has more than one Host header')
      if (lines === 0 && httpVersion === '1.1')
        throw invalidRequest('an HTTP/1.1 request needs a Host header')
      return h.continue
    })
  },
}
