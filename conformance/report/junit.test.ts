import { describe, expect, test } from 'vitest'
import type { CheckResult, Verdict } from '../harness/types.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import { junitReport } from './junit.ts'

const result = (id: RequirementId, verdict: Verdict, message?: string): CheckResult => ({
  id,
  ...requirements[id],
  verdict,
  message,
  notes: verdict === 'pass' ? [] : ['a note'],
  exchanges: [],
  screenshots: [],
  durationMs: 1500,
})

describe('JUnit report', () => {
  const xml = junitReport([
    result('DISC-01', 'pass'),
    result('TOK-01', 'fail', 'expected HTTP 200, got 500 <html> & "quotes"\u0007'),
    result('TOK-02', 'skip', 'no service client configured'),
    result('DISC-02', 'warn', 'a SHOULD not met'),
  ])

  test('totals count failures and skips, warnings are not failures', () => {
    expect(xml).toMatch(
      /<testsuites name="idp-conformance" tests="4" failures="1" skipped="1" time="6\.000">/,
    )
    expect(xml.match(/<testcase /g)).toHaveLength(4)
  })

  test('a failure carries its message and source, escaped for XML', () => {
    const failure = /<failure message="([^"]*)">([^<]*)<\/failure>/.exec(xml)
    expect(failure?.[1]).toBe('expected HTTP 200, got 500 &#60;html&#62; &#38; &#34;quotes&#34;')
    expect(failure?.[2]).toContain(requirements['TOK-01'].source)
    // XML 1.0 forbids control characters: they are dropped, not written
    expect(xml).not.toContain('\u0007')
  })

  test('a skip says why; a warning is written to system-out, not as a failure', () => {
    expect(xml).toContain('<skipped message="no service client configured"/>')
    expect(xml).toMatch(/DISC-02[^]*<system-out>WARN: a SHOULD not met\na note<\/system-out>/)
  })

  test('every element that is opened is closed', () => {
    for (const tag of ['testsuites', 'testsuite', 'testcase'])
      expect(xml.split(`<${tag} `).length - 1, tag).toBe(xml.split(`</${tag}>`).length - 1)
  })
})
