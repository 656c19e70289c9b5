import type { RequirementId } from '../requirements.ts'
import type { login } from '../catalogue/login.ts'
import { type AreaChecks, register, type Check } from '../harness/check.ts'
import { discoveryChecks } from './discovery.ts'
import { jwksChecks } from './jwks.ts'
import { transportChecks } from './transport.ts'
import { errorsChecks } from './errors.ts'
import { authorizeChecks } from './authorize.ts'
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
import { logoutChecks } from './logout.ts'
import { brandingChecks } from './branding.ts'
import { rateLimitChecks } from './rate-limit.ts'
import { robustnessChecks } from './robustness.ts'
import { resourceServerChecks } from './resource-server.ts'
import { securityChecks } from './security.ts'

// An area split over several files is joined here, typed by its catalogue: a row without a
// check in any of its files does not compile.
const loginChecks: AreaChecks<typeof login> = { ...loginPageChecks, ...loginCredentialChecks }

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
