import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  DEFAULT_PARALLEL,
  DEFAULT_PARALLEL_REMOTE,
  EXIT,
  parseParallel,
  parseShuffle,
  selectChecks,
  withRerunDefault,
} from './cli.ts'
import { runCli } from './test-support.ts'

const run = (argv: string[], env: NodeJS.ProcessEnv = {}, isTTY = false) =>
  runCli(argv, env, { isTTY })

const dir = mkdtempSync(join(tmpdir(), 'cli-'))
const config = join(dir, 'target.json')
writeFileSync(
  config,
  JSON.stringify({
    clients: { main: { id: 'app', secret: 's3cret', redirectUri: 'https://app.example/cb' } },
    users: { primary: { username: 'u', password: 'pa55' } },
  }),
)

const badLogin = join(dir, 'bad-login.json')
writeFileSync(
  badLogin,
  JSON.stringify({
    clients: { main: { id: 'app', secret: 's3cret' } },
    users: { primary: { username: 'u', password: 'pa55' } },
    login: { steps: [{ fill: 'input[name=user]' }] },
  }),
)

describe('idp-conformance CLI', () => {
  test('--help and --list exit 0', async () => {
    expect((await run(['--help'])).out).toMatch(/usage: idp-conformance/)
    const list = await run(['--list', '--only', 'DISC-0*'])
    expect(list.code).toBe(EXIT.ok)
    expect(list.out.split('\n')[0]).toMatch(/^DISC-01 \[MUST\]/)
  })

  test('--list answers from the catalogue and needs.ts, which match the registered checks', async () => {
    // loading the checks also compares each one's embeddedOnly with needs.ts's EMBEDDED_ONLY
    // (registration throws on a difference), the table --list and a run's header read
    const { registeredChecks } = await import('./runner.ts')
    expect(registeredChecks()).toEqual(selectChecks(undefined))
  })

  test('usage and configuration errors exit 2 with one line and no stack trace', async () => {
    for (const argv of [
      ['--bogus'],
      ['--base-url', 'http://idp.example', '--config', config],
      ['--base-url', 'https://idp.example'],
      ['--base-url', 'https://idp.example', '--config', join(dir, 'missing.json')],
      ['--only', 'NOPE-*'],
      ['--known-failures', join(dir, 'missing.json'), '--list'],
      ['--parallel', '0', '--list'],
      ['--base-url', 'https://idp.example', '--config', badLogin, '--login-dry-run'],
      ['--parallel', 'many', '--list'],
    ]) {
      const r = await run(argv)
      expect(r.code, argv.join(' ')).toBe(EXIT.usage)
      expect(r.err).toMatch(/^idp-conformance: /)
      expect(r.err).not.toMatch(/\n\s+at /)
    }
    const login = await run(['--base-url', 'https://idp.example', '--config', badLogin])
    expect(login.err).toMatch(/"login\.steps\[0\]" must be one step/)
  })

  test('--help lists every exit code with its meaning', async () => {
    const help = (await run(['--help'])).out
    const codes = /exit codes:([^]*)$/.exec(help)?.[1] ?? ''
    for (const code of [...Object.values(EXIT), 130, 143])
      expect(codes, `exit code ${code}`).toMatch(new RegExp(`(^|\\s)${code}[ ,]`, 'm'))
  })

  test('--rerun-failed runs the checks that failed or were inconclusive in a report', async () => {
    const report = join(dir, 'report.json')
    writeFileSync(
      report,
      JSON.stringify({
        checks: [
          { id: 'DISC-01', verdict: 'pass' },
          { id: 'DISC-02', verdict: 'fail' },
          { id: 'DISC-03', verdict: 'warn' },
          { id: 'DISC-04', verdict: 'error' },
          { id: 'DISC-05', verdict: 'skip' },
        ],
      }),
    )
    const names = (out: string): string[] =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ')[0] ?? '')
    const all = await run(['--rerun-failed', report, '--list'])
    expect(all.code).toBe(EXIT.ok)
    expect(names(all.out)).toEqual(['DISC-02', 'DISC-04'])
    // within --only
    expect(
      names((await run(['--list', '--rerun-failed', report, '--only', 'DISC-04'])).out),
    ).toEqual(['DISC-04'])
    const none = await run(['--rerun-failed', report, '--only', 'DISC-01', '--list'])
    expect(none.code).toBe(EXIT.ok)
    expect(none.out).toMatch(/has no failed or inconclusive check to run again/)
    // a report that cannot be read, or is not one, is a usage error
    for (const bad of [join(dir, 'missing.json'), config]) {
      const r = await run(['--rerun-failed', bad, '--list'])
      expect(r.code, bad).toBe(EXIT.usage)
      expect(r.err).toMatch(/^idp-conformance: /)
    }
  })

  test('--rerun-failed without a file reads reports/report.json', () => {
    expect(withRerunDefault(['--rerun-failed'])).toEqual(['--rerun-failed=reports/report.json'])
    expect(withRerunDefault(['--rerun-failed', '--list'])).toEqual([
      '--rerun-failed=reports/report.json',
      '--list',
    ])
    expect(withRerunDefault(['--rerun-failed', 'old.json', '--list'])).toEqual([
      '--rerun-failed',
      'old.json',
      '--list',
    ])
  })

  test('one check is "1 check"; on a terminal a progress line follows the results, piped none', async () => {
    const piped = await run(['--only', 'DISC-01'])
    expect(piped.code).toBe(EXIT.ok)
    expect(piped.out).toMatch(/^Running 1 check against /m)
    expect(piped.out).toMatch(/^1 check in [\d.]+ s: 1 passed/m)
    expect(piped.out).not.toContain('\x1b[2K')
    expect(piped.out).not.toMatch(/\[1\/1\]/)
    const tty = await run(['--only', 'DISC-01,DISC-02'], {}, true)
    expect(tty.code).toBe(EXIT.ok)
    expect(tty.out).toMatch(/\n\[0\/2\] 0 failed · estimating the time left/)
    expect(tty.out).toMatch(/\[1\/2\] 0 failed · (under 5 s|about [\w ]+) left/)
    // the line is erased before the summary, which is not drawn over
    expect(tty.out).toContain('\r\x1b[2K\nSummary by area:')
  })

  test('a known-failures typo is a usage error before the run, printed once', async () => {
    const typo = join(dir, 'typo.json')
    writeFileSync(typo, JSON.stringify([{ id: 'DISC-1', reason: 'r', expires: '2099-01-01' }]))
    const r = await run(['--known-failures', typo, '--only', 'DISC-01'])
    expect(r.code).toBe(EXIT.usage)
    expect(r.err).toBe(
      `idp-conformance: known-failures file ${typo}: entry 0 (DISC-1): no check has this ID; --list shows them\n`,
    )
    // nothing started: not even the first line of a run
    expect(r.out).toBe('')
  })

  test('--help lists the exit codes and --no-preflight', async () => {
    const help = (await run(['--help'])).out
    expect(help).toMatch(
      /2 usage or configuration error: nothing was run \(a bad flag or known-failures\s+file, or a setting the preflight found wrong/,
    )
    expect(help).toMatch(/3 the target is unreachable/)
    expect(help).toMatch(/--no-preflight/)
  })

  test('--parallel takes a whole number from 1 to 16', () => {
    expect(parseParallel(undefined)).toBe(DEFAULT_PARALLEL)
    expect(parseParallel(undefined, true)).toBe(DEFAULT_PARALLEL_REMOTE)
    expect(parseParallel('1', true)).toBe(1)
    expect(parseParallel('1')).toBe(1)
    expect(parseParallel('16')).toBe(16)
    for (const bad of ['0', '17', '2.5', '-1', '', ' 3', '0x4'])
      expect(() => parseParallel(bad), bad).toThrow(/--parallel must be a whole number/)
  })

  test('--shuffle takes a 32-bit unsigned seed', async () => {
    expect(parseShuffle(undefined)).toBeUndefined()
    expect(parseShuffle('0')).toBe(0)
    expect(parseShuffle('4294967295')).toBe(4294967295)
    for (const bad of ['-1', '4294967296', '1.5', 'x', '', '12345678901'])
      expect(() => parseShuffle(bad), bad).toThrow(/--shuffle must be an integer/)
    const res = await run(['--shuffle', 'abc', '--only', 'DISC-01'])
    expect(res.code).toBe(EXIT.usage)
    expect(res.err).toMatch(/--shuffle must be an integer from 0 to 4294967295, got abc/)
  })

  test('an unreachable target exits 3', async () => {
    const r = await run(['--base-url', 'https://127.0.0.1:1', '--config', config])
    expect(r.code).toBe(EXIT.unreachable)
    expect(r.err).toMatch(/unreachable/)
  })

  test('flags win over the environment, and --print-config redacts secrets', async () => {
    const r = await run(
      ['--print-config', '--base-url', 'https://flag.example', '--config', config],
      { IDP_BASE_URL: 'https://env.example' },
    )
    expect(r.code).toBe(EXIT.ok)
    const printed = JSON.parse(r.out) as { baseUrl: string }
    expect(printed.baseUrl).toBe('https://flag.example')
    expect(r.out).not.toContain('s3cret')
    expect(r.out).not.toContain('pa55')
    const fromEnv = JSON.parse(
      (await run(['--print-config', '--config', config], { IDP_BASE_URL: 'https://env.example' }))
        .out,
    ) as { baseUrl: string }
    expect(fromEnv.baseUrl).toBe('https://env.example')
  })

  test('selects checks by ID glob, area and level', () => {
    expect(selectChecks('DISC-01')).toEqual(['DISC-01'])
    expect(selectChecks('jwks').every((id) => id.startsWith('JWKS-'))).toBe(true)
    expect(selectChecks('MAY').length).toBeGreaterThan(0)
  })
})
