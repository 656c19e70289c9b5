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

  test.runIf(process.platform === 'linux')(
    'run at a lower priority than the server thread on Linux',
    async () => {
      const before = threadNiceValues()
      const main = before.get(String(process.pid))
      expect(main).toBeLessThan(HASHING_NICE)
      const threads = createHasherThreads(1)
      try {
        await threads.scrypt('pw', new Uint8Array(16), 32, params)
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
