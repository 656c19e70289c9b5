import type { AccessTokenClaims } from './verifier.ts'

/**
 * A failed authorization check in a resource server (INTERFACE.md §5.7): 403 with a JSON error;
 * insufficient_scope for scopes (RFC 6750 §3.1), access_denied otherwise.
 */
export class ForbiddenError extends Error {
  readonly code: 'insufficient_scope' | 'access_denied'
  readonly scope: string | undefined
  constructor(code: 'insufficient_scope' | 'access_denied', message: string, scope?: string) {
    super(message)
    this.name = 'ForbiddenError'
    this.code = code
    this.scope = scope
  }
}

/** Scope check: the scope claim contains the required scope. */
export function requireScope(claims: AccessTokenClaims, scope: string): void {
  if (!claims.scopes.includes(scope))
    throw new ForbiddenError('insufficient_scope', `the token lacks the scope ${scope}`, scope)
}

/** Role check: the roles claim contains the required role. */
export function requireRole(claims: AccessTokenClaims, role: string): void {
  if (!claims.roles.includes(role))
    throw new ForbiddenError('access_denied', `the role ${role} is required`)
}

/** Ownership check: the resource owner equals sub, or the caller has the admin role. */
export function requireOwnerOrAdmin(
  claims: AccessTokenClaims,
  owner: string,
  adminRole = 'admin',
): void {
  if (claims.sub !== owner && !claims.roles.includes(adminRole)) {
    throw new ForbiddenError('access_denied', 'only the owner or an administrator may do this')
  }
}

/** Tenant filter: keeps the records of the caller's organisation (a token without org_id sees none). */
export function tenantFilter<T extends { readonly orgId: string }>(
  claims: AccessTokenClaims,
  records: readonly T[],
): T[] {
  return claims.org_id === undefined ? [] : records.filter((r) => r.orgId === claims.org_id)
}

/** Tenant check for one record. */
export function requireTenant(claims: AccessTokenClaims, orgId: string): void {
  if (claims.org_id !== orgId)
    throw new ForbiddenError('access_denied', 'the resource belongs to another organisation')
}
