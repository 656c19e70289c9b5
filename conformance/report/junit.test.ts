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
  const xml = junitReport(
    [
      result('DISC-01', 'pass'),
      result('TOK-01', 'fail', 'expected HTTP 200, got 500 <html> & "quotes"\u0007'),
      result('TOK-02', 'skip', 'no service client configured'),
      result('DISC-02', 'warn', 'a SHOULD not met'),
      result('TOK-03', 'error', 'timed out after 60000 ms'),
    ],
    // five checks of 1.5 s each, run side by side in 3.2 s
    { wallMs: 3200 },
  )

  test('totals count failures and skips, warnings are not failures', () => {
    expect(xml).toMatch(
      /<testsuites name="idp-conformance" tests="5" failures="1" errors="1" skipped="1" time="3\.200">/,
    )
    expect(xml.match(/<testcase /g)).toHaveLength(5)
  })

  test("the suite's time is the run's wall time, each testcase's the check's own", () => {
    expect(xml).toMatch(/<testsuite name="idp-conformance" [^>]* time="3\.200">/)
    expect(xml.match(/<testcase [^>]* time="1\.500">/g)).toHaveLength(5)
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

  test('an inconclusive check is a JUnit error, not a failure', () => {
    expect(xml).toContain('<error message="timed out after 60000 ms" type="inconclusive">')
    expect(xml.match(/<failure /g)).toHaveLength(1)
  })

  test('a check a stopped run did not finish is skipped, typed notrun, never passed or failed', () => {
    const stopped = junitReport(
      [result('DISC-01', 'pass'), result('TOK-01', 'notrun', 'not run: interrupted by SIGTERM')],
      { wallMs: 2000 },
    )
    expect(stopped).toMatch(/tests="2" failures="0" errors="0" skipped="1"/)
    expect(stopped).toContain('<skipped message="not run: interrupted by SIGTERM" type="notrun"/>')
  })

  test('every element that is opened is closed', () => {
    for (const tag of ['testsuites', 'testsuite', 'testcase'])
      expect(xml.split(`<${tag} `).length - 1, tag).toBe(xml.split(`</${tag}>`).length - 1)
  })
})
