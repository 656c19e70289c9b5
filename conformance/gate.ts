import { readFileSync } from 'node:fs'
import type { CheckResult } from './harness/types.ts'
import { UsageError } from './target-config.ts'

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
  /** Skipped checks are allowed (otherwise they fail the run: a coverage gate). */
  readonly allowSkips: boolean
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
}

const notMet = (r: CheckResult, strict: boolean): boolean =>
  r.verdict === 'fail' || (strict && r.verdict === 'warn')

/**
 * The run's verdict: every MUST check passed (and every SHOULD with `strict`), except failures
 * listed as known and not expired; a listed check that now passes is a stale entry and fails
 * the run, as does an expired entry; skipped checks fail it unless allowed.
 */
export function gate(results: readonly CheckResult[], options: GateOptions): GateVerdict {
  const problems: string[] = []
  const excused: string[] = []
  const known = new Map(options.knownFailures.map((k) => [k.id, k]))
  const day = options.today.toISOString().slice(0, 10)
  for (const r of results) {
    const entry = known.get(r.id)
    if (entry && entry.expires < day) {
      problems.push(`${r.id}: known-failure entry expired on ${entry.expires} (${entry.reason})`)
      continue
    }
    if (notMet(r, options.strict)) {
      if (entry) excused.push(`${r.id}: ${entry.reason} (until ${entry.expires})`)
      else problems.push(`${r.id} [${r.level}] ${r.verdict}: ${r.message ?? ''}`)
    } else if (entry && r.verdict === 'pass') {
      problems.push(`${r.id}: listed as a known failure but now passes; remove the stale entry`)
    } else if (r.verdict === 'skip' && !options.allowSkips) {
      problems.push(
        `${r.id}: skipped (${r.message ?? 'no reason'}); pass --allow-skips to accept skipped checks`,
      )
    }
  }
  return { passed: problems.length === 0, problems, excused }
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
