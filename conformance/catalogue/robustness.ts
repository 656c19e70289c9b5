import { area } from './requirement.ts'

/** ROBUST-* rows: generated (property-based) inputs; not in shared/REQUIREMENTS.md's table. */
export const robustness = area('Robustness', {
  'ROBUST-01': {
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 6749 §5.2; RFC 6750 §3.1',
    title:
      'generated malformed requests to token, introspection, revocation, user-info and branding get no 5xx, a JSON body and a registered error code with its status',
  },
  'ROBUST-02': {
    level: 'MUST',
    source:
      'RFC 9068 §4; RFC 8725 §3.1; RFC 7515 §7.1, §5.2; RFC 7519 §7.2; RFC 7662 §2.2; RFC 6750 §3.1',
    title:
      'generated mutations of a real access token are refused by user-info (401) and introspection ({"active":false})',
  },
  'ROBUST-03': {
    level: 'MUST',
    source:
      'RFC 6749 §4.1.2.1, §3.1.2.4; OIDC Core §3.1.2.1 (GET and POST); OIDC RP-Initiated Logout §2, §3; RFC 9110 §15.6; INTERFACE.md §4.1, §4.6, §7',
    title:
      'generated malformed requests to authorize, the login post (with and without a real interaction) and logout get no 5xx, an HTML page or the JSON error shape, and no redirect but to the IdP or a verified client URI (with an error for authorize)',
  },
})
