import type { RequirementId } from '../requirements.ts'
import { type AreaChecks, joinParts, register, type Check } from '../harness/check.ts'
import type { authorize } from '../catalogue/authorize.ts'
import type { logout } from '../catalogue/logout.ts'
import type { security } from '../catalogue/security.ts'
import type { login } from '../catalogue/login.ts'
import { discoveryChecks } from './discovery.ts'
import { jwksChecks } from './jwks.ts'
import { transportChecks } from './transport.ts'
import { errorsChecks } from './errors.ts'
import { authorizeValidationChecks } from './authorize-validation.ts'
import { authorizeSuccessChecks } from './authorize-success.ts'
import { authorizeSessionChecks } from './authorize-session.ts'
import { loginPageChecks } from './login.ts'
import { loginCredentialChecks } from './login-credentials.ts'
import { pkceChecks } from './pkce.ts'
import { codeChecks } from './code.ts'
import { tokenChecks } from './token.ts'
import { accessTokenChecks } from './access-token.ts'
import { idTokenChecks } from './id-token.ts'
import { refreshChecks } from './refresh.ts'
import { clientCredentialsChecks } from './client-credentials.ts'
import { userInfoChecks } from './user-info.ts'
import { introspectionChecks } from './introspection.ts'
import { revocationChecks } from './revocation.ts'
import { logoutRequestChecks } from './logout-requests.ts'
import { logoutSessionChecks } from './logout-session.ts'
import { brandingChecks } from './branding.ts'
import { rateLimitChecks } from './rate-limit.ts'
import { robustnessChecks } from './robustness.ts'
import { resourceServerChecks } from './resource-server.ts'
import { securityThrottlingChecks } from './security-throttling.ts'
import { securityTokenChecks } from './security-tokens.ts'
import { securitySessionChecks } from './security-sessions.ts'
import { securityLeakChecks } from './security-leaks.ts'

// The areas too large for one file, split by concept: each typed by its catalogue, so a row
// in no part, or in two, does not compile (joinParts)
const authorizeChecks: AreaChecks<typeof authorize> = joinParts(
  authorizeValidationChecks,
  authorizeSuccessChecks,
  authorizeSessionChecks,
)
const logoutChecks: AreaChecks<typeof logout> = joinParts(logoutRequestChecks, logoutSessionChecks)
const securityChecks: AreaChecks<typeof security> = joinParts(
  securityThrottlingChecks,
  securityTokenChecks,
  securitySessionChecks,
  securityLeakChecks,
)
const loginChecks: AreaChecks<typeof login> = joinParts(loginPageChecks, loginCredentialChecks)

// Every area's checks, registered for the run: a full Record, so a catalogue row without a
// check does not compile (the run still orders them by the catalogue: SEC-02 last).
const checks: Record<RequirementId, Check> = {
  ...discoveryChecks,
  ...jwksChecks,
  ...transportChecks,
  ...errorsChecks,
  ...authorizeChecks,
  ...loginChecks,
  ...pkceChecks,
  ...codeChecks,
  ...tokenChecks,
  ...accessTokenChecks,
  ...idTokenChecks,
  ...refreshChecks,
  ...clientCredentialsChecks,
  ...userInfoChecks,
  ...introspectionChecks,
  ...revocationChecks,
  ...logoutChecks,
  ...brandingChecks,
  ...rateLimitChecks,
  ...robustnessChecks,
  ...resourceServerChecks,
  ...securityChecks,
}

register(checks)
