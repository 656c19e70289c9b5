import type { errors } from '../../catalogue/errors.ts'
import { corruptHeaders, corruptJson, JWKS, type Sabotages } from './kit.ts'

/** How to break the target for each ERR-* check. */
export const errorsSabotage: Record<keyof typeof errors, Sabotages> = {
  'ERR-01': {
    how: '405 without Allow',
    expect: /405 without an Allow header listing GET/,
    handlers: corruptHeaders(JWKS, (h) => h.delete('allow'), 'all'),
  },
  'ERR-02': {
    how: 'an error_description with a double quote',
    expect: /^error_description .* has characters outside RFC 6749 App\. A\.8/,
    handlers: corruptJson(
      '/auth/no-such-endpoint',
      (b) => (b.error_description = 'no "such" endpoint'),
    ),
  },
}
