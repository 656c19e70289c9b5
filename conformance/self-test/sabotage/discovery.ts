import type { discovery } from '../../catalogue/discovery.ts'
import { corruptHeaders, corruptJson, DISCOVERY, type Sabotage } from './kit.ts'

/** How to break the target for each DISC-* check. */
export const discoverySabotage: Record<keyof typeof discovery, Sabotage> = {
  'DISC-01': {
    how: 'discovery served as text/html',
    handlers: corruptHeaders(DISCOVERY, (h) => h.set('content-type', 'text/html')),
  },
  'DISC-02': {
    how: 'issuer with a trailing slash',
    handlers: corruptJson(DISCOVERY, (b) => (b.issuer = `${String(b.issuer)}/`)),
  },
  'DISC-03': {
    how: 'token_endpoint moved to another path',
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.token_endpoint = String(b.token_endpoint).replace('/auth/token', '/oauth/token')),
    ),
  },
  'DISC-04': {
    how: 'response_types_supported lists token',
    handlers: corruptJson(DISCOVERY, (b) => (b.response_types_supported = ['code', 'token'])),
  },
  'DISC-05': {
    how: 'grant_types_supported lists implicit',
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.grant_types_supported = [...(b.grant_types_supported as string[]), 'implicit']),
    ),
  },
  'DISC-06': {
    how: 'scopes_supported without offline_access',
    handlers: corruptJson(DISCOVERY, (b) => (b.scopes_supported = ['openid', 'profile', 'email'])),
  },
  'DISC-07': {
    how: 'token_endpoint_auth_methods_supported omitted (defaults to client_secret_basic)',
    handlers: corruptJson(DISCOVERY, (b) => delete b.token_endpoint_auth_methods_supported),
  },
  'DISC-08': {
    how: 'code_challenge_methods_supported lists plain',
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.code_challenge_methods_supported = ['plain', 'S256']),
    ),
  },
  'DISC-09': {
    how: 'request_uri_parameter_supported omitted (defaults to true)',
    handlers: corruptJson(DISCOVERY, (b) => delete b.request_uri_parameter_supported),
  },
  'DISC-10': {
    // the auth-method members are a SHOULD (a note); the endpoints are the MUST
    how: 'revocation_endpoint omitted',
    handlers: corruptJson(DISCOVERY, (b) => delete b.revocation_endpoint),
  },
  'DISC-11': {
    how: 'RFC 8414 document with another issuer',
    handlers: corruptJson(
      '/.well-known/oauth-authorization-server',
      (b) => (b.issuer = 'https://elsewhere.example'),
    ),
  },
}
