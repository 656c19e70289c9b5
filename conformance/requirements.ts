import { discovery } from './catalogue/discovery.ts'
import { errors } from './catalogue/errors.ts'
import { jwks } from './catalogue/jwks.ts'
import { authorize } from './catalogue/authorize.ts'
import { login } from './catalogue/login.ts'
import { pkce } from './catalogue/pkce.ts'
import { code } from './catalogue/code.ts'
import { token } from './catalogue/token.ts'
import { accessToken } from './catalogue/access-token.ts'
import { idToken } from './catalogue/id-token.ts'
import { refresh } from './catalogue/refresh.ts'
import { clientCredentials } from './catalogue/client-credentials.ts'
import { userInfo } from './catalogue/user-info.ts'
import { introspection } from './catalogue/introspection.ts'
import { revocation } from './catalogue/revocation.ts'
import { logout } from './catalogue/logout.ts'
import { branding } from './catalogue/branding.ts'
import { rateLimit } from './catalogue/rate-limit.ts'
import { robustness } from './catalogue/robustness.ts'
import { resourceServer } from './catalogue/resource-server.ts'
import type { Requirement } from './catalogue/requirement.ts'
import { transport } from './catalogue/transport.ts'
import { security } from './catalogue/security.ts'

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
  ...authorize,
  ...login,
  ...pkce,
  ...code,
  ...token,
  ...accessToken,
  ...idToken,
  ...refresh,
  ...clientCredentials,
  ...userInfo,
  ...introspection,
  ...revocation,
  ...logout,
  ...branding,
  ...rateLimit,
  ...robustness,
  ...resourceServer,
  ...security,
} as const satisfies Record<string, Requirement>

export type RequirementId = keyof typeof requirements

export const requirementIds = Object.keys(requirements) as RequirementId[]

/** `ID [LEVEL] title (source)`: how every check is named in tests and reports. */
export const checkName = (id: RequirementId): string => {
  const r: Requirement = requirements[id]
  return `${id} [${r.level}] ${r.title} (${r.source})`
}
