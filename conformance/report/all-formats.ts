import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { GateVerdict } from '../gate.ts'
import type { RunSpeed } from '../harness/pace.ts'
import type { CheckResult } from '../harness/types.ts'
import type { ConfigNames } from './cause-detail.ts'
import { htmlReport } from './html.ts'
import { buildReport } from './json.ts'
import { junitReport } from './junit.ts'
import { markdownSummary } from './markdown.ts'
import { formatResultLine, formatSummary } from './terminal.ts'

export interface RunInfo {
  readonly target: { readonly baseUrl: string; readonly embedded: boolean }
  readonly version: string
  readonly startedAt: Date
  readonly finishedAt: Date
  readonly verdict: GateVerdict
  /** Why the run was stopped before its end (a signal, --run-timeout), when it was. */
  readonly stopped?: string | undefined
  /** The target configuration's names of its clients and users, for the settings causes name. */
  readonly names?: ConfigNames | undefined
  /** The run's measured speed (runner.ts), when its checks ran. */
  readonly speed?: RunSpeed | undefined
}

/** The files of a report directory (`--report-dir`), by name. */
export function reportFiles(
  results: readonly CheckResult[],
  run: RunInfo,
): Record<'report.json' | 'junit.xml' | 'report.html' | 'summary.md', string> {
  const report = buildReport({
    results,
    target: run.target,
    version: run.version,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    passed: run.verdict.passed,
    stopped: run.stopped,
    speed: run.speed,
  })
  return {
    'report.json': `${JSON.stringify(report, null, 2)}\n`,
    'junit.xml': junitReport(results, {
      wallMs: run.finishedAt.getTime() - run.startedAt.getTime(),
    }),
    'report.html': htmlReport(report, run.names),
    'summary.md': markdownSummary(results, run.verdict, run.target.baseUrl),
  }
}

/** Writes the report directory. */
export function writeReportDir(dir: string, results: readonly CheckResult[], run: RunInfo): void {
  mkdirSync(dir, { recursive: true })
  for (const [name, text] of Object.entries(reportFiles(results, run)))
    writeFileSync(join(dir, name), text)
}

/** What the terminal shows of a run: one line per check, then the summary. */
export function terminalOutput(results: readonly CheckResult[]): string {
  return [...results.map((r) => formatResultLine(r, false)), formatSummary(results)].join('\n')
}
