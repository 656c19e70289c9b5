import type { CheckResult } from '../harness/types.ts'
import type { GateVerdict } from '../gate.ts'
import { countVerdicts } from './summary.ts'
import { markdownThreats, threatTable } from './threats.ts'

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ')

/** A Markdown summary for a CI job summary: totals, verdict, and every check that did not pass. */
export function markdownSummary(
  results: readonly CheckResult[],
  verdict: GateVerdict,
  target: string,
): string {
  const c = countVerdicts(results)
  const lines = [
    `## Conformance: ${verdict.passed ? 'passed' : 'FAILED'}`,
    '',
    `Target \`${target}\`: ${results.length} checks, ${c.pass} passed, ${c.fail} failed, ${c.warn} warned, ${c.info} info, ${c.skip} skipped.`,
    '',
  ]
  const notPassed = results.filter((r) => r.verdict !== 'pass')
  if (notPassed.length > 0) {
    lines.push('| check | level | verdict | why |', '|---|---|---|---|')
    for (const r of notPassed)
      lines.push(
        `| ${r.id} ${cell(r.title)} | ${r.level} | ${r.verdict} | ${cell(r.message ?? '')} |`,
      )
    lines.push('')
  }
  const threats = threatTable(results)
  if (threats) lines.push(markdownThreats(threats))
  if (verdict.excused.length > 0)
    lines.push('Known failures:', '', ...verdict.excused.map((e) => `- ${cell(e)}`), '')
  if (verdict.problems.length > 0)
    lines.push('What fails the run:', '', ...verdict.problems.map((p) => `- ${cell(p)}`), '')
  return lines.join('\n')
}
