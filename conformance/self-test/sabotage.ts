import type { RequirementId } from '../requirements.ts'
import { discoverySabotage } from './sabotage/discovery.ts'
import { errorsSabotage } from './sabotage/errors.ts'
import { jwksSabotage } from './sabotage/jwks.ts'
import { authorizeSabotage } from './sabotage/authorize.ts'
import { loginSabotage } from './sabotage/login.ts'
import { pkceSabotage } from './sabotage/pkce.ts'
import { codeSabotage } from './sabotage/code.ts'
import { tokenSabotage } from './sabotage/token.ts'
import { accessTokenSabotage } from './sabotage/access-token.ts'
import { idTokenSabotage } from './sabotage/id-token.ts'
import { refreshSabotage } from './sabotage/refresh.ts'
import { clientCredentialsSabotage } from './sabotage/client-credentials.ts'
import { userInfoSabotage } from './sabotage/user-info.ts'
import { introspectionSabotage } from './sabotage/introspection.ts'
import { revocationSabotage } from './sabotage/revocation.ts'
import { logoutSabotage } from './sabotage/logout.ts'
import { brandingSabotage } from './sabotage/branding.ts'
import { rateLimitSabotage } from './sabotage/rate-limit.ts'
import { robustnessSabotage } from './sabotage/robustness.ts'
import { resourceServerSabotage } from './sabotage/resource-server.ts'
import type { Sabotages } from './sabotage/kit.ts'
import { transportSabotage } from './sabotage/transport.ts'
import { securitySabotage } from './sabotage/security.ts'

export { partsOf, type Sabotage, type Sabotages } from './sabotage/kit.ts'

/**
 * Every check's proofs that it can fail (one per part of a multi-part check), one file per
 * area. Typed as a full Record: a check without a proof does not compile.
 */
export const sabotage: Record<RequirementId, Sabotages> = {
  ...discoverySabotage,
  ...jwksSabotage,
  ...transportSabotage,
  ...errorsSabotage,
  ...authorizeSabotage,
  ...loginSabotage,
  ...pkceSabotage,
  ...codeSabotage,
  ...tokenSabotage,
  ...accessTokenSabotage,
  ...idTokenSabotage,
  ...refreshSabotage,
  ...clientCredentialsSabotage,
  ...userInfoSabotage,
  ...introspectionSabotage,
  ...revocationSabotage,
  ...logoutSabotage,
  ...brandingSabotage,
  ...rateLimitSabotage,
  ...robustnessSabotage,
  ...resourceServerSabotage,
  ...securitySabotage,
}
