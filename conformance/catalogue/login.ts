import { area } from './requirement.ts'

/** LOGIN-* rows of shared/REQUIREMENTS.md. */
export const login = area('Login page', {
  'LOGIN-01': {
    level: 'SHOULD',
    source: 'INTERFACE.md §2.6; OIDC DCR §2 (logo_uri, policy_uri, tos_uri)',
    title:
      "the login page shows the application's name, logo and policy links from its branding record",
  },
  'LOGIN-02': {
    level: 'MUST',
    source: 'RFC 9700 §4.16; RFC 6749 §10.13',
    title: 'the authorize, login, error and logout pages cannot be framed by other sites',
  },
  'LOGIN-03': {
    level: 'MUST',
    source: 'RFC 6749 §10.12; RFC 6265bis (SameSite: what a cross-site post carries)',
    title:
      'the login form is CSRF-protected: no token, a foreign token, a foreign form or a cross-site forged post is refused',
  },
  'LOGIN-04': {
    level: 'MUST',
    source: 'RFC 9700 §4.12',
    title: 'the redirect after the credential POST is 302 or 303, never 307 or 308',
  },
  'LOGIN-05': {
    level: 'SHOULD',
    // unchanged for the page's hardening (issue 30 did not review its other parts); the session
    // cookie's Secure and HttpOnly, OWASP ASVS Level 1, are judged at MUST by SEC-07
    source: 'RFC 9700 §4.2.4; OWASP ASVS 4.0.3 V3.4 (cookie flags: MUST in SEC-07)',
    title:
      'no Referer leakage, no third-party scripts or styles, hardened cookies, and no caching of the page',
  },
  'LOGIN-06': {
    level: 'MUST',
    source: 'RFC 6749 §10.14',
    title: 'reflected input (state, login_hint, ui_locales, username) is escaped',
  },
  'LOGIN-07': {
    level: 'SHOULD',
    source: 'RFC 6749 §10.10; OWASP ASVS V2.2; INTERFACE.md §7 (429)',
    title:
      'a failed login gives one generic answer for unknown user and wrong password, and is throttled',
  },
})
