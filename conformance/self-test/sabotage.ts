import type { RequirementId } from '../requirements.ts'
import { discoverySabotage } from './sabotage/discovery.ts'
import { errorsSabotage } from './sabotage/errors.ts'
import { jwksSabotage } from './sabotage/jwks.ts'
import type { Sabotage } from './sabotage/kit.ts'
import { transportSabotage } from './sabotage/transport.ts'

export type { Sabotage } from './sabotage/kit.ts'

/**
 * Every check's proof that it can fail, one file per area. Typed as a full Record: a check
 * without a proof does not compile.
 */
export const sabotage: Record<RequirementId, Sabotage> = {
  ...discoverySabotage,
  ...jwksSabotage,
  ...transportSabotage,
  ...errorsSabotage,
}
