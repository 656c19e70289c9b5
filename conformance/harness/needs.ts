import type { RequirementId } from '../requirements.ts'
import type { TargetConfig } from './target.ts'

/**
 * What a check needs from the target configuration beyond the main client and the primary
 * user; without it, the check (or, for AUTHZ-04, a part of it) is skipped. (The CC-* checks
 * need no configured scope: without one they ask without scope, and skip only when the
 * server refuses that with invalid_scope, which no configuration can predict.) The CLI reads this
 * before a run to list the skips the configuration will cause, with why; the checks
 * themselves still skip on their own (ctx.skip), so this table only announces.
 */
const NEEDS: Partial<Record<RequirementId, readonly Need[]>> = {
  'AUTHZ-04': ['third'],
  'CODE-06': ['other'],
  'RT-07': ['other'],
  'INTRO-06': ['other'],
  'REV-06': ['other'],
  'RATE-01': ['rateLimitBudget'],
  'RATE-03': ['rateLimitBudget'],
  'RATE-05': ['rateLimitBudget'],
  'SEC-11': ['sessionLifetime'],
}

/**
 * The checks that run only against the embedded reference server, each with why: a run against
 * a deployment lists them as "embedded only" and does not count them as skipped. Kept here, as
 * data, so that `--list` and the run's header need not load the checks; each check states the
 * same text in its `embeddedOnly` option, and registering one whose text differs from this
 * table throws (harness/check.ts), so the two cannot drift apart.
 */
const EMBEDDED_ONLY: Partial<Record<RequirementId, string>> = {
  'CODE-07': 'code expiry needs clock control (embedded target); waiting 10 min is not bounded',
  'RS-02': 'needs the fixtures’ users and roles (embedded reference server only)',
}

/** Why the check runs only against the embedded server, or undefined. */
export function embeddedOnlyReason(id: RequirementId): string | undefined {
  return EMBEDDED_ONLY[id]
}

/** How long one check may take before it is stopped as inconclusive (`--check-timeout`). */
export const CHECK_TIMEOUT_MS = 60_000

/**
 * Checks that drive the browser at once, whatever the run's concurrency: Chromium is most of
 * a browser check's CPU, so more beside each other only share the same cores, while checks that
 * send HTTP alone run beside them.
 */
export const BROWSER_CHECKS_AT_ONCE = 2

type Need = 'other' | 'third' | 'rateLimitBudget' | 'sessionLifetime'

const WHY: Record<Need, string> = {
  other: 'the configuration names no second client (clients.other)',
  third: 'the configuration names no client with its own redirect URI (clients.third)',
  rateLimitBudget:
    'the configuration sets no rateLimitBudget (the most requests a 429 probe may send)',
  sessionLifetime:
    'the configuration sets no sessionLifetime (the login-session lifetime a session is aged past)',
}

const met = (need: Need, config: TargetConfig): boolean => {
  switch (need) {
    case 'other':
      return Boolean(config.clients.other)
    case 'third':
      return Boolean(config.clients.third)
    case 'rateLimitBudget':
      return config.rateLimitBudget !== undefined
    case 'sessionLifetime':
      return config.sessionLifetime !== undefined
  }
}

/** The selected checks this configuration will skip, each with why. */
export function predictSkips(
  ids: readonly RequirementId[],
  config: TargetConfig,
): { id: RequirementId; why: string }[] {
  return ids.flatMap((id) => {
    const missing = (NEEDS[id] ?? []).filter((n) => !met(n, config))
    return missing.length ? [{ id, why: missing.map((n) => WHY[n]).join('; ') }] : []
  })
}
