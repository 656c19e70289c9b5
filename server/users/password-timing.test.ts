import { describe, expect, test, vi } from 'vitest'
import { authorizeQuery, postLoginForm, testApp } from '../test-helpers.ts'
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
const realScrypt = hasherThreads.scrypt.bind(hasherThreads)
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

describe('through the login form', () => {
  test('a wrong password for a user with an outdated hash costs what one for an unknown name costs: a hash at the current N, the old one beside it', async () => {
    const app = await testApp()
    try {
      const current = app.deps.config.scrypt
      const alice = await app.deps.store.users.byUsername('alice')
      if (!alice) throw new Error('the fixtures have no alice')
      const outdated = await hashPassword('wonderland', { N: 1024, r: 8, p: 1 })
      expect(
        await app.deps.store.users.replacePasswordHash(alice.id, alice.passwordHash, outdated),
      ).toBe(true)

      // each scrypt call's start and end, in the order they happen (never how long they take)
      const events: string[] = []
      scrypt.mockImplementation(async (password, salt, keylen, options) => {
        events.push(`start ${String(options.N)}`)
        try {
          return await realScrypt(password, salt, keylen, options)
        } finally {
          events.push(`end ${String(options.N)}`)
        }
      })
      const attempt = async (username: string): Promise<string[]> => {
        events.length = 0
        await postLoginForm(app, authorizeQuery(), { username, password: 'not-the-password' })
        return [...events]
      }
      try {
        const unknown = await attempt('nobody-by-this-name')
        const known = await attempt('alice')
        expect(unknown).toEqual([`start ${String(current.N)}`, `end ${String(current.N)}`])
        // the same hash at the current N, with the outdated one run side by side: both start
        // before either ends, so the answer waits for the slower, as for an unknown name
        expect(known.slice(0, 2).sort()).toEqual(
          [`start ${String(current.N)}`, 'start 1024'].sort(),
        )
        expect(known.slice(2).sort()).toEqual([`end ${String(current.N)}`, 'end 1024'].sort())
      } finally {
        scrypt.mockImplementation(realScrypt)
      }
    } finally {
      await app.stop()
    }
  })
})
