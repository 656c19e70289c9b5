import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { EXIT, selectChecks } from './cli.ts'
import { embeddedOnlyReason } from './harness/needs.ts'
import type { RunReport } from './report/json.ts'
import { runCli } from './test-support.ts'

// Issue #29: the suite never exits without writing its reports. A stop (SIGTERM, --run-timeout)
// that comes before any check ran, while the embedded server starts or while the preflight
// tries the settings, and a preflight that stops the run, still write every report: each
// selected check not run, with why, and the documented exit code.

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const ONLY = 'DISC-01,TOK'

/** The report directory's files, with report.json parsed; each of them must exist. */
function reports(dir: string): RunReport {
  for (const name of ['report.json', 'junit.xml', 'report.html', 'summary.md'])
    expect(existsSync(join(dir, name)), name).toBe(true)
  return JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as RunReport
}

/** Every selected check is in the reports, not run, each saying `why`. */
function expectNoneRun(dir: string, ids: readonly string[], why: RegExp): RunReport {
  const report = reports(dir)
  expect(report.stopped).toMatch(why)
  expect(report.passed).toBe(false)
  expect(report.checks.map((c) => c.id)).toEqual(ids)
  for (const c of report.checks) {
    expect(c.verdict, c.id).toBe('notrun')
    expect(c.message).toMatch(/^not run: /)
    expect(c.message?.slice('not run: '.length)).toBe(report.stopped)
  }
  expect(report.counts.notrun).toBe(ids.length)
  const junit = readFileSync(join(dir, 'junit.xml'), 'utf8')
  expect(junit.match(/type="notrun"/g)).toHaveLength(ids.length)
  const html = readFileSync(join(dir, 'report.html'), 'utf8')
  expect(html).toContain('NOT RUN')
  expect(html).toContain('id="stopped"')
  expect(readFileSync(join(dir, 'summary.md'), 'utf8').length).toBeGreaterThan(0)
  return report
}

interface Child {
  /** Resolves true once `when` has happened and the signal was sent; false if the child ended first or 90 s passed. */
  readonly signalled: Promise<boolean>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly output: () => string
  readonly kill: () => void
}

/**
 * The CLI in its own process (`npm run conformance`), sent `signal` once `ready(stdout)` says
 * so or `trigger` resolves (bounded: 90 s, or the child's end); or never, without either.
 */
function cli(
  args: string[],
  options: {
    signal?: NodeJS.Signals
    ready?: (stdout: string) => boolean
    trigger?: Promise<unknown>
  } = {},
): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/conformance.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  })
  let out = ''
  let err = ''
  child.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const signalled = new Promise<boolean>((resolve) => {
    if (!options.signal) {
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      resolve(false)
      return
    }
    const signal = options.signal
    let sent = false
    const send = (): void => {
      if (sent) return
      sent = true
      clearTimeout(timer)
      resolve(child.kill(signal))
    }
    const timer = setTimeout(() => {
      sent = true
      resolve(false)
    }, 90_000)
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (options.ready?.(out)) send()
    })
    void options.trigger?.then(send)
    void exited.then(() => {
      clearTimeout(timer)
      sent = true
      resolve(false)
    })
  })
  return {
    signalled,
    exited,
    output: () => `${out}\n--- stderr ---\n${err}`,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    },
  }
}

/**
 * A "deployment" that accepts connections and never answers (not even the TLS handshake): a
 * preflight against it can only end by its own 15-s bound, so a stop that comes first is
 * certain to come while the preflight runs. `connected` resolves at its first connection.
 */
let silent: Server
let connected: Promise<void>
const sockets = new Set<Socket>()
let config: string
let remoteIds: string[]

beforeAll(async () => {
  let first: () => void = () => undefined
  connected = new Promise<void>((resolve) => (first = resolve))
  silent = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
    first()
  })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const address = silent.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const dir = mkdtempSync(join(tmpdir(), 'cli-stop-startup-'))
  config = join(dir, 'target.json')
  writeFileSync(
    config,
    JSON.stringify({
      baseUrl: `https://127.0.0.1:${address.port}`,
      clients: { main: { id: 'app', secret: 'app-secret' } },
      users: { primary: { username: 'alice', password: 'wonderland' } },
    }),
  )
  // a run against a deployment leaves the embedded-only checks out of its reports
  remoteIds = selectChecks(ONLY).filter((id) => !embeddedOnlyReason(id))
})
afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await new Promise<void>((resolve) => silent.close(() => resolve()))
})

describe('a run stopped before any check ran still reports', () => {
  test('SIGTERM while the embedded server starts: every report, every check not run, exit 143', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-sigterm-start-'))
    // the first line is written before the embedded server's modules are even loaded
    const child = cli(['--only', ONLY, '--report-dir', dir], {
      signal: 'SIGTERM',
      ready: (out) => /starting the embedded reference server\n/.test(out),
    })
    try {
      expect(await child.signalled, child.output()).toBe(true)
      const { code } = await child.exited
      expect(code, child.output()).toBe(143)
      expect(child.output()).toMatch(
        /^Result: INCOMPLETE \(interrupted by SIGTERM, before any check ran/m,
      )
      expect(child.output()).not.toMatch(/^Running /m)
      // the step it was stopped in is named: the server's start (or, on a machine fast enough
      // to have started it before the signal was handled, a later step before the checks)
      expectNoneRun(
        dir,
        selectChecks(ONLY),
        /^interrupted by SIGTERM, before any check ran \((the embedded reference server was starting|the target was being set up|the preflight was trying the settings)\)$/,
      )
    } finally {
      child.kill()
    }
  }, 180_000)

  test('SIGTERM during the preflight: every report, every check not run, exit 143', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-sigterm-preflight-'))
    const child = cli(['--config', config, '--only', ONLY, '--report-dir', dir], {
      signal: 'SIGTERM',
      // the preflight's first request has reached the target, which never answers it
      trigger: connected,
    })
    try {
      expect(await child.signalled, child.output()).toBe(true)
      const { code } = await child.exited
      expect(code, child.output()).toBe(143)
      expect(child.output()).toMatch(/Stopping: interrupted by SIGTERM/)
      expectNoneRun(
        dir,
        remoteIds,
        /^interrupted by SIGTERM, before any check ran \(the preflight was trying the settings\)$/,
      )
    } finally {
      child.kill()
    }
  }, 180_000)

  test('a --run-timeout shorter than the start-up: every report, every check not run, exit 4', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-run-timeout-start-'))
    // the preflight cannot end within 1 s: its first request is never answered
    const child = cli([
      '--config',
      config,
      '--only',
      ONLY,
      '--run-timeout',
      '1',
      '--report-dir',
      dir,
    ])
    try {
      const { code } = await child.exited
      expect(code, child.output()).toBe(EXIT.incomplete)
      expect(child.output()).toMatch(
        /^Result: INCOMPLETE \(the run's time limit of 1 s was reached \(--run-timeout\), before any check ran/m,
      )
      expectNoneRun(
        dir,
        remoteIds,
        /^the run's time limit of 1 s was reached \(--run-timeout\), before any check ran \((the target was being set up|the preflight was trying the settings)\)$/,
      )
    } finally {
      child.kill()
    }
  }, 180_000)

  test('a preflight that stops the run writes the reports too: the target unreachable, exit 3', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-preflight-stop-'))
    const { code, out, err } = await runCli([
      '--base-url',
      'https://127.0.0.1:1',
      '--config',
      config,
      '--only',
      ONLY,
      '--report-dir',
      dir,
    ])
    expect(code, `${out}\n${err}`).toBe(EXIT.unreachable)
    expect(err).toMatch(/^idp-conformance: preflight: .*the target is unreachable \(ECONNREFUSED/)
    expect(out).toContain(`the reports are in ${dir}`)
    expectNoneRun(dir, remoteIds, /^preflight: .*the target is unreachable \(ECONNREFUSED/)
  }, 120_000)
})
