import type { jwks } from '../../catalogue/jwks.ts'
import { corruptJson, firstKey, JWKS, type Sabotage } from './kit.ts'

/** How to break the target for each JWKS-* check. */
export const jwksSabotage: Record<keyof typeof jwks, Sabotage> = {
  'JWKS-01': { how: 'empty keys array', handlers: corruptJson(JWKS, (b) => (b.keys = [])) },
  'JWKS-02': {
    how: 'the key published twice under one kid',
    handlers: corruptJson(JWKS, (b) => (b.keys = [firstKey(b), { ...firstKey(b) }])),
  },
  'JWKS-03': {
    how: 'a private exponent published',
    handlers: corruptJson(JWKS, (b) => (b.keys = [{ ...firstKey(b), d: 'AQAB' }])),
  },
}
