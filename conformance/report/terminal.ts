import type { CheckResult, Verdict } from '../harness/types.ts'
import { countsLine, countVerdicts, groupByCause, groupChecks, timing } from './summary.ts'
import { formatThreats, threatTable } from './threats.ts'
import { plural } from './words.ts'

const LABEL: Record<Verdict, string> = {
  pass: 'PASS',
  fail: 'FAIL',
  warn: 'WARN',
  info: 'INFO',
  skip: 'SKIP',
  error: 'ERROR',
  notrun: 'NOT RUN',
}
const COLOR: Record<Verdict, string> = {
  pass: '32',
  fail: '31',
  warn: '33',
  info: '36',
  skip: '90',
  error: '35',
  notrun: '90',
}

/** Colour only on a TTY, and never when NO_COLOR is set (https://no-color.org). */
export const useColor = (
  stream: { isTTY?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): boolean => Boolean(stream.isTTY) && !env.NO_COLOR

/** One line per finished check: verdict, ID, level, title, and why when it did not pass. */
export function formatResultLine(r: CheckResult, color: boolean): string {
  const label = color ? `\x1b[${COLOR[r.verdict]}m${LABEL[r.verdict]}\x1b[0m` : LABEL[r.verdict]
  const why = [r.message, ...(r.more ?? []).map((m) => `also: ${m}`)]
    .filter((m): m is string => Boolean(m))
    .map((m) => `\n       ${m.split('\n').join('\n       ')}`)
    .join('')
  return `${label} ${r.id} [${r.level}] ${r.title} (${r.durationMs} ms)${why}`
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/** The slowest checks and the time per area (sums of check durations). */
export function formatTiming(results: readonly CheckResult[]): string {
  const t = timing(results, 5)
  return [
    'Slowest checks:',
    ...t.slowest.map((s) => `  ${s.id.padEnd(20)} ${seconds(s.durationMs)}`),
    'Time per area (sum of check durations; parallel checks overlap):',
    ...t.areas.map(
      (a) => `  ${a.area.padEnd(20)} ${seconds(a.durationMs)} in ${plural(a.checks, 'check')}`,
    ),
  ].join('\n')
}

/**
 * The closing summary: totals by area and level, what did not pass grouped by cause (one line
 * per cause), and the run's elapsed time when given.
 */
export function formatSummary(results: readonly CheckResult[], elapsedMs?: number): string {
  const lines: string[] = ['', 'Summary by area:']
  const areas = [...new Set(results.map((r) => r.area))]
  for (const area of areas) {
    const c = countVerdicts(results.filter((r) => r.area === area))
    lines.push(`  ${area.padEnd(20)} ${countsLine(c)}`)
  }
  lines.push('Summary by level:')
  for (const level of ['MUST', 'SHOULD', 'MAY'] as const) {
    const c = countVerdicts(results.filter((r) => r.level === level))
    const n = results.filter((r) => r.level === level).length
    if (n > 0)
      lines.push(
        `  ${level.padEnd(20)} ${c.pass}/${n} passed, ${c.fail + c.warn + c.info} not met, ${c.error} inconclusive, ${c.skip} skipped${c.notrun > 0 ? `, ${c.notrun} not run` : ''}`,
      )
  }
  const groups = groupByCause(results)
  if (groups.length > 0) {
    lines.push('Not passed, by cause:')
    for (const g of groups)
      lines.push(
        g.results.length === 1
          ? `  ${LABEL[g.verdict]} ${groupChecks(g)}: ${g.cause}`
          : `  ${LABEL[g.verdict]} ${g.cause}: ${groupChecks(g)}`,
      )
  }
  const threats = threatTable(results)
  if (threats) lines.push(formatThreats(threats))
  lines.push(formatTiming(results))
  const c = countVerdicts(results)
  const elapsed = elapsedMs === undefined ? '' : ` in ${(elapsedMs / 1000).toFixed(1)} s`
  lines.push('', `${plural(results.length, 'check')}${elapsed}: ${countsLine(c)}`)
  return lines.join('\n')
}
