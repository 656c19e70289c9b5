import { scrypt as scryptCallback } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { verifySync } from '@node-rs/argon2'
import { describe, expect, test } from 'vitest'
import { createHasherThreads, HASHING_NICE } from './hasher-threads.ts'

const params = { N: 1024, r: 8, p: 1, maxmem: 32 * 1024 * 1024 }

const libuvScrypt = (password: string, salt: Uint8Array, keylen: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    scryptCallback(password, salt, keylen, params, (err, key) => {
      if (err) reject(err)
      else resolve(key)
    })
  })

/** This process's threads and their nice values (Linux /proc; field 19 of a task's stat). */
function threadNiceValues(): Map<string, number> {
  return new Map(
    readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      return [tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])] as const
    }),
  )
}

describe('hashing threads', () => {
  test('give the same key as node:crypto scrypt, for concurrent tasks beyond the pool size', async () => {
    const threads = createHasherThreads(2)
    try {
      const salts = Array.from({ length: 5 }, (_, i) => new Uint8Array(16).fill(i))
      const keys = await Promise.all(salts.map((s) => threads.scrypt('pässword', s, 32, params)))
      const expected = await Promise.all(salts.map((s) => libuvScrypt('pässword', s, 32)))
      expect(keys.map((k) => k.toString('hex'))).toEqual(expected.map((k) => k.toString('hex')))
      expect(new Set(keys.map((k) => k.toString('hex'))).size).toBe(5)
    } finally {
      await threads.close()
    }
  })

  test('a bad parameter rejects its task and the pool keeps working', async () => {
    const threads = createHasherThreads(1)
    try {
      await expect(
        threads.scrypt('pw', new Uint8Array(16), 32, { ...params, N: 3 }),
      ).rejects.toThrow()
      const key = await threads.scrypt('pw', new Uint8Array(16), 32, params)
      expect(key.equals(await libuvScrypt('pw', new Uint8Array(16), 32))).toBe(true)
    } finally {
      await threads.close()
    }
  })

  test("hash and verify Argon2id as the library's own functions do, for concurrent tasks beyond the pool size", async () => {
    const threads = createHasherThreads(2)
    const options = { memoryCost: 64, timeCost: 1, parallelism: 1, outputLen: 32 }
    try {
      const hashes = await Promise.all(
        Array.from({ length: 5 }, () => threads.argon2id('pässword', options)),
      )
      for (const hash of hashes) {
        expect(hash).toMatch(
          /^\$argon2id\$v=19\$m=64,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
        )
        // the library, run here on the test's thread, agrees with what the threads made
        expect(verifySync(hash, 'pässword')).toBe(true)
        expect(verifySync(hash, 'password')).toBe(false)
      }
      // a fresh salt for each
      expect(new Set(hashes).size).toBe(5)
      const verdicts = await Promise.all(
        hashes.flatMap((h) => [
          threads.argon2idVerify(h, 'pässword'),
          threads.argon2idVerify(h, 'password'),
        ]),
      )
      expect(verdicts).toEqual(hashes.flatMap(() => [true, false]))
    } finally {
      await threads.close()
    }
  })

  test('a bad Argon2id parameter or string rejects its task and the pool keeps working', async () => {
    const threads = createHasherThreads(1)
    const options = { memoryCost: 64, timeCost: 1, parallelism: 1, outputLen: 32 }
    try {
      // under 8 KiB per lane
      await expect(threads.argon2id('pw', { ...options, memoryCost: 1 })).rejects.toThrow()
      await expect(threads.argon2idVerify('$argon2id$nonsense', 'pw')).rejects.toThrow()
      const hash = await threads.argon2id('pw', options)
      expect(await threads.argon2idVerify(hash, 'pw')).toBe(true)
    } finally {
      await threads.close()
    }
  })

  test.runIf(process.platform === 'linux')(
    'run at a lower priority than the server thread on Linux',
    async () => {
      const before = threadNiceValues()
      const main = before.get(String(process.pid))
      expect(main).toBeLessThan(HASHING_NICE)
      const threads = createHasherThreads(1)
      try {
        await threads.scrypt('pw', new Uint8Array(16), 32, params)
        // the library's Argon2id runs on that thread: no other thread at its nice value appears
        await threads.argon2id('pw', { memoryCost: 64, timeCost: 1, parallelism: 1, outputLen: 32 })
        const after = threadNiceValues()
        // the one thread this pool started (other threads of the test process may come and go)
        const started = [...after].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice)
        expect(started.filter((n) => n === HASHING_NICE)).toHaveLength(1)
        // the process's own thread, the event loop, keeps its priority
        expect(after.get(String(process.pid))).toBe(main)
      } finally {
        await threads.close()
      }
    },
  )
})
