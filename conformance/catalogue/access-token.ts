import { area } from './requirement.ts'

/** AT-* rows of shared/REQUIREMENTS.md. */
export const accessToken = area('Access token', {
  'AT-01': {
    level: 'MUST',
    source: 'INTERFACE.md §2.3; RFC 9068 §2.1, §4; RFC 8725 §3.1',
    title: 'the access token is a JWS signed with RS256 under a kid the JWKS resolves',
  },
  'AT-02': {
    level: 'MUST',
    source: 'RFC 9068 §2.1, §4; RFC 8725 §3.11; ARCHITECTURE.md (C4)',
    title: 'the access token header has typ at+jwt, which the ID token does not carry',
  },
  'AT-03': {
    level: 'MUST',
    source: 'INTERFACE.md §2.3; RFC 9068 §2.2; RFC 7519 §4.1',
    title: 'iss is the base URL; exp and iat are integers; exp - iat is expires_in; iat is now',
  },
  'AT-04': {
    level: 'MUST',
    source: 'INTERFACE.md §2.3, §5.6 (differs from RFC 9068 §3)',
    title: 'aud is the client identifier, as a string or a one-element array',
  },
  'AT-05': {
    level: 'MUST',
    source: 'INTERFACE.md §2.3; RFC 9068 §2.2, §2.2.3',
    title:
      'sub is the ID token and user-info sub; scope is a space-separated string equal to the granted scope',
  },
  'AT-06': {
    level: 'MUST',
    source: 'INTERFACE.md §2.3, §5.7; RFC 9068 §2.2.3.1, §6',
    title:
      'roles, permissions and org_id have their types and values, survive refresh, and no personal data is added',
  },
  'AT-07': {
    level: 'MUST',
    source: 'RFC 9068 §2.2; ARCHITECTURE.md (access token)',
    title: 'client_id is the requesting client and jti is unique across 50 tokens',
  },
})
