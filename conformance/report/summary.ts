import type { CheckResult, Verdict } from '../harness/types.ts'

export type Counts = Record<Verdict, number>

export const countVerdicts = (results: readonly CheckResult[]): Counts => {
  const counts: Counts = { pass: 0, fail: 0, warn: 0, info: 0, skip: 0 }
  for (const r of results) counts[r.verdict]++
  return counts
}
