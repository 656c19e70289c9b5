import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import type { Deps } from '../deps.ts'
import { endpointOf } from '../explain/findings.ts'
import { insufficientScope, invalidRequest, invalidToken, OAuthError } from '../errors.ts'
import { isPresent, rawParams, single } from '../protocol/params.ts'
import { parseScope } from '../protocol/scope.ts'
import { userClaims } from '../tokens/claims.ts'
import { verifyAccessToken } from '../tokens/verify-access-token.ts'
import { limitedAs } from '../plugins/rate-limit.ts'

const REALM = 'realm="idp"'

/** RFC 6750 §3: every error carries a WWW-Authenticate challenge. */
function challenge(err: OAuthError): OAuthError {
  const header =
    err.code === 'invalid_request' ||
    err.code === 'invalid_token' ||
    err.code === 'insufficient_scope'
      ? `Bearer ${REALM}, error="${err.code}", error_description="${err.message}"${err.code === 'insufficient_scope' ? ', scope="openid"' : ''}`
      : `Bearer ${REALM}`
  return new OAuthError(err.code, err.message, {
    headers: { ...err.headers, 'www-authenticate': header },
    cause: err,
  })
}

/**
 * The bearer token of a user-info request (RFC 6750 §2): the Authorization header (scheme
 * case-insensitive, RFC 9110 §11.1) or, for POST, the form body; never both, never the query.
 */
function bearerToken(request: Request): string | undefined {
  const header = (request.headers as Record<string, string | undefined>).authorization
  if (isPresent(rawParams(request.query), 'access_token'))
    throw invalidRequest('access tokens are not accepted in the URL')
  const form = request.method === 'post' ? rawParams(request.payload) : {}
  const inBody = single(form, 'access_token')
  if (header !== undefined && isPresent(form, 'access_token'))
    throw invalidRequest('use exactly one way to send the access token')
  if (header !== undefined) {
    const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header)
    if (!m?.[1]) throw invalidToken('the Authorization header is not a Bearer token')
    return m[1]
  }
  return inBody
}

/** One of our ID tokens (OIDC Core §2): our issuer, no `typ: at+jwt`, ID-token-only claims. */
function looksLikeIdToken(token: string, issuer: string): boolean {
  try {
    const header = decodeProtectedHeader(token)
    const claims = decodeJwt(token)
    return (
      header.typ !== 'at+jwt' &&
      claims.iss === issuer &&
      ('auth_time' in claims || 'at_hash' in claims || 'nonce' in claims)
    )
  } catch {
    return false
  }
}

const audienceOf = (token: string): string | undefined => {
  const aud = decodeJwt(token).aud
  return typeof aud === 'string' ? aud : aud?.[0]
}

/**
 * GET and POST /auth/user-info (OIDC Core §5.3): the claims of INTERFACE.md §2.4 that the
 * token's scopes allow. A token without openid is insufficient_scope (403).
 */
export const userInfo = (deps: Deps): ServerRoute[] => {
  const handler = async (request: Request, h: ResponseToolkit) => {
    let token: string | undefined
    try {
      token = bearerToken(request)
      // RFC 6750 §3.1: a request without credentials gets a challenge without an error code
      if (token === undefined)
        throw new OAuthError('invalid_token', 'an access token is required', {
          headers: { 'www-authenticate': `Bearer ${REALM}` },
        })
      const { payload } = await verifyAccessToken(token, deps)
      const scopes = parseScope(payload.scope) ?? []
      if (!scopes.includes('openid'))
        throw insufficientScope('the access token lacks the openid scope')
      const user = await deps.store.users.get(payload.sub)
      if (!user) throw invalidToken('the access token does not belong to a user')
      return h
        .response(userClaims(user, scopes))
        .type('application/json')
        .header('cache-control', 'no-store')
        .header('pragma', 'no-cache')
    } catch (err) {
      if (
        err instanceof OAuthError &&
        err.code === 'invalid_token' &&
        token !== undefined &&
        looksLikeIdToken(token, deps.config.baseUrl)
      ) {
        deps.explain?.record('id-token-as-access-token', {
          clientId: audienceOf(token),
          endpoint: endpointOf(request),
        })
        throw challenge(
          invalidToken(
            'the bearer token is an ID token; call user-info with the access_token of the token response (OIDC Core section 5.3.1)',
          ),
        )
      }
      if (err instanceof OAuthError && err.headers['www-authenticate'] === undefined)
        throw challenge(err)
      throw err
    }
  }
  const cors = {
    origin: ['*'],
    headers: ['Authorization', 'Content-Type'],
    credentials: false,
    additionalExposedHeaders: ['WWW-Authenticate'],
  }
  return [
    {
      method: 'GET',
      path: '/auth/user-info',
      options: { handler, cors, plugins: limitedAs('userinfo') },
    },
    {
      method: 'POST',
      path: '/auth/user-info',
      options: {
        handler,
        cors,
        plugins: limitedAs('userinfo'),
        payload: {
          allow: 'application/x-www-form-urlencoded',
          // OIDC Core §5.3.1: a POST may carry only the Authorization header and no body at all
          defaultContentType: 'application/x-www-form-urlencoded',
          maxBytes: 16 * 1024,
          failAction: 'error',
        },
      },
    },
  ]
}
