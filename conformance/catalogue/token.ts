import { area } from './requirement.ts'

/** TOK-* rows of shared/REQUIREMENTS.md. */
export const token = area('Token endpoint', {
  'TOK-01': {
    level: 'MUST',
    source: 'RFC 6749 §5.1; OIDC Core §3.1.3.3',
    title: 'every token response of every grant has Cache-Control no-store and Pragma no-cache',
  },
  'TOK-02': {
    level: 'MUST',
    source: 'INTERFACE.md §2.2; RFC 6749 §5.1, §3.3, §7.1',
    title:
      'token responses are JSON with token_type Bearer, a numeric expires_in and the granted scope',
  },
  'TOK-03': {
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 6749 §5.2',
    title: 'wrong, empty or missing secret and unknown client get invalid_client',
  },
  'TOK-04': {
    level: 'MUST',
    source: 'RFC 6749 §2.3.1, §5.2; ARCHITECTURE.md C1',
    title: 'HTTP Basic credentials get tokens, or 401 invalid_client with WWW-Authenticate: Basic',
  },
  'TOK-05': {
    level: 'MUST',
    source: 'RFC 6749 §2.3, §2.3.1, §3.2, §4.1.3',
    title:
      'two auth methods, credentials in the URL, GET, a JSON body or a repeated parameter are refused',
  },
  'TOK-06': {
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 6749 §5.2; RFC 9700 §2.4',
    title:
      'missing grant_type is invalid_request, unknown ones unsupported_grant_type, disallowed ones unauthorized_client',
  },
  'TOK-07': {
    level: 'MUST',
    source: 'RFC 6749 App. A.12, A.17, §10.10',
    title: 'tokens use only %x20-7E and 20 refresh tokens are distinct with at least 128 bits each',
  },
  'TOK-08': {
    level: 'SHOULD',
    source: 'hardening: RFC 6819 §4.1.1 (RFC 6749 §2.2: a client identifier is not a secret)',
    title:
      'an unknown client_id and a wrong secret get the same invalid_client answer (no client enumeration)',
  },
})
