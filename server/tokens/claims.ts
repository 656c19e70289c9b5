import type { Client, User } from '../store/store.ts'

/** INTERFACE.md §2.4: the user claims each scope releases, as one table. */
export const SCOPE_CLAIMS = {
  openid: ['sub'],
  profile: ['name', 'picture', 'updated_at'],
  email: ['email', 'email_verified'],
} as const

/** The user claims the granted scopes allow (user-info and ID token). */
export type UserClaims = Record<string, string | number | boolean> & { sub: string }

export function userClaims(user: User, scopes: readonly string[]): UserClaims {
  const claims: UserClaims = { sub: user.id }
  if (scopes.includes('profile'))
    Object.assign(claims, { name: user.name, picture: user.picture, updated_at: user.updatedAt })
  if (scopes.includes('email'))
    Object.assign(claims, { email: user.email, email_verified: user.emailVerified })
  return claims
}

/** The permissions a set of roles grants in an application: the union, sorted. */
export function permissionsFor(
  client: Pick<Client, 'roleDefinitions'>,
  roles: readonly string[],
): string[] {
  const perms = new Set<string>()
  for (const role of roles) for (const p of client.roleDefinitions[role] ?? []) perms.add(p)
  return [...perms].sort()
}
