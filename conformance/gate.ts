import { readFileSync } from 'node:fs'
import type { CheckResult } from './harness/types.ts'
import { UsageError } from './usage-error.ts'
import { plural } from './report/words.ts'
import { idGlob } from './id-glob.ts'

/** An accepted failure: the check may fail until `expires` without failing the run. */
export interface KnownFailure {
  readonly id: string
  readonly reason: string
  /** ISO date (YYYY-MM-DD) after which the entry no longer excuses anything. */
  readonly expires: string
}

export interface GateOptions {
  /** SHOULD-level warnings fail the run too. */
  readonly strict: boolean
  /**
   * Checks whose warning fails the run although `strict` is off, each with why: the security
   * profile's gate (threats.ts, gatedShoulds).
   */
  readonly raised?: ReadonlyMap<string, string>
  /** Skipped checks are allowed (otherwise they fail the run: a coverage gate). */
  readonly allowSkips: boolean
  /** Inconclusive (ERROR) checks are allowed (otherwise they fail the run, like skips). */
  readonly allowErrors?: boolean
  /**
   * Every check ID that exists; a known-failures entry naming another is a typo that would
   * excuse nothing, and fails the run. Omitted, entries are not checked against it.
   */
  readonly knownIds?: ReadonlySet<string>
  readonly knownFailures: readonly KnownFailure[]
  readonly today: Date
}

/** Why the run passed or failed, check by check. */
export interface GateVerdict {
  readonly passed: boolean
  /** One line per problem that fails the run. */
  readonly problems: readonly string[]
  /** Failures excused by a known-failures entry. */
  readonly excused: readonly string[]
  /** Known-failures entries for checks this run did not select (they excused nothing). */
  readonly unused: readonly string[]
}

const notMet = (r: CheckResult, options: GateOptions): boolean =>
  r.verdict === 'fail' ||
  (r.verdict === 'warn' && (options.strict || raisedWhy(r, options) !== undefined))

/** Why a warning of this check fails the run without --strict, if it does. */
const raisedWhy = (r: CheckResult, options: GateOptions): string | undefined =>
  r.level === 'SHOULD' ? options.raised?.get(r.id) : undefined

/**
 * The run's verdict: every MUST check passed (and every SHOULD with `strict`), except failures
 * listed as known and not expired; a listed check that now passes is a stale entry and fails
 * the run, as does an expired entry or one naming a check that does not exist; skipped and
 * inconclusive (ERROR) checks fail it unless allowed; a check not run (a stopped run) always
 * fails it. Failures that share a cause are one
 * problem line: "cause: N checks (IDs)".
 */
export function gate(results: readonly CheckResult[], options: GateOptions): GateVerdict {
  const problems: string[] = []
  const excused: string[] = []
  const unused: string[] = []
  const known = new Map(options.knownFailures.map((k) => [k.id, k]))
  const day = options.today.toISOString().slice(0, 10)
  const ran = new Set(results.map((r) => r.id))
  for (const entry of options.knownFailures) {
    if (options.knownIds && !options.knownIds.has(entry.id))
      problems.push(
        `known-failures entry ${entry.id}: no check has this ID (a typo excuses nothing)`,
      )
    else if (!ran.has(entry.id))
      unused.push(`${entry.id}: not selected in this run, so the entry excused nothing`)
  }
  const byCause = new Map<string, CheckResult[]>()
  const failed = (r: CheckResult): void => {
    const key = `${r.verdict}\u0000${r.cause ?? `${r.id}: ${r.message ?? ''}`}`
    byCause.set(key, [...(byCause.get(key) ?? []), r])
  }
  // checks a stopped run did not run to their end: the run is incomplete whatever else it found
  const notRun = new Map<string, string[]>()
  for (const r of results) {
    if (r.verdict === 'notrun') {
      const why = r.message ?? 'not run'
      notRun.set(why, [...(notRun.get(why) ?? []), r.id])
      continue
    }
    const entry = known.get(r.id)
    if (entry && entry.expires < day) {
      problems.push(`${r.id}: known-failure entry expired on ${entry.expires} (${entry.reason})`)
      continue
    }
    if (notMet(r, options)) {
      if (entry) excused.push(`${r.id}: ${entry.reason} (until ${entry.expires})`)
      else failed(r)
    } else if (entry && r.verdict === 'pass') {
      problems.push(`${r.id}: listed as a known failure but now passes; remove the stale entry`)
    } else if (r.verdict === 'error' && !options.allowErrors) {
      failed(r)
    } else if (r.verdict === 'skip' && !options.allowSkips) {
      problems.push(
        `${r.id}: skipped (${r.message ?? 'no reason'}); pass --allow-skips to accept skipped checks`,
      )
    }
  }
  const causeLines = [...byCause.values()].map((group) => {
    const [first] = group as [CheckResult, ...CheckResult[]]
    const verdict = first.verdict === 'error' ? 'inconclusive (ERROR)' : first.verdict
    // a warning that fails the run only by the security gate says which harm it would ship
    const raised = (r: CheckResult): string | undefined =>
      options.strict ? undefined : raisedWhy(r, options)
    const held = (r: CheckResult): string =>
      raised(r) ? `, held at MUST by the security profile for ${raised(r)}` : ''
    if (group.length === 1)
      return `${first.id} [${first.level}] ${verdict}${held(first)}: ${first.message ?? first.cause ?? ''}`
    const heldIds = group.filter((r) => raised(r)).map((r) => r.id)
    const heldNote = heldIds.length
      ? ` (${heldIds.join(', ')} held at MUST by the security profile)`
      : ''
    return `${first.cause ?? ''}: ${group.length} checks ${verdict}${heldNote} (${group.map((r) => r.id).join(', ')})`
  })
  problems.unshift(...causeLines)
  for (const [why, ids] of notRun)
    problems.push(
      `${plural(ids.length, 'check')} ${why} (${ids.join(', ')}): the run is incomplete`,
    )
  return { passed: problems.length === 0, problems, excused, unused }
}

/** Reads a known-failures file: a JSON array of {id, reason, expires}. */
export function loadKnownFailures(path: string): KnownFailure[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new UsageError(`cannot read known-failures file ${path}: ${(err as Error).message}`)
  }
  if (!Array.isArray(parsed))
    throw new UsageError(`known-failures file ${path} must hold a JSON array`)
  return parsed.map((e: unknown, i) => {
    const entry = e as Partial<Record<keyof KnownFailure, unknown>>
    const ok =
      typeof entry.id === 'string' &&
      typeof entry.reason === 'string' &&
      entry.reason.trim() !== '' &&
      typeof entry.expires === 'string' &&
      /^\d{4}-\d{2}-\d{2}$/.test(entry.expires)
    if (!ok)
      throw new UsageError(
        `known-failures file ${path}, entry ${i}: needs id, a non-empty reason and expires as YYYY-MM-DD`,
      )
    return {
      id: entry.id as string,
      reason: entry.reason as string,
      expires: entry.expires as string,
    }
  })
}

/**
 * The entries of a known-failures file, checked against the catalogue before the run (issue
 * 32): each names one check that exists (a typo would excuse nothing; a pattern is not an
 * ID), once, with a real calendar date that has not passed. Every problem is one line of one
 * usage error, so a broken file is reported once, whole, and no check runs.
 */
export function checkKnownFailures(
  entries: readonly KnownFailure[],
  options: { path: string; knownIds: readonly string[]; today: Date },
): KnownFailure[] {
  const known = new Set(options.knownIds)
  const day = options.today.toISOString().slice(0, 10)
  const problems: string[] = []
  const seen = new Set<string>()
  entries.forEach((entry, i) => {
    const at = `entry ${i} (${entry.id})`
    if (/[*?]/.test(entry.id)) {
      const glob = idGlob(entry.id)
      const matched = options.knownIds.filter((id) => glob.test(id))
      problems.push(
        `${at}: a pattern, not a check ID; an entry names one check${matched.length ? ` (it would match ${matched.slice(0, 8).join(', ')}${matched.length > 8 ? ', …' : ''})` : ' (it matches no check either)'}`,
      )
    } else if (!known.has(entry.id)) {
      const upper = entry.id.toUpperCase()
      problems.push(
        `${at}: no check has this ID${known.has(upper) ? ` (IDs are upper case: ${upper})` : ''}; --list shows them`,
      )
    } else if (seen.has(entry.id)) problems.push(`${at}: listed twice`)
    seen.add(entry.id)
    const date = new Date(`${entry.expires}T00:00:00Z`)
    if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== entry.expires)
      problems.push(`${at}: expires ${entry.expires} is not a calendar date`)
    else if (entry.expires < day)
      problems.push(
        `${at}: expired on ${entry.expires} (${entry.reason}); fix the check's failure, or renew the entry with a later date`,
      )
  })
  if (problems.length > 0)
    throw new UsageError(
      `known-failures file ${options.path}: ${problems.length === 1 ? problems[0] : `${problems.length} problems:\n  ${problems.join('\n  ')}`}`,
    )
  return [...entries]
}
