import type { CheckResult } from '../harness/types.ts'
import { countVerdicts } from './summary.ts'

/** Bumped on any incompatible change of the report's shape. */
export const REPORT_SCHEMA_VERSION = 1

export interface RunReport {
  readonly schemaVersion: typeof REPORT_SCHEMA_VERSION
  readonly suite: { readonly name: string; readonly version: string }
  readonly target: { readonly baseUrl: string; readonly embedded: boolean }
  readonly startedAt: string
  readonly finishedAt: string
  readonly passed: boolean
  readonly counts: ReturnType<typeof countVerdicts>
  readonly checks: readonly CheckResult[]
}

export function buildReport(options: {
  results: readonly CheckResult[]
  target: { baseUrl: string; embedded: boolean }
  version: string
  startedAt: Date
  finishedAt: Date
  /** The run's verdict, known failures and the coverage gate included. */
  passed: boolean
}): RunReport {
  return {
    schemaVersion: REPORT_SCHEMA_VERSION,
    suite: { name: 'idp-conformance', version: options.version },
    target: options.target,
    startedAt: options.startedAt.toISOString(),
    finishedAt: options.finishedAt.toISOString(),
    passed: options.passed,
    counts: countVerdicts(options.results),
    checks: options.results,
  }
}
