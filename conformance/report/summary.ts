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
  /** The gravest verdict in the group (fail, then error, then warn). */
  readonly verdict: Verdict
  /** How many of the group's checks have each verdict (a MUST failing and its SHOULD twin). */
  readonly counts: Partial<Record<Verdict, number>>
  readonly results: readonly CheckResult[]
}

const GRAVITY: Partial<Record<Verdict, number>> = { fail: 0, error: 1, warn: 2 }

/**
 * A path segment that names one interaction, session or object rather than a page: a number, a
 * UUID, or a token-like run (a digit in 8 or more characters, or mixed case in 16 or more, as a
 * nanoid or a ticket has), never a word such as `password` or `openid-configuration`.
 */
const VOLATILE_SEGMENT = (segment: string): boolean =>
  /^\d+$/.test(segment) ||
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(segment) ||
  (/^[A-Za-z0-9_-]+$/.test(segment) &&
    ((segment.length >= 8 && /\d/.test(segment)) ||
      (segment.length >= 16 && /[a-z]/.test(segment) && /[A-Z]/.test(segment))))

/** A path with its id segments left out. */
const stablePath = (path: string): string =>
  path
    .split('/')
    .map((segment) => (VOLATILE_SEGMENT(segment) ? '…' : segment))
    .join('/')

/** A query (`?…`, or empty) with its values left out: `?ticket=…`. */
const stableQuery = (search: string): string => {
  const keys = [...new Set(new URLSearchParams(search).keys())].map((k) => `${k}=…`).join('&')
  return keys ? `?${keys}` : ''
}

/**
 * A fragment (`#…`, or empty) with its volatile parts left out as a URL's are: a script page's
 * route keeps its path and its query's names (`#/choose?uid=…`), a client's fragment its names
 * (`#access_token=…`).
 */
const stableFragment = (hash: string): string => {
  if (!hash || hash === '#') return ''
  const fragment = hash.slice(1)
  const at = fragment.indexOf('?')
  const route = at < 0 ? fragment : fragment.slice(0, at)
  if (route.includes('=')) return `#${stableQuery(fragment).slice(1)}`
  return `#${stablePath(route)}${at < 0 ? '' : stableQuery(fragment.slice(at))}`
}

/**
 * The cause with the parts that differ from one check to the next left out, so that the same
 * page or answer is one cause: in each URL the query's values (`?ticket=…`), the path segments
 * that are ids (`/signin/…/password`) and the same in the fragment (`#/choose?uid=…`), and
 * durations (`… ms`). Blind round 3:
 * 27 checks stuck at one login page, each message with its own `?ticket=<uid>`, were 27 causes.
 */
export function causeKey(cause: string): string {
  return cause
    .replace(/https?:\/\/[^\s"'<>()]+/g, (url) => {
      const trail = /[.,;:]+$/.exec(url)?.[0] ?? ''
      const bare = trail ? url.slice(0, -trail.length) : url
      let u: URL
      try {
        u = new URL(bare)
      } catch {
        return url
      }
      return `${u.origin}${stablePath(u.pathname)}${stableQuery(u.search)}${stableFragment(u.hash)}${trail}`
    })
    .replace(/\b\d+ ?ms\b/g, '… ms')
}

/**
 * Failures, warnings and inconclusive checks grouped by what they come down to (the same
 * request answered the same way, the same failing control), whatever their level: a MUST check
 * that fails and a SHOULD check that warns on one answer are one group, counted per verdict.
 * Gravest group first, then the largest, then in run order. A check without a shared cause is a
 * group of one, under its own message.
 */
export function groupByCause(results: readonly CheckResult[]): CauseGroup[] {
  const groups = new Map<
    string,
    {
      cause: string
      verdict: Verdict
      counts: Partial<Record<Verdict, number>>
      results: CheckResult[]
    }
  >()
  for (const r of results) {
    if (GRAVITY[r.verdict] === undefined) continue
    const cause = r.cause ?? r.message ?? r.id
    // grouped by the cause without its volatile parts; told with them while only one text is
    // in the group, and without once several are (no one check's ticket stands for all)
    const key = causeKey(cause)
    const group = groups.get(key) ?? { cause, verdict: r.verdict, counts: {}, results: [] }
    if (group.cause !== cause) group.cause = key
    group.results.push(r)
    group.counts[r.verdict] = (group.counts[r.verdict] ?? 0) + 1
    if ((GRAVITY[r.verdict] ?? 9) < (GRAVITY[group.verdict] ?? 9)) group.verdict = r.verdict
    groups.set(key, group)
  }
  return [...groups.values()].sort(
    (a, b) =>
      (GRAVITY[a.verdict] ?? 9) - (GRAVITY[b.verdict] ?? 9) || b.results.length - a.results.length,
  )
}

const WORD: Partial<Record<Verdict, string>> = { fail: 'FAIL', error: 'ERROR', warn: 'WARN' }

/**
 * A group's checks by verdict, gravest first: "UI-01" for one check, "3 checks: 2 FAIL (UI-01,
 * TOK-02), 1 WARN (UI-11)" for several.
 */
export function groupChecks(g: CauseGroup): string {
  if (g.results.length === 1) return g.results[0]?.id ?? ''
  const parts = (['fail', 'error', 'warn'] as const)
    .filter((v) => g.counts[v])
    .map(
      (v) =>
        `${g.counts[v]} ${WORD[v]} (${g.results
          .filter((r) => r.verdict === v)
          .map((r) => r.id)
          .join(', ')})`,
    )
  return `${g.results.length} checks: ${parts.join(', ')}`
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
