import { area } from './requirement.ts'

/** UI-* rows of shared/REQUIREMENTS.md. */
export const userInfo = area('UserInfo', {
  'UI-01': {
    level: 'MUST',
    source: 'INTERFACE.md §4.3; OIDC Core §5.3.1, §5.3.2',
    title: 'GET with a Bearer header is 200 JSON whose sub is the ID token sub',
  },
  'UI-02': {
    level: 'MUST',
    source: 'OIDC Core §5.3.1; OIDF oidcc-userinfo-post-header',
    title: 'POST with a Bearer header and an empty body returns the same claims as GET',
  },
  'UI-03': {
    level: 'MUST',
    // the header and the body at once: RFC 6750 §2's MUST ("Clients MUST NOT use more than one
    // method") binds the client; §3.1 names it invalid_request and "The resource server SHOULD
    // respond with the HTTP 400 (Bad Request) status code": accepting it warns; a refusal in
    // another shape fails
    source:
      'RFC 6750 §3.1 (more than one method is invalid_request; "The resource server SHOULD respond with the HTTP 400 (Bad Request) status code": accepting it is a warning), §2 ("Clients MUST NOT use more than one method"), §2.2 (MAY)',
    title:
      'a token in the header and the body at once is 400 invalid_request (accepting it: SHOULD); a body token answers cleanly',
  },
  'UI-04': {
    level: 'MUST',
    source: 'INTERFACE.md §2.4, §4.3; OIDC Core §5.4',
    title: 'user-info returns exactly the claims the granted scopes allow',
  },
  'UI-05': {
    level: 'MUST',
    source: 'INTERFACE.md §2.4; OIDC Core §5.1, §5.3.2 (SHOULD omit absent claims)',
    title: 'claim types: updated_at a number, email_verified a boolean, picture an absolute URL',
  },
  'UI-06': {
    level: 'MUST',
    // the challenge is a MUST; the 401 only a SHOULD (a WARN when alone): INTERFACE.md §7 leaves
    // each error's status "not shown"; RFC 6750 §3.1 says the request "SHOULD NOT include an
    // error code", and 401 is what its examples and RFC 9110 §11.6.1/§15.5.2 pair the challenge with
    source:
      'RFC 6750 §3 ("the resource server MUST include the HTTP "WWW-Authenticate" response header field"), §3.1 (no error code: SHOULD NOT); the 401: RFC 6750 §3 examples, RFC 9110 §11.6.1, §15.5.2 (SHOULD, a warning)',
    title: 'no credentials: a WWW-Authenticate Bearer challenge (MUST), with 401 (SHOULD)',
  },
  'UI-07': {
    level: 'MUST',
    source: 'INTERFACE.md §3, §5.6; RFC 6750 §3.1; OIDC Core §5.3.3; RFC 8725 §3.1',
    title:
      'garbage, truncated, forged, foreign, expired and revoked tokens: 401 with error="invalid_token"',
  },
  'UI-08': {
    level: 'SHOULD',
    source: 'RFC 6750 §3.1; OIDC Core §5.3',
    title: 'a token without the openid scope is 403 insufficient_scope with a challenge',
  },
  'UI-09': {
    level: 'MUST',
    source: 'RFC 8725 §3.11, §3.12; RFC 9068 §4, §5',
    title: 'an ID token or a refresh token is not accepted as a bearer access token',
  },
  'UI-10': {
    level: 'MUST',
    source: 'RFC 9110 §11.1; RFC 6750 §2.1',
    title: 'the Bearer scheme name is case-insensitive',
  },
  'UI-11': {
    level: 'SHOULD',
    source: 'OIDC Core §5.3.1; Fetch Standard (CORS)',
    title: 'a CORS preflight allowing the Authorization header succeeds for browser-based RPs',
  },
  // RFC 6750 §2.3: "it SHOULD NOT be used unless it is impossible to transport the access token
  // in the Authorization request header field or the HTTP request entity-body. Resource servers
  // MAY support this method." §5.3: "Bearer tokens SHOULD NOT be passed in page URLs (for example,
  // as query string parameters)." RFC 9700 §4.3.2: "Clients MUST NOT pass access tokens in a URI
  // query parameter in the way described in Section 2.3 of [RFC6750]." INTERFACE.md §4.3 names
  // the Authorization header only. The MAY lets a resource server accept it, so not MUST; what it
  // accepts serves only the use both RFCs tell clients not to make (user-info always takes the
  // header, OIDC Core §5.3.1), hence SHOULD, which the security gate holds at MUST as token theft
  // (RFC 6819 §4.6.7: tokens in URLs leak through logs and Referer)
  'UI-12': {
    level: 'SHOULD',
    source:
      'RFC 6750 §2.3 (SHOULD NOT be used; resource servers MAY support it), §5.3 (SHOULD NOT be passed in page URLs); RFC 9700 §4.3.2 (clients MUST NOT); INTERFACE.md §4.3 (the Authorization header)',
    title:
      'an access token in the URI query (?access_token=) of GET or POST is refused with a 4xx, never answered with claims',
  },
})
