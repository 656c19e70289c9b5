import type { discovery } from '../../catalogue/discovery.ts'
import { corruptHeaders, corruptJson, DISCOVERY, type Sabotages } from './kit.ts'

/** How to break the target for each DISC-* check. */
export const discoverySabotage: Record<keyof typeof discovery, Sabotages> = {
  'DISC-01': {
    how: 'discovery served as text/html',
    expect: /^discovery document: expected Content-Type application\/json/,
    handlers: corruptHeaders(DISCOVERY, (h) => h.set('content-type', 'text/html')),
  },
  'DISC-02': {
    how: 'issuer with a trailing slash',
    expect: /^issuer: expected /,
    handlers: corruptJson(DISCOVERY, (b) => (b.issuer = `${String(b.issuer)}/`)),
  },
  'DISC-03': {
    how: 'token_endpoint moved to another path',
    expect: /^token_endpoint: expected /,
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.token_endpoint = String(b.token_endpoint).replace('/auth/token', '/oauth/token')),
    ),
  },
  'DISC-04': {
    how: 'response_types_supported lists token',
    expect: /^response_types_supported: expected exactly \["code"\]/,
    handlers: corruptJson(DISCOVERY, (b) => (b.response_types_supported = ['code', 'token'])),
  },
  'DISC-05': {
    how: 'grant_types_supported lists implicit',
    expect: /^grant_types_supported: expected exactly /,
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.grant_types_supported = [...(b.grant_types_supported as string[]), 'implicit']),
    ),
  },
  'DISC-06': {
    how: 'scopes_supported without offline_access',
    expect: /^scopes_supported lacks offline_access/,
    handlers: corruptJson(DISCOVERY, (b) => (b.scopes_supported = ['openid', 'profile', 'email'])),
  },
  'DISC-07': {
    how: 'token_endpoint_auth_methods_supported omitted (defaults to client_secret_basic)',
    expect: /^token_endpoint_auth_methods_supported: expected an array/,
    handlers: corruptJson(DISCOVERY, (b) => delete b.token_endpoint_auth_methods_supported),
  },
  'DISC-08': {
    how: 'code_challenge_methods_supported lists plain',
    expect: /^code_challenge_methods_supported: expected exactly \["S256"\]/,
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.code_challenge_methods_supported = ['plain', 'S256']),
    ),
  },
  'DISC-09': {
    how: 'request_uri_parameter_supported omitted (defaults to true)',
    expect: /^request_uri_parameter_supported: expected false/,
    handlers: corruptJson(DISCOVERY, (b) => delete b.request_uri_parameter_supported),
  },
  'DISC-10': {
    // the auth-method members are a SHOULD (a note); the endpoints are the MUST
    how: 'revocation_endpoint omitted',
    expect: /^revocation_endpoint: expected /,
    handlers: corruptJson(DISCOVERY, (b) => delete b.revocation_endpoint),
  },
  'DISC-11': {
    how: 'RFC 8414 document with another issuer',
    expect: /^RFC 8414 issuer: expected /,
    handlers: corruptJson(
      '/.well-known/oauth-authorization-server',
      (b) => (b.issuer = 'https://elsewhere.example'),
    ),
  },
}
