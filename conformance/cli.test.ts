import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  DEFAULT_PARALLEL,
  DEFAULT_PARALLEL_REMOTE,
  EXIT,
  main,
  parseParallel,
  parseShuffle,
  selectChecks,
} from './cli.ts'

function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let out = ''
  let err = ''
  const io = {
    out: { write: (s: string) => (out += s), isTTY: false },
    err: { write: (s: string) => (err += s) },
    env,
  }
  return main(argv, io).then((code) => ({ code, out, err }))
}

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
    expect(help).toMatch(/exit codes: 0 .*; 1 .*; 2 usage or configuration error/s)
    expect(help).toMatch(/3 target unreachable; 4 /)
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
