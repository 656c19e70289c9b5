import type { errors } from '../../catalogue/errors.ts'
import { corruptHeaders, corruptJson, JWKS, type Sabotage } from './kit.ts'

/** How to break the target for each ERR-* check. */
export const errorsSabotage: Record<keyof typeof errors, Sabotage> = {
  'ERR-01': {
    how: '405 without Allow',
    handlers: corruptHeaders(JWKS, (h) => h.delete('allow'), 'all'),
  },
  'ERR-02': {
    how: 'an error_description with a double quote',
    handlers: corruptJson(
      '/auth/no-such-endpoint',
      (b) => (b.error_description = 'no "such" endpoint'),
    ),
  },
}
