import { describe, expect, test, vi } from 'vitest'
import { passwordHashing } from '../config.ts'
import { authorizeQuery, postLoginForm, testApp } from '../test-helpers.ts'
import { hasherThreads } from './hasher-threads.ts'
import {
  dummyHash,
  hashCostPrefix,
  hashPassword,
  paddingCosts,
  verificationWeight,
  verifyPasswordAtCost,
  type PasswordHashing,
} from './passwords.ts'

// record every hash the module runs (the real one still runs): the work a verification does is
// what an attacker times, so it is asserted as work, never as a duration
const realScrypt = hasherThreads.scrypt.bind(hasherThreads)
const realArgon2idVerify = hasherThreads.argon2idVerify.bind(hasherThreads)
const scrypt = vi.spyOn(hasherThreads, 'scrypt')
const argon2idVerify = vi.spyOn(hasherThreads, 'argon2idVerify')

/** What one hash costs, as a label: its algorithm and parameters. */
const scryptCost = (N: number): string => `scrypt N=${String(N)}`
const argon2idCost = (stored: string): string =>
  `argon2id ${/^\$argon2id\$v=19\$([^$]+)\$/.exec(stored)?.[1] ?? '?'}`
const costOf = (hashing: PasswordHashing): string =>
  hashing.algorithm === 'scrypt' ? scryptCost(hashing.N) : argon2idCost(dummyHash(hashing))

/** The costs of the hashes run since the spies were last cleared, in no particular order. */
const costs = (): string[] =>
  [
    ...scrypt.mock.calls.map((call) => scryptCost(call[3].N)),
    ...argon2idVerify.mock.calls.map((call) => argon2idCost(call[0])),
  ].sort()
const clear = () => {
  scrypt.mockClear()
  argon2idVerify.mockClear()
}

describe('a failed sign-in costs the current algorithm and cost whatever the stored hash', () => {
  const current: PasswordHashing = {
    algorithm: 'argon2id',
    memory: 19456,
    time: 2,
    parallelism: 1,
  }
  const outdatedScrypt: PasswordHashing = { algorithm: 'scrypt', N: 1024, r: 8, p: 1 }
  const outdatedArgon2id: PasswordHashing = { ...current, memory: 1024, time: 1 }

  test('an unknown user (the dummy hash) and a current hash each cost one hash at the current cost', async () => {
    const stored = await hashPassword('pw', current)
    clear()
    expect(await verifyPasswordAtCost('wrong', dummyHash(current), current)).toBe(false)
    expect(await verifyPasswordAtCost('wrong', stored, current)).toBe(false)
    expect(costs()).toEqual([costOf(current), costOf(current)])
    expect(verificationWeight(stored, current)).toBe(1)
  })

  test('a scrypt hash stored before Argon2id was the default is verified beside an Argon2id hash at the current cost', async () => {
    const stored = await hashPassword('pw', outdatedScrypt)
    clear()
    expect(await verifyPasswordAtCost('wrong', stored, current)).toBe(false)
    expect(costs()).toEqual([costOf(current), scryptCost(1024)])
    // and the right password still verifies against the old hash (rehashed at sign-in)
    expect(await verifyPasswordAtCost('pw', stored, current)).toBe(true)
    expect(verificationWeight(stored, current)).toBe(2)
  })

  test('an Argon2id hash made at a lower cost is verified beside one at the current cost', async () => {
    const stored = await hashPassword('pw', outdatedArgon2id)
    clear()
    expect(await verifyPasswordAtCost('wrong', stored, current)).toBe(false)
    expect(costs()).toEqual([costOf(outdatedArgon2id), costOf(current)].sort())
    expect(await verifyPasswordAtCost('pw', stored, current)).toBe(true)
    expect(verificationWeight(stored, current)).toBe(2)
  })

  test('with PASSWORD_HASH=scrypt, an Argon2id hash is verified beside a scrypt hash at the current N', async () => {
    const scryptNow: PasswordHashing = { algorithm: 'scrypt', N: 2 ** 14, r: 8, p: 1 }
    const stored = await hashPassword('pw', outdatedArgon2id)
    clear()
    expect(await verifyPasswordAtCost('wrong', stored, scryptNow)).toBe(false)
    expect(costs()).toEqual([costOf(outdatedArgon2id), scryptCost(2 ** 14)])
    expect(verificationWeight(stored, scryptNow)).toBe(2)
  })

  test('with a costlier hash still stored, every verification runs it too: an unknown name, a current hash and the old hash run the same hashes', async () => {
    const costlier: PasswordHashing = { algorithm: 'scrypt', N: 2 ** 12, r: 8, p: 1 }
    const old = await hashPassword('pw', costlier)
    const now = await hashPassword('pw', current)
    const padded = paddingCosts(current, [hashCostPrefix(old), hashCostPrefix(now), 'bcrypt$2b'])
    expect(padded).toEqual([current, costlier])
    const expected = [costOf(current), scryptCost(2 ** 12)].sort()
    for (const stored of [dummyHash(current), now, old, 'not a hash']) {
      clear()
      expect(await verifyPasswordAtCost('wrong', stored, current, padded)).toBe(false)
      expect(costs(), stored).toEqual(expected)
      expect(verificationWeight(stored, current, padded)).toBe(stored === 'not a hash' ? 3 : 2)
    }
    // the right password still verifies against either hash
    expect(await verifyPasswordAtCost('pw', old, current, padded)).toBe(true)
    expect(await verifyPasswordAtCost('pw', now, current, padded)).toBe(true)
  })

  test('a stored value that is not a hash this module reads still costs a hash at the current cost', async () => {
    clear()
    expect(await verifyPasswordAtCost('pw', 'bcrypt$2b$10$whatever', current)).toBe(false)
    expect(
      await verifyPasswordAtCost('pw', '$argon2id$v=19$m=4194304,t=2,p=1$AAAA$AAAA', current),
    ).toBe(false)
    expect(costs()).toEqual([costOf(current), costOf(current)])
  })
})

describe('through the login form', () => {
  test('a wrong password for a user with a scrypt hash from before Argon2id costs what one for an unknown name costs: a hash at the current cost, the old one beside it', async () => {
    const app = await testApp()
    try {
      const current = passwordHashing(app.deps.config)
      expect(current.algorithm).toBe('argon2id')
      const alice = await app.deps.store.users.byUsername('alice')
      if (!alice) throw new Error('the fixtures have no alice')
      // a scrypt hash written after the server started (the costs it pads to were read at
      // start): still padded to the current cost. One stored at start is padded to by every
      // sign-in (the next test)
      const outdated = await hashPassword('wonderland', {
        algorithm: 'scrypt',
        N: 1024,
        r: 8,
        p: 1,
      })
      expect(
        await app.deps.store.users.replacePasswordHash(alice.id, alice.passwordHash, outdated),
      ).toBe(true)

      // each hash's start and end, in the order they happen (never how long they take)
      const events: string[] = []
      const watch = async <T>(cost: string, run: () => Promise<T>): Promise<T> => {
        events.push(`start ${cost}`)
        try {
          return await run()
        } finally {
          events.push(`end ${cost}`)
        }
      }
      scrypt.mockImplementation((password, salt, keylen, options) =>
        watch(scryptCost(options.N), () => realScrypt(password, salt, keylen, options)),
      )
      argon2idVerify.mockImplementation((stored, password) =>
        watch(argon2idCost(stored), () => realArgon2idVerify(stored, password)),
      )
      const attempt = async (username: string): Promise<string[]> => {
        events.length = 0
        await postLoginForm(app, authorizeQuery(), { username, password: 'not-the-password' })
        return [...events]
      }
      try {
        const now = costOf(current)
        const unknown = await attempt('nobody-by-this-name')
        const known = await attempt('alice')
        expect(unknown).toEqual([`start ${now}`, `end ${now}`])
        // the same hash at the current cost, with the outdated one run side by side: both
        // start before either ends, so the answer waits for the slower, as for an unknown name
        expect(known.slice(0, 2).sort()).toEqual([`start ${now}`, `start ${scryptCost(1024)}`])
        expect(known.slice(2).sort()).toEqual([`end ${now}`, `end ${scryptCost(1024)}`])
      } finally {
        scrypt.mockImplementation(realScrypt)
        argon2idVerify.mockImplementation(realArgon2idVerify)
      }
    } finally {
      await app.stop()
    }
  })

  test('with a scrypt hash stored when the server started, an unknown name, that user and a user with a current hash all run the same hashes', async () => {
    const scryptThen: PasswordHashing = { algorithm: 'scrypt', N: 2 ** 12, r: 8, p: 1 }
    const first = await testApp()
    try {
      const alice = await first.deps.store.users.byUsername('alice')
      if (!alice) throw new Error('the fixtures have no alice')
      // not her fixture password, so the start's fixture rehash leaves it: a user who has not
      // signed in since the default became Argon2id
      const old = await hashPassword('changed-since', scryptThen)
      expect(
        await first.deps.store.users.replacePasswordHash(alice.id, alice.passwordHash, old),
      ).toBe(true)
      const app = await testApp({}, { store: first.deps.store })
      try {
        const current = passwordHashing(app.deps.config)
        expect(app.deps.passwordCosts).toEqual([current, scryptThen])
        const expected = [costOf(current), scryptCost(2 ** 12)].sort()
        for (const username of ['nobody-by-this-name', 'alice', 'bob']) {
          clear()
          await postLoginForm(app, authorizeQuery(), { username, password: 'not-the-password' })
          expect(costs(), username).toEqual(expected)
        }
      } finally {
        await app.stop()
      }
    } finally {
      await first.stop()
    }
  })
})
