import { area } from './requirement.ts'

/** INTRO-* rows of shared/REQUIREMENTS.md. */
export const introspection = area('Introspection', {
  'INTRO-01': {
    level: 'MUST',
    source: 'INTERFACE.md §2.5, §4.4; RFC 7662 §2.2',
    title: 'an active access token introspects with every field, equal to its claims',
  },
  'INTRO-02': {
    level: 'MUST',
    source: 'INTERFACE.md §4.5; RFC 7662 §2.1',
    title: 'a refresh token introspects active with client_id, the original scope and sub',
  },
  'INTRO-03': {
    level: 'MUST',
    source: 'INTERFACE.md §2.5; RFC 7662 §2.2',
    title: 'garbage, expired, revoked, forged and ID tokens introspect as exactly {"active":false}',
  },
  'INTRO-04': {
    level: 'MUST',
    source:
      'INTERFACE.md §4.4; RFC 7662 §2.1, §2.3 ("If the protected resource uses OAuth 2.0 client credentials to authenticate to the introspection endpoint and its credentials are invalid, the authorization server responds with an HTTP 401"); no secret sent: RFC 6749 §5.2 (invalid_client, 401 a MAY without an Authorization header)',
    title:
      'introspection without valid client credentials is invalid_client (401 for a wrong secret), no token data',
  },
  'INTRO-05': {
    level: 'MUST',
    source: 'RFC 7662 §2.1, §2.3',
    title:
      'no token is 400 invalid_request, GET is refused, and a wrong hint still finds the token',
  },
  // MAY stays: RFC 7662 §2.2 requires {active:false} only once the server decided that "the
  // protected resource is not allowed to introspect this particular token", and leaves that
  // decision to it ("The authorization server MAY respond differently to different protected
  // resources making the same request"); the interface does not decide it
  'INTRO-06': {
    level: 'MAY',
    source:
      'RFC 7662 §2.2 ("The authorization server MAY respond differently to different protected resources making the same request"), §4; ARCHITECTURE.md (another client sees {active:false})',
    title: "another client's tokens introspect as {active:false}",
  },
  'INTRO-07': {
    level: 'MUST',
    source:
      'RFC 7662 §4 (freshness; no-store is hardening); RFC 6749 §4.1.2 (a replay "SHOULD revoke (when possible)": CODE-03)',
    title:
      'revocation shows up in introspection within 1 s, and so does a code replay’s revocation when user-info shows there was one (whether a replay revokes is CODE-03’s SHOULD)',
  },
})
