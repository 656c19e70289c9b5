import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import { registeredChecks, runChecks } from './harness/runner.ts'
import type { CheckResult } from './harness/types.ts'
import { checkName, requirementIds } from './requirements.ts'
import { terminalOutput, writeReportDir } from './report/all-formats.ts'
import { gate } from './gate.ts'
import { knownSecrets } from './harness/redact.ts'
import type { TargetClient, TargetUser } from './harness/target.ts'

// The whole suite against the embedded reference server, four checks at a time (exclusive ones
// alone): every check must pass there. Running them in parallel is itself under test: a check
// that disturbs another would fail one of them here, whatever the CLI's default on this machine.
describe('conformance suite against the embedded reference server', () => {
  let embedded: Embedded
  const results = new Map<string, CheckResult>()
  beforeAll(async () => {
    embedded = await startEmbedded()
    for (const result of await runChecks(embedded.target, { concurrency: 4 }))
      results.set(result.id, result)
  }, 900_000)
  afterAll(async () => {
    await embedded.stop()
  })

  test('every catalogue row has a registered check', () => {
    expect(registeredChecks()).toEqual(requirementIds)
  })

  // the reports are CI artifacts: nothing the run knows as a secret may be in any of them
  test('no secret of the configuration, nor any code or token of the run, is in any report', () => {
    // the report directory as the CLI writes it, read back file by file, and the terminal output
    const all = [...results.values()]
    const dir = mkdtempSync(join(tmpdir(), 'idp-reports-'))
    writeReportDir(dir, all, {
      target: { baseUrl: embedded.target.baseUrl, embedded: true },
      version: 'test',
      startedAt: new Date(),
      finishedAt: new Date(),
      verdict: gate(all, { strict: true, allowSkips: false, knownFailures: [], today: new Date() }),
    })
    const formats: Record<string, string> = { terminal: terminalOutput(all) }
    for (const name of readdirSync(dir)) formats[name] = readFileSync(join(dir, name), 'utf8')
    rmSync(dir, { recursive: true })
    expect(Object.keys(formats).sort()).toEqual([
      'junit.xml',
      'report.html',
      'report.json',
      'summary.md',
      'terminal',
    ])
    const t = embedded.target
    const configured = [
      ...Object.values<TargetClient | undefined>(t.clients).map((c) => c?.secret),
      ...Object.values<TargetUser | undefined>(t.users).map((u) => u?.password),
    ].filter((s): s is string => typeof s === 'string')
    expect(configured.length).toBeGreaterThanOrEqual(4)
    // the codes and tokens the run was handed (well over a hundred on a full run)
    const handedOut = knownSecrets().filter((s) => s.length >= 16)
    expect(handedOut.length).toBeGreaterThan(100)
    const signedJwt = /\beyJ[\w-]*\.eyJ[\w-]*\.[\w-]{16,}/
    for (const [format, text] of Object.entries(formats)) {
      for (const secret of configured)
        expect(text.includes(secret), `a configured secret is in ${format}`).toBe(false)
      const leaked = handedOut.filter((s) => text.includes(s))
      expect(leaked.length, `${leaked.length} handed-out credentials in ${format}`).toBe(0)
      expect(signedJwt.exec(text)?.[0], `a signed JWT in ${format}`).toBeUndefined()
    }
  })

  for (const id of registeredChecks()) {
    test(checkName(id), () => {
      const result = results.get(id)
      expect({ verdict: result?.verdict, message: result?.message }).toEqual({
        verdict: 'pass',
        message: undefined,
      })
    })
  }
})
