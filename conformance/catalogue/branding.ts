import { area } from './requirement.ts'

/** BRAND-* rows of shared/REQUIREMENTS.md. */
export const branding = area('Branding', {
  'BRAND-01': {
    level: 'MUST',
    source: 'INTERFACE.md §2.6, §4.7',
    title: 'the branding record is served as JSON holding exactly the five fields, all strings',
  },
  'BRAND-02': {
    level: 'MUST',
    source: 'INTERFACE.md §2.6 (colour); OIDC Dynamic Client Registration §2 (URLs, SHOULD)',
    title: 'brand_color is #RRGGBB; the three URLs are absolute https',
  },
  'BRAND-03': {
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 6749 §5.2 (error shape)',
    title:
      'a missing client_id is 400 invalid_request and an unknown one a 4xx, in the JSON error shape',
  },
  'BRAND-04': {
    level: 'MUST',
    source: 'hardening (public endpoint, INTERFACE.md §4.7)',
    title:
      'the record holds no secret, redirect URI or internal identifier, and caching keeps clients apart',
  },
})
