import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { checkKnownFailures, gate, loadKnownFailures } from './gate.ts'
import type { Level } from './catalogue/requirement.ts'
import type { CheckResult, Verdict } from './harness/types.ts'
import { markdownSummary } from './report/markdown.ts'

const result = (id: string, verdict: Verdict, level: Level = 'MUST'): CheckResult => ({
  id,
  title: `title of ${id}`,
  level,
  source: 'RFC 6749',
  area: 'Area',
  verdict,
  message: verdict === 'pass' ? undefined : `why ${id}`,
  notes: [],
  exchanges: [],
  screenshots: [],
  durationMs: 1,
})
const options = {
  strict: false,
  allowSkips: false,
  knownFailures: [],
  today: new Date('2026-11-22'),
}

describe('gate', () => {
  test('a check not run (a stopped run) fails the run whatever is allowed, one line per reason', () => {
    const results = [
      result('A-01', 'pass'),
      { ...result('A-02', 'notrun'), message: 'not run: interrupted by SIGTERM' },
      { ...result('A-03', 'notrun'), message: 'not run: interrupted by SIGTERM' },
    ]
    const verdict = gate(results, {
      ...options,
      allowSkips: true,
      allowErrors: true,
      knownFailures: [{ id: 'A-02', reason: 'flaky', expires: '2099-01-01' }],
    })
    expect(verdict.passed).toBe(false)
    expect(verdict.problems).toEqual([
      '2 checks not run: interrupted by SIGTERM (A-02, A-03): the run is incomplete',
    ])
    expect(markdownSummary(results, verdict, 'https://idp.example')).toMatch(
      /1 passed, 0 failed, 0 inconclusive \(error\), 0 warned, 0 info, 0 skipped, 2 not run/,
    )
  })

  test('passes when every MUST passes; a SHOULD warning fails only with strict', () => {
    const results = [
      result('A-01', 'pass'),
      result('A-02', 'warn', 'SHOULD'),
      result('A-03', 'info', 'MAY'),
    ]
    expect(gate(results, options).passed).toBe(true)
    expect(gate(results, { ...options, strict: true }).problems).toEqual([
      'A-02 [SHOULD] warn: why A-02',
    ])
  })

  test("the security profile's gate fails the run on the SHOULD warnings it holds at MUST, naming the harm", () => {
    const results = [
      result('A-01', 'pass'),
      result('A-02', 'warn', 'SHOULD'),
      result('A-03', 'warn', 'SHOULD'),
      result('A-04', 'info', 'MAY'),
    ]
    const raised = new Map([
      ['A-02', 'token theft (RFC 9700 §4.10 Misuse of stolen access tokens)'],
      // a raised entry for a check that is not SHOULD is not the gate's to hold
      ['A-04', 'account takeover (x)'],
    ])
    const verdict = gate(results, { ...options, raised })
    expect(verdict.passed).toBe(false)
    expect(verdict.problems).toEqual([
      'A-02 [SHOULD] warn, held at MUST by the security profile for token theft (RFC 9700 §4.10 Misuse of stolen access tokens): why A-02',
    ])
    // a passing check behind the same threat fails nothing
    expect(gate([result('A-02', 'pass', 'SHOULD')], { ...options, raised }).passed).toBe(true)
    // a known failure still excuses it
    const excused = gate(results, {
      ...options,
      raised,
      knownFailures: [{ id: 'A-02', reason: 'accepted until the fix', expires: '2099-01-01' }],
    })
    expect(excused.passed).toBe(true)
    expect(excused.excused).toEqual(['A-02: accepted until the fix (until 2099-01-01)'])
  })

  test('a known failure is excused until it expires; a stale or expired entry fails the run', () => {
    const knownFailures = [{ id: 'A-01', reason: 'bug 12', expires: '2026-12-31' }]
    const failing = gate([result('A-01', 'fail')], { ...options, knownFailures })
    expect(failing).toEqual({
      passed: true,
      problems: [],
      excused: ['A-01: bug 12 (until 2026-12-31)'],
      unused: [],
    })
    expect(gate([result('A-01', 'pass')], { ...options, knownFailures }).problems[0]).toMatch(
      /stale entry/,
    )
    const expired = gate([result('A-01', 'fail')], {
      ...options,
      knownFailures,
      today: new Date('2027-01-01'),
    })
    expect(expired.passed).toBe(false)
    expect(expired.problems[0]).toMatch(/expired on 2026-12-31/)
  })

  test('a known-failures entry for a check that does not exist fails the run (a typo excuses nothing)', () => {
    const knownFailures = [{ id: 'A-1', reason: 'typo of A-01', expires: '2026-12-31' }]
    const verdict = gate([result('A-01', 'pass')], {
      ...options,
      knownFailures,
      knownIds: new Set(['A-01', 'A-02']),
    })
    expect(verdict.passed).toBe(false)
    expect(verdict.problems).toEqual([
      'known-failures entry A-1: no check has this ID (a typo excuses nothing)',
    ])
  })

  test('a known-failures entry for a check not selected in this run is reported, not failed', () => {
    const knownFailures = [{ id: 'A-02', reason: 'bug 7', expires: '2026-12-31' }]
    const verdict = gate([result('A-01', 'pass')], {
      ...options,
      knownFailures,
      knownIds: new Set(['A-01', 'A-02']),
    })
    expect(verdict.passed).toBe(true)
    expect(verdict.unused).toEqual(['A-02: not selected in this run, so the entry excused nothing'])
  })

  test('an inconclusive (ERROR) check fails the run unless allowed, and is never called a failure', () => {
    const results = [result('A-01', 'error')]
    const verdict = gate(results, options)
    expect(verdict.passed).toBe(false)
    expect(verdict.problems).toEqual(['A-01 [MUST] inconclusive (ERROR): why A-01'])
    expect(gate(results, { ...options, allowErrors: true }).passed).toBe(true)
  })

  test('failures that share a cause are one line', () => {
    const results = ['A-01', 'A-02', 'A-03'].map((id) => ({
      ...result(id, 'fail'),
      cause: 'GET /auth/user-info answered HTTP 401',
    }))
    expect(gate(results, options).problems).toEqual([
      'GET /auth/user-info answered HTTP 401: 3 checks fail (A-01, A-02, A-03)',
    ])
  })

  test('skipped checks fail the run unless allowed', () => {
    expect(gate([result('A-01', 'skip')], options).passed).toBe(false)
    expect(gate([result('A-01', 'skip')], { ...options, allowSkips: true }).passed).toBe(true)
  })

  test('loads a known-failures file and refuses malformed entries', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kf-'))
    const good = join(dir, 'good.json')
    writeFileSync(good, JSON.stringify([{ id: 'A-01', reason: 'r', expires: '2026-12-31' }]))
    expect(loadKnownFailures(good)).toEqual([{ id: 'A-01', reason: 'r', expires: '2026-12-31' }])
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, JSON.stringify([{ id: 'A-01', reason: '', expires: 'soon' }]))
    expect(() => loadKnownFailures(bad)).toThrow(/entry 0/)
  })

  test('known-failures entries are checked against the catalogue before the run, every problem in one error', () => {
    const check = (entries: { id: string; expires: string }[]) => () =>
      checkKnownFailures(
        entries.map((e) => ({ ...e, reason: 'bug 9' })),
        { path: 'kf.json', knownIds: ['A-01', 'A-02', 'B-01'], today: new Date('2026-11-22') },
      )
    expect(check([{ id: 'A-01', expires: '2026-11-22' }])()).toEqual([
      { id: 'A-01', reason: 'bug 9', expires: '2026-11-22' },
    ])
    expect(check([{ id: 'A-1', expires: '2027-01-01' }])).toThrow(
      'known-failures file kf.json: entry 0 (A-1): no check has this ID; --list shows them',
    )
    expect(check([{ id: 'a-01', expires: '2027-01-01' }])).toThrow(/IDs are upper case: A-01/)
    expect(check([{ id: 'A-*', expires: '2027-01-01' }])).toThrow(
      /entry 0 \(A-\*\): a pattern, not a check ID; an entry names one check \(it would match A-01, A-02\)/,
    )
    expect(check([{ id: 'A-01', expires: '2026-11-21' }])).toThrow(
      /entry 0 \(A-01\): expired on 2026-11-21 \(bug 9\)/,
    )
    expect(check([{ id: 'A-01', expires: '2026-02-30' }])).toThrow(/is not a calendar date/)
    expect(
      check([
        { id: 'A-01', expires: '2027-01-01' },
        { id: 'A-01', expires: '2027-01-01' },
        { id: 'C-01', expires: '2020-01-01' },
      ]),
    ).toThrow(
      [
        'known-failures file kf.json: 3 problems:',
        '  entry 1 (A-01): listed twice',
        '  entry 2 (C-01): no check has this ID; --list shows them',
        "  entry 2 (C-01): expired on 2020-01-01 (bug 9); fix the check's failure, or renew the entry with a later date",
      ].join('\n'),
    )
  })

  test('the markdown summary lists what did not pass and why the run failed', () => {
    const results = [result('A-01', 'pass'), result('A-02', 'fail')]
    const md = markdownSummary(results, gate(results, options), 'https://idp.example')
    expect(md).toContain('## Conformance: FAILED')
    expect(md).toContain('| A-02 title of A-02 | MUST | fail | why A-02 |')
    expect(md).not.toContain('A-01 title')
  })

  // blind round 5: a group of inconclusive checks was printed "inconclusive: inconclusive: …"
  test("the markdown summary names an inconclusive cause's verdict once", () => {
    const why = 'inconclusive: the harness could not drive the target: no login form'
    const results = [
      { ...result('A-01', 'error'), message: why },
      { ...result('A-02', 'error'), message: why },
    ]
    const md = markdownSummary(results, gate(results, options), 'https://idp.example')
    expect(md).toContain(`- ${why}: 2 checks: 2 ERROR (A-01, A-02)`)
    expect(md).not.toContain('inconclusive: inconclusive:')
  })
})
