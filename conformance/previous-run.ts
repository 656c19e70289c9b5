import { readFileSync } from 'node:fs'
import { UsageError } from './usage-error.ts'

/** What a run reads of an earlier run's report.json: its checks' verdicts and durations. */
interface EarlierReport {
  readonly target?: { readonly baseUrl?: unknown; readonly embedded?: unknown }
  readonly startedAt?: unknown
  readonly finishedAt?: unknown
  readonly checks?: readonly { id?: unknown; verdict?: unknown; durationMs?: unknown }[]
}

function readReport(file: string): EarlierReport {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`)
  }
  let report: unknown
  try {
    report = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`)
  }
  const checks = (report as EarlierReport | null)?.checks
  if (!Array.isArray(checks))
    throw new UsageError(`${file} is not a report.json of idp-conformance (no "checks" array)`)
  return report as EarlierReport
}

/** `--rerun-failed [report.json]` with no file: the report a run with --report-dir reports wrote. */
export const DEFAULT_RERUN_REPORT = 'reports/report.json'

/**
 * The checks that failed or were inconclusive (ERROR) in an earlier run's report.json, in its
 * order: what `--rerun-failed` runs again. A file that cannot be read or is not such a report is
 * a usage error.
 */
export function failedChecks(file: string): string[] {
  return (readReport(file).checks ?? []).flatMap((c) =>
    typeof c.id === 'string' && (c.verdict === 'fail' || c.verdict === 'error') ? [c.id] : [],
  )
}

/** An earlier run's durations, for the progress line's estimate of the time left. */
export interface Recorded {
  /** Each check's duration, ms. */
  readonly durations: ReadonlyMap<string, number>
  /** Wall time over the sum of the checks' durations: how much the run ran in parallel. */
  readonly ratio: number
}

/**
 * The durations an earlier report.json recorded, when it exists and was a run against the same
 * target (the embedded server, or the same base URL): undefined otherwise, or when it cannot be
 * read, which only costs the estimate its head start.
 */
export function recordedDurations(
  file: string,
  target: { readonly baseUrl: string; readonly embedded: boolean },
): Recorded | undefined {
  let report: EarlierReport
  try {
    report = readReport(file)
  } catch {
    return undefined
  }
  const same = target.embedded
    ? report.target?.embedded === true
    : report.target?.embedded === false && report.target.baseUrl === target.baseUrl
  if (!same) return undefined
  const durations = new Map<string, number>()
  for (const c of report.checks ?? [])
    if (typeof c.id === 'string' && typeof c.durationMs === 'number' && c.verdict !== 'notrun')
      durations.set(c.id, c.durationMs)
  const sum = [...durations.values()].reduce((a, b) => a + b, 0)
  const wall =
    typeof report.startedAt === 'string' && typeof report.finishedAt === 'string'
      ? Date.parse(report.finishedAt) - Date.parse(report.startedAt)
      : NaN
  if (durations.size === 0 || !(sum > 0) || !(wall > 0)) return undefined
  return { durations, ratio: wall / sum }
}
