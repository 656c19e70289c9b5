import { area } from './requirement.ts'

/** RS-* rows: the resource-server side of INTERFACE.md §5.6-5.7, exercised with real tokens. */
export const resourceServer = area('Resource server', {
  'RS-01': {
    level: 'MUST',
    source: 'INTERFACE.md §5.6; RFC 9068 §4; RFC 8725 §3.1',
    title:
      'a resource server verifying as §5.6 says accepts the access token and refuses the ID token and a token for another audience',
  },
  'RS-02': {
    level: 'MUST',
    source: 'INTERFACE.md §5.7; RFC 6750 §3.1',
    title:
      'the roles, org_id, sub and scope claims drive the example API: admin and owner allowed, viewer and other tenants 403, no token 401',
  },
})
