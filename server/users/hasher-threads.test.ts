import { scrypt as scryptCallback } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
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

/** The nice values of this process's threads (Linux /proc; field 19 of a task's stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
  })
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

  test.runIf(process.platform === 'linux')(
    'run at a lower priority than the server thread on Linux',
    async () => {
      const before = threadNiceValues()
      expect(before.every((n) => n < HASHING_NICE)).toBe(true)
      const threads = createHasherThreads(1)
      try {
        await threads.scrypt('pw', new Uint8Array(16), 32, params)
        const after = threadNiceValues()
        expect(after.filter((n) => n === HASHING_NICE)).toHaveLength(1)
        // the process's own priority (its main thread) is untouched
        const main = readFileSync('/proc/self/stat', 'utf8')
        expect(Number(main.slice(main.lastIndexOf(')') + 2).split(' ')[16])).toBe(before[0])
      } finally {
        await threads.close()
      }
    },
  )
})
