import type { CheckResult, Verdict } from '../harness/types.ts'

export type Counts = Record<Verdict, number>

export const countVerdicts = (results: readonly CheckResult[]): Counts => {
  const counts: Counts = { pass: 0, fail: 0, warn: 0, info: 0, skip: 0, error: 0, notrun: 0 }
  for (const r of results) counts[r.verdict]++
  return counts
}

/**
 * The counts in words, in one order everywhere: "3 passed, 1 failed, 1 inconclusive, …"; the
 * checks a stopped run did not run to their end are named only when there are any.
 */
export const countsLine = (c: Counts): string =>
  `${c.pass} passed, ${c.fail} failed, ${c.error} inconclusive (error), ${c.warn} warned, ${c.info} info, ${c.skip} skipped${c.notrun > 0 ? `, ${c.notrun} not run` : ''}`

/** Checks that did not pass and share one cause. */
export interface CauseGroup {
  readonly cause: string
  readonly verdict: Verdict
  readonly results: readonly CheckResult[]
}

/**
 * Failures, warnings and inconclusive checks grouped by what they come down to (the same
 * request answered the same way, the same failing control): largest group first, then in
 * run order. A check without a shared cause is a group of one, under its own message.
 */
export function groupByCause(results: readonly CheckResult[]): CauseGroup[] {
  const groups = new Map<string, { cause: string; verdict: Verdict; results: CheckResult[] }>()
  for (const r of results) {
    if (r.verdict !== 'fail' && r.verdict !== 'warn' && r.verdict !== 'error') continue
    const cause = r.cause ?? r.message ?? r.id
    const key = `${r.verdict}\u0000${cause}`
    const group = groups.get(key) ?? { cause, verdict: r.verdict, results: [] }
    group.results.push(r)
    groups.set(key, group)
  }
  const rank: Partial<Record<Verdict, number>> = { fail: 0, error: 1, warn: 2 }
  return [...groups.values()].sort(
    (a, b) =>
      (rank[a.verdict] ?? 9) - (rank[b.verdict] ?? 9) || b.results.length - a.results.length,
  )
}

/**
 * Where a run's time went: the slowest checks and the time per area (the sum of the checks'
 * durations, which exceeds the wall time when checks ran in parallel), slowest first.
 */
export function timing(
  results: readonly CheckResult[],
  slowest = 10,
): {
  slowest: { id: string; title: string; durationMs: number }[]
  areas: { area: string; durationMs: number; checks: number }[]
} {
  const areas = new Map<string, { durationMs: number; checks: number }>()
  for (const r of results) {
    const a = areas.get(r.area) ?? { durationMs: 0, checks: 0 }
    a.durationMs += r.durationMs
    a.checks++
    areas.set(r.area, a)
  }
  return {
    slowest: [...results]
      .sort((a, b) => b.durationMs - a.durationMs)
      .slice(0, slowest)
      .map((r) => ({ id: r.id, title: r.title, durationMs: r.durationMs })),
    areas: [...areas]
      .map(([area, a]) => ({ area, ...a }))
      .sort((a, b) => b.durationMs - a.durationMs),
  }
}
