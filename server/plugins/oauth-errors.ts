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
  if (status >= 500 && isStorageOutage(boom)) {
    deps.log('storage-unavailable', {
      method: request.method,
      path: request.path,
      error: boom.message,
    })
    // ARCHITECTURE.md: a lost database is 503, never a 500, and never a half-issued grant
    return new OAuthError(
      'temporarily_unavailable',
      'the service is temporarily unavailable; retry shortly',
      {
        headers: { 'retry-after': '5' },
      },
    )
  }
  // hapi's own 503: the route's response timeout (app.ts) ran out before the handler answered
  if (status === 503) {
    deps.log('response-timeout', { method: request.method, path: request.path })
    return new OAuthError(
      'temporarily_unavailable',
      'the server could not answer in time; retry shortly',
      { headers: { 'retry-after': '5' } },
    )
  }
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
  // inert's 403 for a path that leaves the assets directory: nothing is served there
  if (status === 403) return new OAuthError('invalid_request', 'no such endpoint', { status: 404 })
  const description =
    described[status] ?? (boom.output.payload.message || 'the request was refused')
  return new OAuthError('invalid_request', description, { status, cause: boom })
}

/** Connection-level failures of the store (PostgreSQL down, pool exhausted, SQLite locked). */
const OUTAGE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08003',
  '08006',
  'SQLITE_BUSY',
])

export function isStorageOutage(err: unknown): boolean {
  for (
    let e: unknown = err, depth = 0;
    e instanceof Error && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && OUTAGE_CODES.has(code)) return true
    if (
      e.name === 'KnexTimeoutError' ||
      /Connection terminated|Timeout acquiring a connection/.test(e.message)
    )
      return true
  }
  return false
}
