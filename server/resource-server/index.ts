// The resource-server half of INTERFACE.md §5.6-5.7, exported by the package.
export {
  createVerifier,
  VerifyError,
  type AccessTokenClaims,
  type Verifier,
  type VerifierOptions,
  type VerifyErrorCode,
} from './verifier.ts'
export {
  ForbiddenError,
  requireOwnerOrAdmin,
  requireRole,
  requireScope,
  requireTenant,
  tenantFilter,
} from './authorization.ts'
export { claimsOf, idpBearer, type RouteRequirements } from './hapi-plugin.ts'
