import type { login } from '../../catalogue/login.ts'
import { onAuthorize, type Sabotages } from './kit.ts'

/** How to break the target for each LOGIN-* check. */
export const loginSabotage: Record<keyof typeof login, Sabotages> = {
  'LOGIN-01': {
    how: 'the login page is rendered without the branding record',
    expect: /^the login page does not show the application name/,
    faults: ['login-page-unbranded'],
  },
  'LOGIN-02': {
    how: 'the login page has neither CSP frame-ancestors nor X-Frame-Options',
    expect: /neither Content-Security-Policy frame-ancestors nor X-Frame-Options/,
    handlers: onAuthorize({
      headers: (h) =>
        h.filter(([name]) => name !== 'content-security-policy' && name !== 'x-frame-options'),
    }),
  },
  'LOGIN-03': {
    how: 'the credential POST checks neither the anti-CSRF token, the cookie, nor the Origin',
    expect: /^credentials without the anti-CSRF field: the sign-in went through/,
    faults: ['login-csrf-unchecked'],
  },
  'LOGIN-04': {
    how: 'the credential POST is answered with a 307 redirect',
    expect: /^the credential POST was answered with HTTP 307; expected 302 or 303/,
    faults: ['login-redirect-307'],
  },
  'LOGIN-05': {
    how: 'the login page may be cached for ten minutes',
    expect: /^login page: Cache-Control .* lacks no-store/,
    handlers: onAuthorize({
      headers: (h) => [
        ...h.filter(([name]) => name !== 'cache-control' && name !== 'pragma'),
        ['cache-control', 'public, max-age=600'],
      ],
    }),
  },
  'LOGIN-06': {
    how: 'the username is echoed unescaped after a failed login',
    expect: /^page after a failed login: the payload became markup/,
    faults: ['login-reflects-username-raw'],
  },
  // one sabotage per part: the status, the page, the timing and the throttle
  'LOGIN-07': [
    {
      how: 'an unknown username gets an HTTP status of its own (400, a wrong password 401)',
      expect: /^wrong password → HTTP 401, unknown user → HTTP 400/,
      faults: ['login-enumerates-users-by-status'],
    },
    {
      how: 'an unknown username gets its own error message',
      expect: /^wrong password and unknown user get different pages/,
      faults: ['login-enumerates-users'],
    },
    {
      how: 'a wrong password of a known user is answered 4 s later than an unknown user (refused before any hashing)',
      expect: /^timing tells an unknown user from a wrong password/,
      faults: ['login-enumerates-users-by-timing'],
    },
    {
      how: 'failed sign-ins are never throttled',
      expect: /^5 failed logins in a row were never throttled \(no HTTP 429\)/,
      faults: ['login-unthrottled'],
    },
  ],
}
