import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { testApp } from '../test-helpers.ts'

// One server process per SQLite file (it keeps the rate-limit counters in memory): a second
// is refused with the way out, and a lock left by a killed process does not block a restart.
describe('SQLite file lock', () => {
  const fileIn = () => join(mkdtempSync(join(tmpdir(), 'sqlite-lock-')), 'idp.sqlite')

  test('a second server on the same file is refused until the first stops', async () => {
    const file = fileIn()
    const first = await testApp({ databaseUrl: `sqlite:${file}` })
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(String(process.pid))
    await expect(testApp({ databaseUrl: `sqlite:${file}` })).rejects.toThrow(
      /already served by process \d+ \(this one\).*DATABASE_URL=postgres/,
    )
    await first.stop()
    expect(existsSync(`${file}.lock`)).toBe(false)
    const second = await testApp({ databaseUrl: `sqlite:${file}` })
    await second.stop()
  })

  test('a lock held by another live process refuses; once it dies, the lock is taken over', async () => {
    const file = fileIn()
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'])
    await once(other, 'spawn')
    const pid = other.pid ?? 0
    writeFileSync(`${file}.lock`, String(pid))
    try {
      await expect(testApp({ databaseUrl: `sqlite:${file}` })).rejects.toThrow(
        new RegExp(`already served by process ${pid}:`),
      )
    } finally {
      other.kill('SIGKILL')
      await once(other, 'exit')
    }
    const app = await testApp({ databaseUrl: `sqlite:${file}` })
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(String(process.pid))
    await app.stop()
  })

  test('in-memory databases take no lock', async () => {
    // each in-memory database is its own: two servers of this process run side by side and
    // both answer, where two on one file are refused (above), and no lock file appears
    const a = await testApp()
    const b = await testApp()
    try {
      for (const app of [a, b]) {
        const res = await app.server.inject('/.well-known/openid-configuration')
        expect(res.statusCode).toBe(200)
      }
      expect(existsSync(':memory:.lock')).toBe(false)
      expect(readdirSync('.').filter((f) => f.endsWith('.lock') && f.includes('memory'))).toEqual(
        [],
      )
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  })
})
