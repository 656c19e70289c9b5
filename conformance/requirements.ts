import { discovery } from './catalogue/discovery.ts'
import { errors } from './catalogue/errors.ts'
import { jwks } from './catalogue/jwks.ts'
import type { Requirement } from './catalogue/requirement.ts'
import { transport } from './catalogue/transport.ts'

export type { Requirement } from './catalogue/requirement.ts'

/**
 * The requirements the suite checks, by stable ID, one catalogue file per area. A check whose
 * ID is missing here does not type-check, and the self-test's sabotage table must name every
 * ID here. IDs are never reused.
 */
export const requirements = {
  ...discovery,
  ...jwks,
  ...transport,
  ...errors,
} as const satisfies Record<string, Requirement>

export type RequirementId = keyof typeof requirements

export const requirementIds = Object.keys(requirements) as RequirementId[]

/** `ID [LEVEL] title (source)`: how every check is named in tests and reports. */
export const checkName = (id: RequirementId): string => {
  const r: Requirement = requirements[id]
  return `${id} [${r.level}] ${r.title} (${r.source})`
}
