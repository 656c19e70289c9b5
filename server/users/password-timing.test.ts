import { describe, expect, test, vi } from 'vitest'
import { hasherThreads } from './hasher-threads.ts'
import {
  dummyHash,
  hashPassword,
  TEST_SCRYPT,
  verificationWeight,
  verifyPasswordAtCost,
} from './passwords.ts'

// record every scrypt the module runs (the real one still runs): the work a verification does
// is what an attacker times, so it is asserted as work, never as a duration
const scrypt = vi.spyOn(hasherThreads, 'scrypt')

const costs = (): number[] => scrypt.mock.calls.map((call) => call[3].N)

describe('a failed sign-in costs the current parameters whatever the stored hash', () => {
  const current = TEST_SCRYPT
  const outdated = { N: 1024, r: 8, p: 1 }

  test('an unknown user (the dummy hash) and a current hash each cost one hash at the current N', async () => {
    const stored = await hashPassword('pw', current)
    scrypt.mockClear()
    expect(await verifyPasswordAtCost('wrong', dummyHash(current), current)).toBe(false)
    expect(await verifyPasswordAtCost('wrong', stored, current)).toBe(false)
    expect(costs()).toEqual([current.N, current.N])
    expect(verificationWeight(stored, current)).toBe(1)
  })

  test('a hash made before a change of SCRYPT_N is verified beside a hash at the current N', async () => {
    const stored = await hashPassword('pw', outdated)
    scrypt.mockClear()
    expect(await verifyPasswordAtCost('wrong', stored, current)).toBe(false)
    expect(costs().sort((a, b) => a - b)).toEqual([outdated.N, current.N])
    // and the right password still verifies against the old hash (rehashed at sign-in)
    expect(await verifyPasswordAtCost('pw', stored, current)).toBe(true)
    expect(verificationWeight(stored, current)).toBe(2)
  })

  test('a stored value that is not a hash this module reads still costs a hash at the current N', async () => {
    scrypt.mockClear()
    expect(await verifyPasswordAtCost('pw', 'bcrypt$2b$10$whatever', current)).toBe(false)
    expect(costs()).toEqual([current.N])
  })
})
