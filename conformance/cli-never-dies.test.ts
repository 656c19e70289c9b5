import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, test } from 'vitest'
import { selectChecks } from './cli.ts'
import type { RunReport } from './report/json.ts'
import { chromiumUnder } from './test-support.ts'

// Issue #29, done-when: the suite never exits without writing its reports. The CLI runs in its
// own process, as CI runs it; from outside its code, a module loaded before it (node --import)
// lets errors escape every await: a rejection nobody awaited while the embedded server starts,
// and once the first verdict is printed another one and an exception thrown from a timer. The
// test kills the run's Chromium once a check that drives it has reported. The run must end by
// itself with its result and every report, each check with a verdict of its own.

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const ONLY = 'DISC-01,LOGIN,AUTHZ'

/** The module loaded before the CLI: it injects the errors, keyed to the CLI's own output. */
const INJECT = `
const write = process.stdout.write.bind(process.stdout)
let started = false
let checking = false
process.stdout.write = (chunk, ...rest) => {
  const text = String(chunk)
  // the first line is written once the run guards itself, before the server starts
  if (!started && /starting the embedded reference server/.test(text)) {
    started = true
    setTimeout(() => {
      Promise.reject(new Error('injected: a rejection nobody awaited, at start-up'))
    }, 0)
  }
  if (!checking && /^(PASS|FAIL|ERROR|WARN|INFO|SKIP) /m.test(text)) {
    checking = true
    setTimeout(() => {
      Promise.reject(new Error('injected: a rejection nobody awaited, during the checks'))
    }, 0)
    setTimeout(() => {
      throw new Error('injected: thrown from a timer, during the checks')
    }, 0)
  }
  return write(chunk, ...rest)
}
`

describe('the CLI never exits without its reports', () => {
  test('escaped rejections, a timer that throws and a killed browser: the run ends by itself and reports every check', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-never-dies-'))
    const inject = join(dir, 'inject.mjs')
    writeFileSync(inject, INJECT)
    const reportDir = join(dir, 'reports')
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--import',
        pathToFileURL(inject).href,
        'scripts/conformance.ts',
        '--only',
        ONLY,
        '--parallel',
        '2',
        '--report-dir',
        reportDir,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    )
    let out = ''
    let err = ''
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    )
    // bounded: the first verdict of a check that drives the browser, or the child's end, or
    // 150 s; then its Chromium is killed (by PID, under this child only)
    let killed: number[] | undefined
    const browserKilled = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 150_000)
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        if (killed === undefined && child.pid && /^(PASS|FAIL|ERROR|WARN|SKIP) LOGIN-/m.test(out)) {
          killed = chromiumUnder(child.pid)
          for (const pid of killed) {
            try {
              process.kill(pid, 'SIGKILL')
            } catch {
              // it ended on its own in between
            }
          }
          clearTimeout(timer)
          resolve()
        }
      })
      void exited.then(() => {
        clearTimeout(timer)
        resolve()
      })
    })
    try {
      await browserKilled
      const printed = (): string => `${out}\n--- stderr ---\n${err}`
      expect(killed, `no LOGIN verdict before the child ended:\n${printed()}`).toBeDefined()
      expect(killed?.length, 'the run had a browser to kill').toBeGreaterThan(0)
      // bounded by the test's timeout
      const { code, signal } = await exited
      expect(signal, printed()).toBeNull()
      // the run ended with its own result line and the exit code that goes with it
      const result = /^Result: (PASSED|FAILED)$/m.exec(out)?.[1]
      expect(result, printed()).toBeDefined()
      expect(code, printed()).toBe(result === 'PASSED' ? 0 : 1)
      expect(err).not.toMatch(/injected:/)
      // the start-up's escaped rejection was caught and told; the run went on
      expect(out).toContain(
        'Note: an error escaped the run outside any check and was caught; the run goes on: injected: a rejection nobody awaited, at start-up',
      )
      for (const name of ['report.json', 'junit.xml', 'report.html', 'summary.md'])
        expect(existsSync(join(reportDir, name)), name).toBe(true)
      const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as RunReport
      expect(report.stopped).toBeUndefined()
      expect(report.checks.map((c) => c.id)).toEqual(selectChecks(ONLY))
      for (const c of report.checks) expect(c.verdict, `${c.id}: ${c.message}`).not.toBe('notrun')
      // the errors that escaped during the checks were each caught: as a note of the run, or
      // as the ERROR of the check they came from
      const told = `${out}\n${report.checks.map((c) => c.message ?? '').join('\n')}`
      expect(told).toContain('injected: a rejection nobody awaited, during the checks')
      expect(told).toContain('injected: thrown from a timer, during the checks')
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  }, 400_000)
})
