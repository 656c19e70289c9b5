import { area } from './requirement.ts'

/** RATE-* rows of shared/REQUIREMENTS.md. */
export const rateLimit = area('Rate limiting', {
  'RATE-01': {
    level: 'MUST',
    source: 'INTERFACE.md §7, §8; RFC 6585 §4',
    title:
      'past the limit the token endpoint and the login form answer 429 with the X-RateLimit headers',
  },
  'RATE-02': {
    level: 'MUST',
    source: 'INTERFACE.md §8 (Reset in Unix seconds)',
    title:
      'the headers are integers, Remaining drops by one, Reset is a future Unix time that lifts the limit; a 429 carries no token',
  },
  'RATE-03': {
    level: 'MUST',
    source: 'RFC 6749 §2.3.1, §10.10',
    title:
      'token, introspection, revocation and the login form are limited per client or user, not for everyone',
  },
  'RATE-04': {
    level: 'MUST',
    source: 'INTERFACE.md §8 (headers sent on responses)',
    title: 'X-RateLimit-Limit, -Remaining and -Reset are on the 200 responses of the API endpoints',
  },
  'RATE-05': {
    level: 'MUST',
    source:
      'INTERFACE.md §8 ("Rate limiting: Applies to API endpoints; HTTP 429 when exceeded"), §7 ("When a rate limit is exceeded, the response is HTTP 429 Too Many Requests")',
    title:
      'past its advertised X-RateLimit-Limit every other API endpoint (user-info, discovery, JWKS, branding, introspection, revocation) answers 429',
  },
})
