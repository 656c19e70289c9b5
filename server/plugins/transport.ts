import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi'
import { invalidRequest } from '../errors.ts'
import type { Deps } from '../deps.ts'
import { forwardedProto } from '../protocol/client-address.ts'

/** RFC 6797: one year, subdomains included. */
export const HSTS = 'max-age=31536000; includeSubDomains'

/**
 * HTTPS-only rules (ARCHITECTURE.md): HSTS and nosniff on every response; behind a trusted TLS-terminating
 * proxy, a request that did not arrive over https is refused before any handler reads it.
 */
export const transport = (deps: Pick<Deps, 'config'>): Plugin<undefined> => ({
  name: 'transport',
  register(server) {
    if (deps.config.trustProxy) {
      server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
        const trust = deps.config.trustProxy
        if (trust === false || forwardedProto(request, trust) !== 'https') {
          throw invalidRequest('plain HTTP is not served; use https')
        }
        return h.continue
      })
    }
    server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
      const response = request.response
      // nosniff on every response, the JSON API's included (pages set their own CSP as well)
      const headers = { 'strict-transport-security': HSTS, 'x-content-type-options': 'nosniff' }
      for (const [name, value] of Object.entries(headers)) {
        if ('isBoom' in response) response.output.headers[name] = value
        else response.header(name, value)
      }
      return h.continue
    })
  },
})
