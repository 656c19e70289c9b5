import type { Level } from '../catalogue/requirement.ts'

/**
 * pass; fail (MUST not met); warn (SHOULD not met); info (MAY, recorded); skip (could not run);
 * error (inconclusive: the harness could not drive the target, a timeout, a navigation or
 * network error, a control that failed; never a conformance failure); notrun (the run was
 * stopped, by a signal or its --run-timeout, before the check began or while it ran: nothing
 * is known of it, and the run is incomplete).
 */
export type Verdict = 'pass' | 'fail' | 'warn' | 'info' | 'skip' | 'error' | 'notrun'

/** Every verdict, in the order reports show them. */
export const VERDICTS: readonly Verdict[] = [
  'fail',
  'error',
  'notrun',
  'warn',
  'info',
  'skip',
  'pass',
]

/** Why a failure says nothing about the check's subject (CheckResult.aside). */
export type Aside = 'precondition' | 'refused'

/**
 * CheckResult.subjects' name for a failure whose expectation names no part of the check's
 * subject: it may be about any of them, so it counts against every threat behind the check.
 */
export const WHOLE_SUBJECT = '*'

/** One HTTP exchange, secrets and tokens redacted. */
export interface Exchange {
  readonly method: string
  readonly url: string
  readonly requestHeaders: Readonly<Record<string, string>>
  readonly requestBody: string | undefined
  readonly status: number | undefined
  readonly responseHeaders: Readonly<Record<string, string>>
  readonly responseBody: string | undefined
  /** Set when no response came (connection refused, TLS failure, …). */
  readonly error: string | undefined
  readonly durationMs: number
}

export interface CheckResult {
  readonly id: string
  readonly title: string
  readonly level: Level
  readonly source: string
  readonly area: string
  readonly verdict: Verdict
  /** Why it failed, warned, was skipped or was inconclusive. */
  readonly message: string | undefined
  /**
   * What the failure comes down to, the same for checks that fail for one reason (the same
   * request answered the same way, the same failing control): reports group by it.
   */
  readonly cause?: string | undefined
  /**
   * Set when the headline failure is not about what the check is for: 'precondition' (a step the
   * check needed first failed: a genuine token refused, a revocation answered in the wrong
   * shape), or 'refused' (the target refused the request the check plays, only not with the
   * status, code or page the standard names). The verdict stands; the threat table does not
   * count such a failure as a threat left open (report/threats.ts).
   */
  readonly aside?: Aside | undefined
  /**
   * Set on a failed check some of whose expectations name the part of its subject they are
   * about (expect.ts `on`, a sub-case's `subject`): the parts its failures that are not aside
   * are about, WHOLE_SUBJECT for a failure without a name. The threat table counts the failure
   * against a threat only when one of them is a part that threat is about (threats.ts `parts`).
   */
  readonly subjects?: readonly string[] | undefined
  /** Deviations found after the first (sub-cases independent of the headline). */
  readonly more?: readonly string[] | undefined
  /** Observations that do not change the verdict (SHOULD-level notes, measured values). */
  readonly notes: readonly string[]
  readonly exchanges: readonly Exchange[]
  /** PNG screenshots, base64. */
  readonly screenshots: readonly { name: string; png: string }[]
  readonly durationMs: number
}
