import { area } from './requirement.ts'

/** CC-* rows of shared/REQUIREMENTS.md. */
export const clientCredentials = area('Client credentials', {
  'CC-01': {
    level: 'MUST',
    source: 'INTERFACE.md §4.2; RFC 6749 §4.4.2, §4.4.3, §5.1',
    title:
      'client_credentials with the configured scope (or none) returns a Bearer token for exactly that scope',
  },
  'CC-02': {
    level: 'MUST',
    source: 'INTERFACE.md §2.2, §4.2; RFC 6749 §4.4.3 (SHOULD NOT refresh_token)',
    title: 'the client_credentials response has no refresh_token and no id_token',
  },
  'CC-03': {
    level: 'MUST',
    source:
      'INTERFACE.md §2.1, §7; RFC 6749 §3.3, §4.4, §5.2; OIDC Core §11 (offline_access ignored outside the code flow)',
    title:
      'user scopes, unknown scopes and scopes the client may not have are never granted to a client',
  },
  'CC-04': {
    level: 'SHOULD',
    source: 'RFC 9068 §2.2, §5; INTERFACE.md §2.3',
    title: 'the client_credentials access token describes the client: sub and aud are its id',
  },
  'CC-05': {
    level: 'MUST',
    source: 'INTERFACE.md §2.5; RFC 7662 §2.2',
    title: 'a client_credentials token introspects active with the client as client_id and sub',
  },
})
