import { area } from './requirement.ts'

/** REV-* rows of shared/REQUIREMENTS.md. */
export const revocation = area('Revocation', {
  'REV-01': {
    level: 'MUST',
    source: 'INTERFACE.md §3, §4.5; RFC 7009 §2.1, §2.2',
    title: 'a revoked access token is 200 {message}, then inactive and refused by user-info',
  },
  'REV-02': {
    level: 'MUST',
    source: 'INTERFACE.md §4.5; RFC 7009 §2.1',
    title: 'a revoked refresh token no longer refreshes and introspects inactive',
  },
  'REV-03': {
    level: 'SHOULD',
    source:
      'RFC 7009 §2.1 ("If the particular token is a refresh token and the authorization server supports the revocation of access tokens, then the authorization server SHOULD also invalidate all access tokens based on the same authorization grant"; MAY for access token → refresh token)',
    title: 'revoking a refresh token also revokes the access tokens of the same grant',
  },
  'REV-04': {
    level: 'MUST',
    source: 'INTERFACE.md §3, §4.5; RFC 7009 §2.2',
    title: 'garbage, expired and already-revoked tokens are still 200 {message}',
  },
  'REV-05': {
    level: 'MUST',
    source:
      'INTERFACE.md §4.5; RFC 7009 §2.1, §2.2.1 (the error response of RFC 6749 §5.2: invalid_client; "The authorization server MAY return an HTTP 401 (Unauthorized) status code", MUST "If the client attempted to authenticate via the "Authorization" request header field")',
    title:
      'revocation without valid client credentials is invalid_client (400 or 401; 401 for Basic) and revokes nothing',
  },
  'REV-06': {
    level: 'MUST',
    source: "RFC 7009 §2.1; ARCHITECTURE.md (another client's token: silent 200)",
    title: "a client cannot revoke another client's access or refresh token",
  },
  'REV-07': {
    level: 'MUST',
    source: 'RFC 7009 §2.1, §2.2.1',
    title:
      'no token is 400 invalid_request, GET is refused, an unknown hint is ignored, an ID token is a no-op',
  },
})
