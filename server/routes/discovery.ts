import type { ServerRoute } from '@hapi/hapi'
import type { Config } from '../config.ts'
import { limitedAs } from '../plugins/rate-limit.ts'

/** The OpenID Connect discovery document: INTERFACE.md §2.7 plus the members decided in C7. */
export function discoveryDocument(baseUrl: string): Record<string, unknown> {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/auth/authorize`,
    token_endpoint: `${baseUrl}/auth/token`,
    userinfo_endpoint: `${baseUrl}/auth/user-info`,
    jwks_uri: `${baseUrl}/.well-known/jwks.json`,
    end_session_endpoint: `${baseUrl}/auth/logout`,
    introspection_endpoint: `${baseUrl}/auth/introspect`,
    revocation_endpoint: `${baseUrl}/auth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
    token_endpoint_auth_methods_supported: ['client_secret_post'],
    // RFC 8414 §2: an absent member would default to client_secret_basic
    introspection_endpoint_auth_methods_supported: ['client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    claims_supported: ['sub', 'name', 'email', 'email_verified', 'picture', 'updated_at'],
    // OIDC Discovery §3: request_uri_parameter_supported defaults to true, so say false
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
    // RFC 9207 §3: every authorization response carries iss, so clients may insist on it (the
    // mix-up defense of RFC 9700 §4.4); omitted, this member means false
    authorization_response_iss_parameter_supported: true,
  }
}

/** The OpenID document, and the same metadata at the RFC 8414 well-known path. */
export const discovery = ({ config }: { config: Pick<Config, 'baseUrl'> }): ServerRoute[] =>
  ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'].map((path) => ({
    method: 'GET',
    path,
    options: {
      plugins: limitedAs('public'),
      handler: (_request, h) =>
        h
          .response(discoveryDocument(config.baseUrl))
          .header('cache-control', 'public, max-age=300'),
    },
  }))
