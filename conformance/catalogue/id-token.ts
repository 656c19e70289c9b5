import { area } from './requirement.ts'

/** IDT-* rows of shared/REQUIREMENTS.md. */
export const idToken = area('ID token', {
  'IDT-01': {
    level: 'MUST',
    source: 'INTERFACE.md §2.2; OIDC Core §3.1.3.3',
    title: 'an ID token is issued exactly when openid is granted, never by client_credentials',
  },
  'IDT-02': {
    level: 'MUST',
    source: 'INTERFACE.md §1; OIDC Core §3.1.3.7, §10.1, §15.1',
    title: 'the ID token is signed with RS256 under a kid the JWKS resolves',
  },
  'IDT-03': {
    level: 'MUST',
    source: 'OIDC Core §2, §3.1.3.7',
    title: 'iss is the issuer, aud holds the client_id, and azp is the client_id when present',
  },
  'IDT-04': {
    level: 'MUST',
    source: 'OIDC Core §2, §8; INTERFACE.md §1 (subject type public)',
    title:
      'sub is at most 255 ASCII characters, stable across logins and clients, distinct per user',
  },
  'IDT-05': {
    level: 'MUST',
    source: 'OIDC Core §2, §3.1.3.7',
    title: 'exp is in the future in seconds, and iat is within 5 minutes of now',
  },
  'IDT-06': {
    level: 'MUST',
    source: 'OIDC Core §2, §3.1.3.7',
    title: 'nonce equals the request nonce when one was sent and is absent otherwise',
  },
  'IDT-07': {
    level: 'MUST',
    source: 'OIDC Core §2, §3.1.2.1',
    title:
      'auth_time is present with max_age, plausible, later after re-authentication, unchanged by prompt=none',
  },
  'IDT-08': {
    level: 'MUST',
    source: 'OIDC Core §2, §3.1.3.6, §3.3.2.11',
    title: 'at_hash, c_hash, acr and amr are correct when present',
  },
  'IDT-09': {
    level: 'SHOULD',
    source: 'OIDC Core §5.4; INTERFACE.md §2.4; ARCHITECTURE.md (C8)',
    title:
      'user claims in the ID token never exceed the granted scopes (their presence is noted, C8)',
  },
})
