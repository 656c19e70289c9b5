import type { Boom } from '@hapi/boom'
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi'
import { OAuthError } from '../errors.ts'
import type { Deps } from '../deps.ts'

/** Renders every error as `{ error, error_description }` (INTERFACE.md §7); nowhere else does. */
export const oauthErrors = (deps: Pick<Deps, 'log'>): Plugin<undefined> => ({
  name: 'oauth-errors',
  register(server) {
    server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
      const response = request.response
      if (!('isBoom' in response) || !response.isBoom) return h.continue
      const error = toOAuthError(response, request, deps)
      const res = h.response(error.toJSON()).code(error.status).type('application/json')
      for (const [name, value] of Object.entries(error.headers)) res.header(name, value)
      // RFC 6749 §5.1/§5.2: error responses from the token endpoint are not cached either
      res.header('cache-control', 'no-store')
      return res
    })
  },
})

function toOAuthError(boom: Boom, request: Request, deps: Pick<Deps, 'log'>): OAuthError {
  if (boom instanceof OAuthError) return boom
  const status = boom.output.statusCode
  if (status >= 500) {
    deps.log('error', {
      method: request.method,
      path: request.path,
      error: boom.message,
      stack: boom.stack,
    })
    return new OAuthError('server_error', 'the server encountered an unexpected condition')
  }
  const described: Record<number, string> = {
    400: 'the request is malformed',
    404: 'no such endpoint',
    413: 'the request body is too large',
    415: 'unsupported content type',
  }
  const description =
    described[status] ?? (boom.output.payload.message || 'the request was refused')
  return new OAuthError('invalid_request', description, { status, cause: boom })
}
