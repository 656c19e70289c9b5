import type { CheckResult } from '../harness/types.ts'
import { escapeXml } from './escape.ts'

/**
 * JUnit XML: one testcase per check, named by ID and title; warnings are not failures. Each
 * testcase's time is the check's; the suite's is the run's wall time (`wallMs`), which is less
 * than their sum when checks ran in parallel.
 */
export function junitReport(
  results: readonly CheckResult[],
  options: { readonly wallMs: number; readonly suiteName?: string },
): string {
  const suiteName = options.suiteName ?? 'idp-conformance'
  const failures = results.filter((r) => r.verdict === 'fail').length
  // a check the stopped run did not run to its end is skipped for JUnit, typed "notrun"
  const skipped = results.filter((r) => r.verdict === 'skip' || r.verdict === 'notrun').length
  // inconclusive checks are JUnit errors: the test could not run, which is not a failure
  const errors = results.filter((r) => r.verdict === 'error').length
  const time = (ms: number): string => (ms / 1000).toFixed(3)
  const cases = results.map((r) => {
    const name = escapeXml(`${r.id} [${r.level}] ${r.title}`)
    const head = `  <testcase classname="${escapeXml(r.area)}" name="${name}" time="${time(r.durationMs)}">`
    const notes = [
      ...(r.verdict === 'warn' || r.verdict === 'info'
        ? [`${r.verdict.toUpperCase()}: ${r.message ?? ''}`]
        : []),
      ...r.notes,
    ]
    const out = notes.length ? `\n    <system-out>${escapeXml(notes.join('\n'))}</system-out>` : ''
    if (r.verdict === 'fail')
      return `${head}\n    <failure message="${escapeXml(r.message ?? 'failed')}">${escapeXml(`${r.source}\n${[r.message ?? '', ...(r.more ?? [])].join('\n')}`)}</failure>${out}\n  </testcase>`
    if (r.verdict === 'error')
      return `${head}\n    <error message="${escapeXml(r.message ?? 'inconclusive')}" type="inconclusive">${escapeXml(`${r.source}\n${r.message ?? ''}`)}</error>${out}\n  </testcase>`
    if (r.verdict === 'notrun')
      return `${head}\n    <skipped message="${escapeXml(r.message ?? 'not run')}" type="notrun"/>${out}\n  </testcase>`
    if (r.verdict === 'skip')
      return `${head}\n    <skipped message="${escapeXml(r.message ?? 'skipped')}"/>${out}\n  </testcase>`
    return `${head}${out}${out ? '\n  ' : ''}</testcase>`
  })
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escapeXml(suiteName)}" tests="${results.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${time(options.wallMs)}">`,
    `<testsuite name="${escapeXml(suiteName)}" tests="${results.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${time(options.wallMs)}">`,
    ...cases,
    '</testsuite>',
    '</testsuites>',
    '',
  ].join('\n')
}
