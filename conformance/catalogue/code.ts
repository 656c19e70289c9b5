import { area } from './requirement.ts'

/** CODE-* rows of shared/REQUIREMENTS.md. */
export const code = area('Code grant', {
  'CODE-01': {
    level: 'MUST',
    source: 'INTERFACE.md §2.2, §4.2; RFC 6749 §4.1.3, §4.1.4, §5.1; OIDC Core §3.1.3.3',
    title:
      'a code redeems to access_token, token_type Bearer, expires_in (accessTokenLifetime, default 3600), id_token, scope and refresh_token',
  },
  'CODE-02': {
    level: 'MUST',
    source: 'RFC 6749 §4.1.2, §5.2',
    title: 'a code is single use: a second redemption gets 400 invalid_grant, also 30 s later',
  },
  'CODE-03': {
    level: 'SHOULD',
    source:
      'RFC 6749 §4.1.2 ("If an authorization code is used more than once, the authorization server MUST deny the request and SHOULD revoke (when possible) all tokens previously issued based on that authorization code"), §10.5; RFC 9700 §4.2.4',
    title: 'replaying a code revokes the tokens issued from it',
  },
  'CODE-04': {
    level: 'MUST',
    source: 'RFC 6749 §4.1.2',
    title: 'of 5 concurrent redemptions of one code exactly one succeeds',
  },
  'CODE-05': {
    level: 'MUST',
    source: 'INTERFACE.md §4.2; RFC 6749 §4.1.3; OIDC Core §3.1.3.2',
    title: 'the token request redirect_uri must equal the authorization request one exactly',
  },
  'CODE-06': {
    level: 'MUST',
    source: 'RFC 6749 §4.1.3; OIDC Core §3.1.3.2',
    title: 'a code is bound to its client: another authenticated client gets invalid_grant',
  },
  'CODE-07': {
    level: 'MUST',
    source: 'RFC 6749 §4.1.2',
    title: 'an expired code is refused: a code is no longer accepted 601 s after issue',
  },
  'CODE-08': {
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 6749 §5.2',
    title: 'an unknown or malformed code gets invalid_grant, a missing one invalid_request',
  },
  'CODE-09': {
    level: 'MUST',
    source: 'INTERFACE.md §4.2; RFC 6749 §3.3, §4.1.3',
    title: 'a scope parameter at the token endpoint cannot widen the scope of the code',
  },
  'CODE-10': {
    level: 'MUST',
    source: 'RFC 6749 §10.10',
    title: '20 authorization codes are distinct, at least 16 characters and at least 96 bits each',
  },
  'CODE-11': {
    level: 'MAY',
    source: 'RFC 6749 §4.1.2, §4.1.3',
    title:
      'a token request refused for a wrong redirect_uri leaves the code to its rightful redemption',
  },
})
