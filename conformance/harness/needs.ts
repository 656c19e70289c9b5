import type { RequirementId } from '../requirements.ts'
import type { TargetConfig } from './target.ts'

/**
 * What a check needs from the target configuration beyond the main client and the primary
 * user; without it, the check (or, for AUTHZ-04, a part of it) is skipped. The CLI reads this
 * before a run to list the skips the configuration will cause, with why; the checks
 * themselves still skip on their own (ctx.skip), so this table only announces.
 */
const NEEDS: Partial<Record<RequirementId, readonly Need[]>> = {
  'AUTHZ-04': ['third'],
  'CODE-06': ['other'],
  'RT-07': ['other'],
  'INTRO-06': ['other'],
  'REV-06': ['other'],
  'CC-01': ['ccScope'],
  'CC-02': ['ccScope'],
  'CC-03': ['ccScope'],
  'CC-04': ['ccScope'],
  'CC-05': ['ccScope'],
  'RATE-01': ['rateLimitBudget'],
  'RATE-03': ['rateLimitBudget'],
}

type Need = 'other' | 'third' | 'ccScope' | 'rateLimitBudget'

const WHY: Record<Need, string> = {
  other: 'the configuration names no second client (clients.other)',
  third: 'the configuration names no client with its own redirect URI (clients.third)',
  ccScope:
    'the client_credentials client (clients.service, else clients.main) has no scope in the configuration',
  rateLimitBudget:
    'the configuration sets no rateLimitBudget (the most requests a 429 probe may send)',
}

const met = (need: Need, config: TargetConfig): boolean => {
  switch (need) {
    case 'other':
      return Boolean(config.clients.other)
    case 'third':
      return Boolean(config.clients.third)
    case 'ccScope':
      return Boolean((config.clients.service ?? config.clients.main).scope)
    case 'rateLimitBudget':
      return config.rateLimitBudget !== undefined
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
