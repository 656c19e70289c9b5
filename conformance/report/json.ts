import type { RunSpeed } from '../harness/pace.ts'
import type { CheckResult } from '../harness/types.ts'
import { countVerdicts } from './summary.ts'
import { threatTable, type ThreatRow } from './threats.ts'

/**
 * Bumped on any incompatible change of the report's shape. 2: a threat's status 'untested' is
 * now 'not shown' (it also covers failures aside from a check's subject, `checks[].aside`).
 */
export const REPORT_SCHEMA_VERSION = 2

export interface RunReport {
  readonly schemaVersion: typeof REPORT_SCHEMA_VERSION
  readonly suite: { readonly name: string; readonly version: string }
  readonly target: { readonly baseUrl: string; readonly embedded: boolean }
  readonly startedAt: string
  readonly finishedAt: string
  readonly passed: boolean
  readonly counts: ReturnType<typeof countVerdicts>
  readonly checks: readonly CheckResult[]
  /** Why the run was stopped before its end (a signal, --run-timeout); absent for a whole run. */
  readonly stopped?: string
  /** The security profile's threat table; absent when the run checked nothing of the profile. */
  readonly threats?: readonly ThreatRow[]
  /**
   * The run's measured speed (pace.ts): its browser rounds, their median, the nominal round and
   * the scale by which the default check limit was raised (or not: `scaled` false with
   * --check-timeout), and the preflight's sign-in that stood for the rounds until the first
   * (`seed`). Absent when the run timed nothing (it stopped before its checks ran).
   */
  readonly speed?: RunSpeed
}

export function buildReport(options: {
  results: readonly CheckResult[]
  target: { baseUrl: string; embedded: boolean }
  version: string
  startedAt: Date
  finishedAt: Date
  /** The run's verdict, known failures and the coverage gate included. */
  passed: boolean
  /** Why the run was stopped before its end, when it was. */
  stopped?: string | undefined
  /** The run's measured speed, when its checks ran. */
  speed?: RunSpeed | undefined
}): RunReport {
  const threats = threatTable(options.results)
  return {
    schemaVersion: REPORT_SCHEMA_VERSION,
    suite: { name: 'idp-conformance', version: options.version },
    target: options.target,
    startedAt: options.startedAt.toISOString(),
    finishedAt: options.finishedAt.toISOString(),
    passed: options.passed,
    counts: countVerdicts(options.results),
    checks: options.results,
    ...(options.stopped ? { stopped: options.stopped } : {}),
    ...(threats ? { threats } : {}),
    ...(options.speed ? { speed: options.speed } : {}),
  }
}
