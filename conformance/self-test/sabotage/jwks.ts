import type { jwks } from '../../catalogue/jwks.ts'
import { corruptJson, firstKey, forgeTokens, JWKS, type Sabotages } from './kit.ts'

/** How to break the target for each JWKS-* check. */
export const jwksSabotage: Record<keyof typeof jwks, Sabotages> = {
  'JWKS-01': {
    how: 'empty keys array',
    expect: /^JWKS: expected a non-empty "keys" array/,
    handlers: corruptJson(JWKS, (b) => (b.keys = [])),
  },
  'JWKS-02': {
    how: 'the key published twice under one kid',
    expect: /^duplicate kid /,
    handlers: corruptJson(JWKS, (b) => (b.keys = [firstKey(b), { ...firstKey(b) }])),
  },
  'JWKS-03': {
    how: 'a private exponent published',
    expect: /private member "d" is published/,
    handlers: corruptJson(JWKS, (b) => (b.keys = [{ ...firstKey(b), d: 'AQAB' }])),
  },
  'JWKS-04': {
    how: 'ID tokens are signed with a key whose kid the JWKS does not publish',
    expect: /kid "sabotage-unpublished" matches 0 JWKS keys/,
    handlers: forgeTokens({ id: (jwt) => void (jwt.sign = 'unpublished') }),
  },
}
