import type { CheckResult } from '../harness/types.ts'
import type { GateVerdict } from '../gate.ts'
import { countsLine, countVerdicts, groupByCause, groupChecks } from './summary.ts'
import { markdownThreats, threatTable } from './threats.ts'
import { markdownCell } from './escape.ts'
import { plural } from './words.ts'

/**
 * The verdict before a group's cause, unless the cause already begins with it (an inconclusive
 * check's message is "inconclusive: …": it was printed "inconclusive: inconclusive: …").
 */
const verdictWord = (verdict: string, cause: string): string => {
  const word = verdict === 'error' ? 'inconclusive' : verdict
  return cause.toLowerCase().startsWith(`${word}:`) ? '' : `${word}: `
}

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
    `Target \`${target}\`: ${plural(results.length, 'check')}, ${countsLine(c)}.`,
    '',
  ]
  const groups = groupByCause(results).filter((g) => g.results.length > 1)
  if (groups.length > 0) {
    lines.push('Causes shared by several checks:', '')
    for (const g of groups)
      lines.push(
        `- ${verdictWord(g.verdict, g.cause)}${markdownCell(g.cause)}: ${markdownCell(groupChecks(g))}`,
      )
    lines.push('')
  }
  const order = ['fail', 'error', 'notrun', 'warn', 'info', 'skip']
  const notPassed = results
    .filter((r) => r.verdict !== 'pass')
    .sort((a, b) => order.indexOf(a.verdict) - order.indexOf(b.verdict))
  if (notPassed.length > 0) {
    lines.push('| check | level | verdict | why |', '|---|---|---|---|')
    for (const r of notPassed)
      lines.push(
        `| ${r.id} ${markdownCell(r.title)} | ${r.level} | ${r.verdict === 'notrun' ? 'not run' : r.verdict} | ${[r.message ?? '', ...(r.more ?? []).map((m) => `also: ${m}`)].map(markdownCell).join('<br>')} |`,
      )
    lines.push('')
  }
  const threats = threatTable(results)
  if (threats) lines.push(markdownThreats(threats))
  if (verdict.excused.length > 0)
    lines.push('Known failures:', '', ...verdict.excused.map((e) => `- ${markdownCell(e)}`), '')
  if (verdict.unused.length > 0)
    lines.push(
      'Unused known-failures entries:',
      '',
      ...verdict.unused.map((e) => `- ${markdownCell(e)}`),
      '',
    )
  if (verdict.problems.length > 0)
    lines.push(
      'What fails the run:',
      '',
      ...verdict.problems.map((p) => `- ${markdownCell(p)}`),
      '',
    )
  return lines.join('\n')
}
