import { area } from './requirement.ts'

/** DISC-* rows of shared/REQUIREMENTS.md. */
export const discovery = area('Discovery', {
  'DISC-01': {
    level: 'MUST',
    source: 'OIDC Discovery §4; INTERFACE.md §4.8',
    title: 'the discovery document is served as a JSON object with status 200',
  },
  'DISC-02': {
    level: 'MUST',
    source: 'OIDC Discovery §4.3; RFC 8414 §2, §3.3',
    title: 'issuer is byte-identical to the base URL: https, no query, fragment or trailing slash',
  },
  'DISC-03': {
    level: 'MUST',
    source: 'OIDC Discovery §3; RFC 8414 §2; INTERFACE.md §2.7',
    title:
      'required members are present with the right types and every endpoint is the base URL plus its path',
  },
  'DISC-04': {
    level: 'MUST',
    source: 'OIDC Discovery §3; INTERFACE.md §2.7',
    title:
      'response_types_supported is [code], subject_types_supported [public], RS256 listed and none not',
  },
  'DISC-05': {
    level: 'MUST',
    source: 'OIDC Discovery §3; RFC 8414 §2; RFC 9700 §2.4',
    title: 'grant_types_supported is exactly authorization_code, refresh_token, client_credentials',
  },
  'DISC-06': {
    level: 'SHOULD',
    source: 'OIDC Discovery §3; RFC 6749 App. A.4',
    title:
      'scopes_supported holds openid, profile, email, offline_access as valid scope tokens; claims_supported lists the user claims',
  },
  'DISC-07': {
    level: 'MUST',
    source: 'OIDC Discovery §3; INTERFACE.md §1 (client_secret_post only)',
    title: 'token_endpoint_auth_methods_supported declares exactly [client_secret_post]',
  },
  'DISC-08': {
    level: 'SHOULD',
    source: 'RFC 9700 §2.1.1; RFC 8414 §2; RFC 7636 §4.2',
    title: 'code_challenge_methods_supported is exactly [S256]',
  },
  'DISC-09': {
    level: 'MUST',
    source: 'OIDC Discovery §3 (member defaults)',
    title:
      'request_uri_parameter_supported is stated false; request and claims parameters false or absent; response_modes [query]',
  },
  'DISC-10': {
    level: 'MUST',
    source: 'RP-Initiated Logout §2.1; RFC 8414 §2; RFC 7662; RFC 7009',
    title:
      'end_session, introspection and revocation endpoints are advertised, with their auth methods [client_secret_post]',
  },
  'DISC-11': {
    level: 'MAY',
    source: 'RFC 8414 §3, §5',
    title: 'the RFC 8414 well-known document, when served, agrees with the OpenID one',
  },
})
