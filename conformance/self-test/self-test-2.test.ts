import { describe, expect, test } from 'vitest'
import { proveSabotages } from './prove.ts'
import {
  extendAll,
  firstUnknownUserStalled,
  knownUserAnsweredLate,
  unknownUserRefusedBeforeHashing,
} from './sabotage/kit.ts'

// the other half of the sabotages (self-test.test.ts has the first), in a process of its own;
// the judge's tests that take longest run here too, so that the two halves end together
const withSabotage = proveSabotages(2, 2)

// A loaded machine stalls a request now and then: one stalled answer of the faster side must not
// hide a real timing gap (it blurs the 4-times rule of the first samples; more samples decide).
describe('self-test: one stalled sample does not hide a timing gap', () => {
  test("LOGIN-07 against a known user answered 4 s late, the first unknown user's answer stalled 2.5 s, warns after more samples", async () => {
    const result = await withSabotage('LOGIN-07', {
      verifyPassword: unknownUserRefusedBeforeHashing,
      extend: extendAll(knownUserAnsweredLate(4000), firstUnknownUserStalled(2500)),
    })
    expect(result.verdict, result.message).toBe('warn')
    expect(result.message).toMatch(/^timing: it tells an unknown user from a wrong password/)
    expect(result.notes.join('\n')).toMatch(/3 more of each kind taken/)
  })
})
