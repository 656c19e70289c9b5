import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { EXIT, parseRunTimeout, selectChecks } from './cli.ts'
import type { RunReport } from './report/json.ts'
import { runCli } from './test-support.ts'

// Issue #29, item 6: a stopped run (SIGTERM, SIGINT, --run-timeout) still writes every report,
// with what ran and the rest marked not run, and its exit code is never 0.

const ROOT = fileURLToPath(new URL('../', import.meta.url))
// a quick check first, then three areas of checks that drive the browser, one at a time: far
// more than a stop needs to find still running on any machine. --run-timeout counts from the
// run's start, so the 2-s limit below usually lands in the embedded server's start-up or the
// preflight (cli-stop-startup.test.ts covers those steps on purpose); either way the reports
// must be written
const ONLY = 'DISC-01,LOGIN,AUTHZ,LOGOUT'
const IDS = selectChecks(ONLY)

/** The report directory's files, with report.json parsed; each of them must exist. */
function reports(dir: string): RunReport {
  for (const name of ['report.json', 'junit.xml', 'report.html', 'summary.md'])
    expect(existsSync(join(dir, name)), name).toBe(true)
  return JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as RunReport
}

/** What a stopped run's reports must say: the finished checks kept, the rest not run. */
function expectStopped(report: RunReport, dir: string, why: RegExp, printed: string): void {
  expect(report.stopped).toMatch(why)
  expect(report.passed).toBe(false)
  expect(report.checks.map((c) => c.id)).toEqual(IDS)
  const notRun = report.checks.filter((c) => c.verdict === 'notrun')
  expect(notRun.length).toBeGreaterThan(0)
  for (const c of notRun) expect(c.message).toMatch(/^not run: /)
  // every check that finished before the stop kept the verdict it was printed with
  for (const c of report.checks.filter((r) => r.verdict !== 'notrun'))
    expect(printed).toContain(`${c.verdict.toUpperCase()} ${c.id} `)
  expect(report.counts.notrun).toBe(notRun.length)
  const junit = readFileSync(join(dir, 'junit.xml'), 'utf8')
  expect(junit.match(/type="notrun"/g)).toHaveLength(notRun.length)
  expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('NOT RUN')
}

describe('a stopped run still reports', () => {
  test('--run-timeout takes whole seconds from 1 to a week; none by default', () => {
    expect(parseRunTimeout(undefined)).toBeUndefined()
    expect(parseRunTimeout('90')).toBe(90_000)
    for (const bad of ['0', '1.5', '-3', 'ten', '604801'])
      expect(() => parseRunTimeout(bad), bad).toThrow(/--run-timeout must be whole seconds/)
  })

  test('SIGTERM to the CLI: every report written, the rest not run, exit 143', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-sigterm-'))
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'scripts/conformance.ts',
        '--only',
        ONLY,
        '--parallel',
        '1',
        '--report-dir',
        dir,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    )
    let out = ''
    let err = ''
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    )
    // bounded: the first check's verdict line (the embedded server and the browser are up), or
    // the child's end, or 90 s
    let signalled = false
    const firstResult = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 90_000)
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        if (!signalled && /^(PASS|FAIL|ERROR|WARN|SKIP|INFO) DISC-01 /m.test(out)) {
          signalled = true
          clearTimeout(timer)
          resolve(child.kill('SIGTERM'))
        }
      })
      void exited.then(() => {
        clearTimeout(timer)
        resolve(false)
      })
    })
    try {
      expect(await firstResult, `no verdict line before the child ended:\n${out}\n${err}`).toBe(
        true,
      )
      // bounded by the test's timeout; the CLI's own grace is 15 s
      const code = await exited
      expect(code, `${out}\n${err}`).toBe(143)
      expect(out).toMatch(/Stopping: interrupted by SIGTERM/)
      expect(out).toMatch(/Result: INCOMPLETE \(interrupted by SIGTERM\)/)
      expectStopped(reports(dir), dir, /^interrupted by SIGTERM$/, out)
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  }, 180_000)

  test('--run-timeout: the reports are written when the time is up, exit 4', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-run-timeout-'))
    const listening = process.listenerCount('SIGTERM')
    const { code, out } = await runCli(
      ['--only', ONLY, '--parallel', '1', '--run-timeout', '2', '--report-dir', dir],
      {},
      { merged: true },
    )
    expect(code, out).toBe(EXIT.incomplete)
    expect(out).toMatch(/Result: INCOMPLETE \(the run's time limit of 2 s was reached/)
    expectStopped(reports(dir), dir, /--run-timeout/, out)
    // the process's own signal handling is back once the run is over
    expect(process.listenerCount('SIGTERM')).toBe(listening)
  }, 180_000)
})
