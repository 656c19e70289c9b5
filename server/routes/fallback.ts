import type { Server, ServerRoute } from '@hapi/hapi'
import { OAuthError } from '../errors.ts'

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * Every request no route takes: 405 with `Allow` when the path exists for other methods
 * (RFC 9110 §15.5.6), otherwise 404; both in the JSON error shape.
 */
export const fallback = (server: Server): ServerRoute => ({
  method: '*',
  path: '/{any*}',
  options: {
    // never parsed: subtext sets up a gzip/deflate decoder before it refuses a multipart body
    // with 415, and that decoder's later error went unhandled and took the process down
    payload: { parse: false },
    handler: (request) => {
      const allowed = METHODS.filter((m) => {
        const route = server.match(m, request.path)
        return route !== null && route.path !== '/{any*}'
      })
      if (allowed.length > 0) {
        if (allowed.includes('GET')) allowed.push('HEAD' as never)
        throw new OAuthError(
          'invalid_request',
          `method ${request.method.toUpperCase()} is not allowed here`,
          {
            status: 405,
            headers: { allow: allowed.join(', ') },
          },
        )
      }
      throw new OAuthError('invalid_request', 'no such endpoint', { status: 404 })
    },
  },
})
