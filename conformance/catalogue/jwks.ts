import { area } from './requirement.ts'

/** JWKS-* rows of shared/REQUIREMENTS.md. */
export const jwks = area('JWKS', {
  'JWKS-01': {
    level: 'MUST',
    source: 'RFC 7517 §5, §8.5; INTERFACE.md §4.9',
    title: 'the JWK Set is served as JSON with a non-empty keys array',
  },
  'JWKS-02': {
    level: 'MUST',
    source: 'INTERFACE.md §2.8; RFC 7517 §4; RFC 7518 §6.3.1',
    title: 'every key has kty RSA, use sig, alg RS256, a unique kid, and base64url n and e',
  },
  'JWKS-03': {
    level: 'MUST',
    source: 'RFC 7518 §3.3, §6.3.2; RFC 7517 §8.5',
    title:
      'no private or symmetric key material is published and every modulus has at least 2048 bits',
  },
  'JWKS-04': {
    level: 'MUST',
    source: 'INTERFACE.md §2.3, §5.6; OIDC Core §10.1',
    title:
      'the kid of every ID token and access token resolves to exactly one key that verifies it with RS256',
  },
})
