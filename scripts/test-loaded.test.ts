import { describe, expect, test } from 'vitest'
import { minutes, runLoaded, running } from './test-loaded.ts'

const node = process.execPath

describe('npm run test:loaded', () => {
  test('runs the command beside the busy loops, gives its exit code and wall time, and stops every loop', async () => {
    const run = await runLoaded([node, '-e', 'setTimeout(() => process.exit(3), 300)'], {
      busy: 2,
      maxMs: 60_000,
      quiet: true,
    })
    expect(run.exitCode).toBe(3)
    expect(run.busyPids).toHaveLength(2)
    expect(run.wallMs).toBeGreaterThanOrEqual(300)
    for (const pid of run.busyPids) expect(running(pid)).toBe(false)
  })

  test('a command that runs past the limit is stopped, and so are the loops', async () => {
    const started = performance.now()
    const run = await runLoaded([node, '-e', 'setInterval(() => {}, 1000)'], {
      busy: 1,
      maxMs: 1_000,
      quiet: true,
    })
    expect(run.exitCode).not.toBe(0)
    expect(performance.now() - started).toBeLessThan(15_000)
    for (const pid of run.busyPids) expect(running(pid)).toBe(false)
  })

  test('a command that cannot start exits 127', async () => {
    const run = await runLoaded(['/nonexistent/command'], { busy: 1, maxMs: 60_000, quiet: true })
    expect(run.exitCode).toBe(127)
    for (const pid of run.busyPids) expect(running(pid)).toBe(false)
  })

  test('the wall time reads as m:ss', () => {
    expect(minutes(754_400)).toBe('12:34')
    expect(minutes(59_600)).toBe('1:00')
  })
})
