import type { login } from '../../catalogue/login.ts'
import { onAuthorize } from './authorize.ts'
import type { Sabotage } from './kit.ts'

/** How to break the target for each LOGIN-* check. */
export const loginSabotage: Record<keyof typeof login, Sabotage> = {
  'LOGIN-01': {
    how: 'the login page is rendered without the branding record',
    faults: ['login-page-unbranded'],
  },
  'LOGIN-02': {
    how: 'the login page has neither CSP frame-ancestors nor X-Frame-Options',
    handlers: onAuthorize({
      headers: (h) =>
        h.filter(([name]) => name !== 'content-security-policy' && name !== 'x-frame-options'),
    }),
  },
  'LOGIN-03': {
    how: 'the credential POST checks neither the anti-CSRF token, the cookie, nor the Origin',
    faults: ['login-csrf-unchecked'],
  },
  'LOGIN-04': {
    how: 'the credential POST is answered with a 307 redirect',
    faults: ['login-redirect-307'],
  },
  'LOGIN-05': {
    how: 'the login page may be cached for ten minutes',
    handlers: onAuthorize({
      headers: (h) => [
        ...h.filter(([name]) => name !== 'cache-control' && name !== 'pragma'),
        ['cache-control', 'public, max-age=600'],
      ],
    }),
  },
  'LOGIN-06': {
    how: 'the username is echoed unescaped after a failed login',
    faults: ['login-reflects-username-raw'],
  },
  'LOGIN-07': {
    how: 'an unknown username gets its own error message',
    faults: ['login-enumerates-users'],
  },
}
