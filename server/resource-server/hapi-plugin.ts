import type { Plugin, Request, ResponseToolkit, Server } from '@hapi/hapi'
import { ForbiddenError } from './authorization.ts'
import { VerifyError, type AccessTokenClaims, type Verifier } from './verifier.ts'

/** Route-level requirements: `options.plugins.idp = { scope: 'read:documents', role: 'admin' }`. */
export interface RouteRequirements {
  readonly scope?: string
  readonly role?: string
}

declare module '@hapi/hapi' {
  interface PluginSpecificConfiguration {
    idp?: RouteRequirements
  }
}

const json = (
  h: ResponseToolkit,
  status: number,
  error: string,
  description: string,
  challenge?: string,
) => {
  const res = h
    .response({ error, error_description: description })
    .code(status)
    .type('application/json')
  if (challenge) res.header('www-authenticate', challenge)
  return res
}

/**
 * A hapi auth scheme `idp-bearer` over a Verifier: a missing or bad token is 401 with
 * `WWW-Authenticate: Bearer` (RFC 6750 §3), a failed scope or role requirement 403. The
 * credentials are the verified AccessTokenClaims.
 */
export const idpBearer: Plugin<{ verifier: Verifier; realm?: string }> = {
  name: 'idp-bearer',
  register(server: Server, options) {
    const realm = options.realm ?? 'api'
    server.auth.scheme('idp-bearer', () => ({
      async authenticate(request: Request, h: ResponseToolkit) {
        const header = (request.headers as Record<string, string | undefined>).authorization
        const token = header === undefined ? undefined : /^Bearer +(\S+) *$/i.exec(header)?.[1]
        try {
          if (header !== undefined && token === undefined)
            throw new VerifyError('malformed', 'the Authorization header is not a Bearer token')
          const claims = await options.verifier.verify(token)
          return h.authenticated({ credentials: { claims } })
        } catch (err) {
          const e =
            err instanceof VerifyError
              ? err
              : new VerifyError('malformed', 'the access token could not be verified')
          // RFC 6750 §3.1: no error code when the request carried no credentials
          const challenge =
            e.code === 'missing'
              ? `Bearer realm="${realm}"`
              : `Bearer realm="${realm}", error="invalid_token", error_description="${e.message}"`
          return h
            .response({
              error: e.code === 'missing' ? 'invalid_request' : 'invalid_token',
              error_description: e.message,
            })
            .code(401)
            .type('application/json')
            .header('www-authenticate', challenge)
            .takeover()
        }
      },
    }))
    server.auth.strategy('idp-bearer', 'idp-bearer')
    server.ext('onPostAuth', (request, h) => {
      const need = request.route.settings.plugins?.idp
      const claims = claimsOf(request)
      if (!need || !claims) return h.continue
      if (need.scope && !claims.scopes.includes(need.scope)) {
        return json(
          h,
          403,
          'insufficient_scope',
          `the token lacks the scope ${need.scope}`,
          `Bearer realm="${realm}", error="insufficient_scope", scope="${need.scope}"`,
        ).takeover()
      }
      if (need.role && !claims.roles.includes(need.role))
        return json(h, 403, 'access_denied', `the role ${need.role} is required`).takeover()
      return h.continue
    })
    server.ext('onPreResponse', (request, h) => {
      const response = request.response
      if ('isBoom' in response && response.isBoom) {
        const forbidden = (response as unknown as { data?: unknown }).data
        if (response instanceof ForbiddenError || forbidden instanceof ForbiddenError) {
          const f = (response instanceof ForbiddenError ? response : forbidden) as ForbiddenError
          return json(
            h,
            403,
            f.code,
            f.message,
            f.scope
              ? `Bearer realm="${realm}", error="insufficient_scope", scope="${f.scope}"`
              : undefined,
          )
        }
      }
      return h.continue
    })
  },
}

/** The verified claims of an authenticated request. */
export function claimsOf(request: Request): AccessTokenClaims | undefined {
  return (request.auth.credentials as { claims?: AccessTokenClaims } | null)?.claims
}
