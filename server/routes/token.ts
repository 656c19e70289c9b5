import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import { authenticateClient } from '../clients/authenticate.ts'
import type { Deps } from '../deps.ts'
import { invalidRequest, unauthorizedClient, unsupportedGrantType } from '../errors.ts'
import { grants } from '../grants/index.ts'
import { singleParams } from '../protocol/params.ts'
import { limitedAs } from '../plugins/rate-limit.ts'

/** Payload options of the form-encoded API endpoints: anything but a form is invalid_request (400). */
export const formPayload = {
  allow: 'application/x-www-form-urlencoded',
  maxBytes: 16 * 1024,
  failAction: (_request: Request, _h: ResponseToolkit, err: Error | undefined) => {
    const status = (err as { output?: { statusCode?: number } } | undefined)?.output?.statusCode
    if (status === 413) throw invalidRequest('the request body is too large', { status: 413 })
    throw invalidRequest('the request body must be application/x-www-form-urlencoded', {
      cause: err,
    })
  },
} as const

/**
 * POST /auth/token. Parameters once each (RFC 6749 §3.2), client_secret_post, then the grant.
 * Every answer, error or not, is marked no-store (RFC 6749 §5.1).
 */
export const token = (deps: Deps): ServerRoute => ({
  method: 'POST',
  path: '/auth/token',
  options: {
    plugins: limitedAs('token'),
    payload: formPayload,
    ext: {
      // RFC 6749 §5.2 shows errors with the same no-cache headers as §5.1 successes
      onPreResponse: {
        method: (request, h) => {
          const response = request.response
          if (response instanceof Error) response.output.headers.pragma = 'no-cache'
          else response.header('pragma', 'no-cache')
          return h.continue
        },
      },
    },
    handler: async (request, h) => {
      const params = singleParams(request.payload)
      const client = await authenticateClient(request, params, deps)
      const grantType = params.grant_type
      if (!grantType) throw invalidRequest('missing required parameter grant_type')
      const grant = grants.get(grantType)
      if (!grant) throw unsupportedGrantType('the grant type is not supported')
      if (!client.grantTypes.includes(grantType))
        throw unauthorizedClient('the client may not use this grant type')
      const body = await grant.handle({ client, params }, deps)
      return h
        .response(body)
        .type('application/json')
        .header('cache-control', 'no-store')
        .header('pragma', 'no-cache')
    },
  },
})
