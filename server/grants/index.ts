import { authorizationCode } from './authorization-code.ts'
import { clientCredentials } from './client-credentials.ts'
import type { Grant } from './grant.ts'
import { refreshToken } from './refresh-token.ts'

/** The grants of the token endpoint, by grant_type. */
export const grants: ReadonlyMap<string, Grant> = new Map(
  [authorizationCode, refreshToken, clientCredentials].map((grant) => [grant.type, grant]),
)
