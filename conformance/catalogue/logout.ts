import { area } from './requirement.ts'

/** LOGOUT-* rows of shared/REQUIREMENTS.md. */
export const logout = area('Logout', {
  'LOGOUT-01': {
    level: 'MUST',
    source: 'INTERFACE.md §4.6; RP-Initiated Logout §2, §3',
    title:
      'a valid id_token_hint and registered URI redirect to exactly the URI with state, and the session ends',
  },
  'LOGOUT-02': {
    level: 'MUST',
    source: 'INTERFACE.md §4.6; RP-Initiated Logout §3 (exact match)',
    title:
      'an unregistered or altered post_logout_redirect_uri, or one of another client, is never redirected to',
  },
  'LOGOUT-03': {
    level: 'MUST',
    source: 'RP-Initiated Logout §3; ARCHITECTURE.md C6',
    title: 'without an id_token_hint the post_logout_redirect_uri is not redirected to at once',
  },
  'LOGOUT-04': {
    level: 'MUST',
    source: 'RP-Initiated Logout §2, §4',
    title:
      'a tampered, foreign-signed or alg none id_token_hint, or a client_id other than its aud, gets no redirect',
  },
  'LOGOUT-05': {
    level: 'MUST',
    source: 'RP-Initiated Logout §2, §3',
    title:
      'without state, without a URI, with only state or with no parameters the user is logged out',
  },
  'LOGOUT-06': {
    level: 'MUST',
    source: 'RP-Initiated Logout §2 (GET and POST)',
    title: 'a form POST from the client behaves as the GET: redirect with state, session ended',
  },
  'LOGOUT-07': {
    level: 'SHOULD',
    source: 'RP-Initiated Logout §6',
    title:
      'a logout request without a valid hint asks the user first; the session lives until confirmed',
  },
})
