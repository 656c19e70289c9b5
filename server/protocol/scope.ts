/** RFC 6749 App. A.4: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

/** The OpenID scopes of INTERFACE.md §2.1, which only an end user can grant. */
export const USER_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const

/**
 * Splits a scope parameter (RFC 6749 §3.3: space-delimited, order irrelevant) into distinct
 * tokens, or undefined when it is not well formed.
 */
export function parseScope(value: string): string[] | undefined {
  const tokens = value.split(' ').filter((t) => t !== '')
  if (!tokens.every((t) => SCOPE_TOKEN.test(t))) return undefined
  return [...new Set(tokens)]
}

export const formatScope = (scopes: readonly string[]): string => scopes.join(' ')

/** Whether every requested scope is in the allowed set. */
export const withinScope = (requested: readonly string[], allowed: readonly string[]): boolean =>
  requested.every((s) => allowed.includes(s))
