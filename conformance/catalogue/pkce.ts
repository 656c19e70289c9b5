import { area } from './requirement.ts'

/** PKCE-* rows of shared/REQUIREMENTS.md. */
export const pkce = area('PKCE', {
  'PKCE-01': {
    level: 'MUST',
    source: 'INTERFACE.md §5.2; RFC 7636 §4.4.1; RFC 9700 §2.1.1',
    title: 'an authorization request without code_challenge is refused with invalid_request',
  },
  'PKCE-02': {
    level: 'MUST',
    source: 'INTERFACE.md §4.1; RFC 7636 §4.2, §4.3, §4.4.1',
    title: 'only code_challenge_method=S256 is accepted: plain, omitted, s256 and S512 are refused',
  },
  'PKCE-03': {
    level: 'SHOULD',
    source: 'RFC 7636 §4.2',
    title: 'a code_challenge outside 43*128unreserved (42 characters, + / = or space) is refused',
  },
  'PKCE-04': {
    level: 'MUST',
    source: 'RFC 7636 §4.2, §4.6, App. B',
    title: 'the RFC 7636 Appendix B challenge and verifier redeem a code end to end',
  },
  'PKCE-05': {
    level: 'MUST',
    source: 'INTERFACE.md §4.2; RFC 7636 §4.5, §4.6; RFC 6749 §5.2',
    title:
      'a token request without code_verifier is refused: 400 invalid_grant (or invalid_request, a missing parameter)',
  },
  'PKCE-06': {
    level: 'MUST',
    source: 'RFC 7636 §4.6; RFC 9700 §4.8',
    title: 'a wrong code_verifier, or the challenge sent as the verifier, gets 400 invalid_grant',
  },
  'PKCE-07': {
    level: 'MUST',
    source: 'INTERFACE.md §8; RFC 7636 §4.1',
    title: 'code_verifier length 43-128 and characters [A-Za-z0-9-._~] are enforced',
  },
  'PKCE-08': {
    level: 'SHOULD',
    source: 'RFC 9700 §4.8; RFC 6749 §10.10',
    title: 'failed verifier attempts do not allow unlimited guessing on one code',
  },
})
