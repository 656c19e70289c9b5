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

/** INTERFACE.md §8: "Access token lifetime | 1 hour by default (expires_in 3600)". */
export const DEFAULT_ACCESS_TOKEN_LIFETIME_S = 3600

/**
 * The longest access-token lifetime (seconds) that a check waits out against a deployment, to
 * present a token past its `exp` (UI-07, INTRO-03): with the clock tolerance below, a wait of at
 * most 165 s, within what a check's limit may be extended to (MAX_EXTENSION times
 * `--check-timeout`: 600 s by default). Longer lifetimes leave that part not judged.
 */
export const MAX_ACCESS_TOKEN_WAIT_S = 150

/**
 * How far past an access token's `exp` a check presents it against a deployment: the clock
 * tolerance a provider may apply to an expiry (node-oidc-provider's clockTolerance defaults to
 * 15 s; SEC-11 waits the same past a session's lifetime), so a token within that tolerance is
 * not taken for one that never expires.
 */
export const ACCESS_TOKEN_EXPIRY_TOLERANCE_S = 15

/**
 * The parts of a check that present an access token past its expiry: on the embedded server its
 * clock is moved; against a deployment, the checks in `waits` wait the token's lifetime out when
 * the target configuration declares an accessTokenLifetime of at most MAX_ACCESS_TOKEN_WAIT_S,
 * and the others are not judged. Listed before a run (plannedSkips), so that a part the run
 * cannot judge is named in its header, not only in the check's note.
 */
const EXPIRED_TOKEN_PARTS: Partial<Record<RequirementId, { part: string; waits: boolean }>> = {
  'UI-07': { part: 'user-info with an expired access token (RFC 6750 §3.1)', waits: true },
  'INTRO-03': {
    part: 'introspection of an expired access token (RFC 7662 §2.2)',
    waits: true,
  },
  'REV-04': { part: 'revocation of an expired access token (RFC 7009 §2.2)', waits: false },
}

/** Whether a deployment's checks may wait an access token's lifetime out (see above). */
export const accessTokenWaitable = (config: Pick<TargetConfig, 'accessTokenLifetime'>): boolean =>
  config.accessTokenLifetime !== undefined && config.accessTokenLifetime <= MAX_ACCESS_TOKEN_WAIT_S

/**
 * Why a check's expired-access-token part is not judged against this deployment, or undefined
 * when it is (or the check has no such part).
 */
export function expiredTokenPartWhy(
  id: RequirementId,
  config: Pick<TargetConfig, 'accessTokenLifetime'>,
): string | undefined {
  const entry = EXPIRED_TOKEN_PARTS[id]
  if (!entry) return undefined
  if (!entry.waits)
    return `${entry.part}: needs clock control (embedded target); UI-07 and INTRO-03 wait an expired token out against a deployment`
  const lifetime = config.accessTokenLifetime
  if (lifetime === undefined)
    return `${entry.part}: the configuration sets no accessTokenLifetime (the access-token lifetime a token is waited past)`
  if (lifetime > MAX_ACCESS_TOKEN_WAIT_S)
    return `${entry.part}: access tokens live ${lifetime} s (accessTokenLifetime), longer than a check waits (${MAX_ACCESS_TOKEN_WAIT_S} s)`
  return undefined
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

/**
 * The selected checks that run against this deployment with a part left out (not judged), each
 * with the part and why.
 */
export function predictUnjudgedParts(
  ids: readonly RequirementId[],
  config: TargetConfig,
): { id: RequirementId; why: string }[] {
  return ids.flatMap((id) => {
    const why = expiredTokenPartWhy(id, config)
    return why ? [{ id, why }] : []
  })
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
