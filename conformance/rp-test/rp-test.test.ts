import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { RP_CONTROL, RP_TESTS, rpTest, type RpTest } from '../../server/rp/catalogue.ts'
import type { RpEvent, RpEventKind } from '../../server/rp/observations.ts'
import { startEmbedded } from '../harness/embedded.ts'
import { rpTestMain } from './cli.ts'
import { judge, selectRpTests } from './runner.ts'

const io = () => {
  const out = new PassThrough()
  const err = new PassThrough()
  let o = ''
  let e = ''
  out.on('data', (c: Buffer) => (o += c.toString()))
  err.on('data', (c: Buffer) => (e += c.toString()))
  return { io: { out, err, env: { NO_COLOR: '1' } }, out: () => o, err: () => e }
}

const ev = (...kinds: [RpEventKind, string?][]): RpEvent[] =>
  kinds.map(([kind, detail], i) => ({
    seq: i + 1,
    at: '',
    test: 't',
    kind,
    clientId: undefined,
    detail,
  }))

const test = (id: string): RpTest => {
  const t = rpTest(id)
  if (!t) throw new Error(id)
  return t
}

describe('rp-test judge', () => {
  const aud = test('rp-id_token-aud')
  const delivered = ev(['authorize'], ['fault-delivered'], ['token-issued'])

  it('passes a negative test refused with nothing used', () => {
    expect(judge(aud, 1, delivered, true).verdict).toBe('pass')
  })
  it('fails a MUST negative test whose sign-in exited 0', () => {
    const j = judge(aud, 0, delivered, true)
    expect(j.verdict).toBe('fail')
    expect(j.message).toMatch(/^your client accepted an ID token issued to another client/)
    expect(j.message).toMatch(/OpenID Connect Core §3\.1\.3\.7 \(3\)/)
  })
  it('fails a negative test whose command failed but whose tainted token was used', () => {
    const j = judge(aud, 1, [...delivered, ...ev(['tainted-use', 'called user-info'])], true)
    expect(j.verdict).toBe('fail')
    expect(j.message).toMatch(/called user-info/)
  })
  it('fails on a page marked signed-in even when the command failed', () => {
    expect(judge(aud, 1, [...delivered, ...ev(['signed-in'])], true).verdict).toBe('fail')
  })
  it('warns, not fails, for a SHOULD and records a MAY', () => {
    expect(judge(test('rp-id_token-bad-sig-rs256'), 0, delivered, true).verdict).toBe('warn')
    expect(judge(test('rp-id_token-bad-at_hash'), 0, delivered, true).verdict).toBe('info')
  })
  it('never passes a run that did not reach the fault or the issuer', () => {
    expect(judge(aud, 1, [], true).verdict).toBe('skip')
    expect(judge(aud, 1, ev(['authorize']), true).verdict).toBe('skip')
    const na = judge(
      test('rp-nonce-invalid'),
      0,
      ev(['authorize'], ['not-applicable', 'no nonce']),
      true,
    )
    expect(na).toEqual({ verdict: 'skip', message: 'not applicable: no nonce' })
  })
  it('a refusal proves nothing when the control did not sign in', () => {
    expect(judge(aud, 1, delivered, false).verdict).toBe('skip')
  })
  it('passes a positive test only when it signed in and redeemed a code here', () => {
    const rot = test('rp-key-rotation-op-sign-key')
    expect(judge(rot, 0, ev(['authorize'], ['token-issued']), true).verdict).toBe('pass')
    expect(judge(rot, 0, ev(['authorize']), true).verdict).toBe('skip')
    expect(judge(rot, 1, ev(['authorize'], ['token-issued']), true).verdict).toBe('fail')
  })
  it('runs the control first and selects by prefix', () => {
    expect(selectRpTests(['rp-nonce']).map((t) => t.id)).toEqual([
      RP_CONTROL,
      'rp-nonce-invalid',
      'rp-nonce-missing',
    ])
    expect(selectRpTests(undefined)[0]?.id).toBe(RP_CONTROL)
  })
})

describe('idp-conformance rp-test', () => {
  it('--list prints every test ID, one per line', async () => {
    const t = io()
    expect(await rpTestMain(['--list'], t.io)).toBe(0)
    expect(t.out().trim().split('\n')).toEqual(RP_TESTS.map((x) => x.id))
  })

  it('refuses bad usage with exit 2', async () => {
    for (const args of [
      [],
      ['--run', 'true', '--only', 'nope'],
      ['--run', 'true', '--timeout', '0'],
    ]) {
      const t = io()
      expect(await rpTestMain(args, t.io)).toBe(2)
      expect(t.err()).toMatch(/idp-conformance rp-test:/)
    }
  })

  it('a command that never signs in is inconclusive, never a pass, and the run exits 1', async () => {
    const t = io()
    const code = await rpTestMain(['--run', 'exit 1', '--only', 'rp-id_token-aud', '--quiet'], t.io)
    expect(code).toBe(1)
    expect(t.out()).toMatch(/SKIP rp-id_token-sig-rs256 .*\n.*inconclusive/)
    expect(t.out()).toMatch(/SKIP rp-id_token-aud /)
    expect(t.out()).not.toMatch(/PASS/)
  })

  it('runs against a separately started server (--base-url, --ca) and writes JUnit and JSON', async () => {
    const embedded = await startEmbedded()
    const dir = mkdtempSync(join(tmpdir(), 'rp-test-cli-'))
    try {
      writeFileSync(join(dir, 'ca.pem'), embedded.target.ca ?? '')
      const t = io()
      const code = await rpTestMain(
        [
          // the command sees the test issuer and the CA it is given
          '--run',
          'test -n "$RP_TEST_ISSUER" && test -f "$RP_TEST_CA" && exit 1; exit 7',
          '--base-url',
          embedded.target.baseUrl,
          '--ca',
          join(dir, 'ca.pem'),
          '--only',
          'rp-nonce',
          '--report-dir',
          join(dir, 'out'),
          '--json',
        ],
        t.io,
      )
      expect(code).toBe(1)
      const report = JSON.parse(t.out()) as {
        passed: boolean
        checks: { id: string; verdict: string; notes: string[] }[]
      }
      expect(report.passed).toBe(false)
      expect(report.checks.map((c) => c.id)).toEqual([
        RP_CONTROL,
        'rp-nonce-invalid',
        'rp-nonce-missing',
      ])
      expect(report.checks[0]?.notes[0]).toMatch(/exit code 1$/)
      const junit = readFileSync(join(dir, 'out', 'junit.xml'), 'utf8')
      expect(junit).toContain('name="rp-nonce-invalid [MUST]')
      expect(JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8'))).toEqual(report)
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await embedded.stop()
    }
  })

  it('an unreachable --base-url exits 3', async () => {
    const t = io()
    expect(await rpTestMain(['--run', 'true', '--base-url', 'https://127.0.0.1:1'], t.io)).toBe(3)
  })
})
