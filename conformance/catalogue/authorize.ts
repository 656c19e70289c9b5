import { area } from './requirement.ts'

/** AUTHZ-* rows of shared/REQUIREMENTS.md. */
export const authorize = area('Authorize', {
  'AUTHZ-01': {
    level: 'MUST',
    source: 'INTERFACE.md §4.1; OIDC Core §3.1.2.1',
    title: 'a valid request shows the hosted login page and does not redirect to the client first',
  },
  'AUTHZ-02': {
    level: 'MUST',
    source: 'INTERFACE.md §4.1; RFC 6749 §4.1.2',
    title:
      'a successful login redirects to the redirect URI with code and the identical state only',
  },
  'AUTHZ-03': {
    level: 'MUST',
    source: 'RFC 6749 §4.1.2.1',
    title:
      'a missing or unknown client_id, or a client without the code flow, gets an error at the IdP and no redirect',
  },
  'AUTHZ-04': {
    level: 'MUST',
    source: 'RFC 6749 §3.1.2.4; OIDC Core §3.1.2.1',
    title:
      'an unregistered redirect_uri, or one registered only for another client, gets an error page and no redirect',
  },
  'AUTHZ-05': {
    level: 'MUST',
    source: 'RFC 9700 §2.1, §4.1.3; RFC 3986 §6.2.1',
    title: 'redirect_uri is compared by exact string match: every near variant is refused',
  },
  'AUTHZ-06': {
    level: 'MUST',
    source: 'INTERFACE.md §4.1; OIDC Core §3.1.2.1',
    title: 'a missing redirect_uri is an error page, not a redirect',
  },
  'AUTHZ-07': {
    level: 'MUST',
    source: 'RFC 6749 §3.1.1, §4.1.2.1; RFC 9700 §2.1.2',
    title:
      'a missing or unsupported response_type redirects with an error (invalid_request, unsupported_response_type or unauthorized_client) and state, never a code or token',
  },
  'AUTHZ-08': {
    level: 'MUST',
    source: 'RFC 6749 §3.1, §3.3; OIDC Core §15.1',
    title:
      'unknown and optional OIDC parameters are accepted, order does not matter, repeated parameters are refused',
  },
  'AUTHZ-09': {
    level: 'MUST',
    source: 'INTERFACE.md §4.1; RFC 6749 §4.1.2',
    title: 'state is echoed verbatim (long, reserved and UTF-8 characters); no state is tolerated',
  },
  'AUTHZ-10': {
    level: 'MUST',
    source: 'INTERFACE.md §4.1; OIDC Core §3.1.2.1',
    title: 'a scope without openid gets a code and no ID token (a missing scope is AUTHZ-19)',
  },
  'AUTHZ-11': {
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 6749 §3.3; OIDC Core §3.1.2.1',
    title: "unknown scopes and another application's scopes are never granted",
  },
  'AUTHZ-12': {
    level: 'MUST',
    source: 'OIDC Core §2, §3.1.2.1, §3.1.3.7',
    title: 'nonce is echoed in the ID token; a code-flow request without nonce succeeds',
  },
  'AUTHZ-13': {
    level: 'MUST',
    source: 'OIDC Core §3.1.2.1',
    title: 'an authorization request sent by form POST behaves like GET',
  },
  'AUTHZ-14': {
    level: 'MUST',
    source: 'OIDC Core §3.1.2.1, §3.1.2.6, §15.1',
    title: 'prompt=none shows no UI: an error without a session, a code with one',
  },
  'AUTHZ-15': {
    level: 'MUST',
    source: 'OIDC Core §3.1.2.1, §2 (auth_time), §15.1',
    title:
      'prompt=login and an exceeded max_age (max_age=0 included) force a new login, or an error with prompt=none; a large max_age does not',
  },
  'AUTHZ-16': {
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 6749 §4.1.2.1',
    title: 'a user who cancels is sent back with error=access_denied and state',
  },
  'AUTHZ-17': {
    level: 'MUST',
    source: 'OIDC Core §6, §3.1.2.6; OIDC Discovery §3',
    title:
      'request and request_uri are processed or refused with request(_uri)_not_supported, never ignored',
  },
  'AUTHZ-18': {
    level: 'MUST',
    source: 'RFC 6749 §4.1.2.1, App. A.7, A.8; RFC 9207 §2',
    title:
      'error redirects carry a registered error, the state, no code, a clean description if any (OPTIONAL), and iss = issuer if present',
  },
  'AUTHZ-19': {
    level: 'MUST',
    source: 'INTERFACE.md §4.1 (scope not required); RFC 6749 §3.3',
    title:
      "an authorization request without scope is processed (the client's default scope) and its code redeemed",
  },
  'AUTHZ-20': {
    level: 'SHOULD',
    // RFC 6749 §3.3: "The authorization server MAY fully or partially ignore the scope requested
    // by the client ... If the issued access token scope is different from the one requested by
    // the client, the authorization server MUST include the "scope" response parameter"
    source: 'INTERFACE.md §7; RFC 6749 §3.3, §4.1.2.1',
    title:
      "an unknown scope is refused with invalid_scope, or dropped with the token response's scope telling so, never silently",
  },
})
