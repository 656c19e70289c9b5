import type { Level } from '../catalogue/requirement.ts'

/** The verdict a check must reach against a target broken in its property, by level. */
export const FAILED_VERDICT: Record<Level, string> = { MUST: 'fail', SHOULD: 'warn', MAY: 'info' }

/**
 * Messages of failures that are not a check's assertion: the harness or the browser could not
 * drive the target, or the check's code crashed. Such a failure never proves a check, even when
 * the sabotage's pattern happens to match it.
 */
export const NOT_AN_ASSERTION: readonly RegExp[] = [
  /\btimed out after \d+ ?ms\b/i,
  /\bTimeout \d+ms exceeded\b/,
  /browserType\.launch|Executable doesn't exist|Failed to launch/,
  /Target (page, context or browser )?(has been )?closed|browser has disconnected/i,
  /^fetch failed\b/,
  /\b(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT)\b|socket hang up/,
  // JavaScript errors of the check itself
  /Cannot read propert(y|ies) of (undefined|null)|is not a function|is not defined|is not iterable|Cannot destructure/,
  /^Maximum call stack size exceeded/,
]

/** What the self-test saw of one check run. */
export interface Observed {
  readonly verdict: string
  readonly message: string | undefined
}

/**
 * Whether a check's run against a sabotaged target proves the check: it reached the failed
 * verdict of its level, and by its own assertion (the message matches the sabotage's pattern
 * and is no harness failure). Returns the reasons it does not; none means proven.
 */
export function judge(observed: Observed, level: Level, expect: RegExp): string[] {
  const problems: string[] = []
  const wanted = FAILED_VERDICT[level]
  if (observed.verdict !== wanted)
    problems.push(`verdict ${observed.verdict}, expected ${wanted} (a ${level} check)`)
  const message = observed.message ?? ''
  if (message === '') problems.push('no failure message')
  const crash = NOT_AN_ASSERTION.find((p) => p.test(message))
  if (crash) problems.push(`the failure is not an assertion of the check (matches ${crash})`)
  // a fresh RegExp: a /g or /y pattern would carry lastIndex from one test to the next
  if (!new RegExp(expect.source, expect.flags.replace(/[gy]/g, '')).test(message))
    problems.push(`the message does not match the expected assertion ${expect}`)
  return problems
}
