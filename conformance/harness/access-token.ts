import { decodeProtectedHeader, type JWTPayload } from 'jose'
import type { CheckContext } from './check.ts'
import { ControlFailure } from './expect.ts'
import { claimsOf, verifyJwt } from './jwt.ts'
import { introspectRaw } from './requests.ts'
import type { TargetClient } from './target.ts'

/**
 * What an access token carries (scope, sub, client_id, exp, iat), for the checks whose subject is
 * the grant and not the token's format. INTERFACE.md §2.3 makes access tokens RS256 JWTs; a
 * provider whose tokens are not JWTs deviates there, and AT-01..07, JWKS-04 and RS-01 judge it
 * (one deviation, one failure). Other checks read what the provider says about such a token:
 * its introspection (RFC 7662 §2.2). Only when that cannot tell either is the part inconclusive.
 */
export interface AccessTokenFacts {
  /** The token's claims, or its introspection's members. */
  claims: JWTPayload & Record<string, unknown>
  /** Where the claims were read: the verified JWT or the introspection response. */
  source: 'jwt' | 'introspection'
}

/** Whether `token` is a compact JWS (RFC 7515 §7.1): three segments and a JSON header. */
export function isCompactJws(token: string): boolean {
  if (token.split('.').length !== 3) return false
  try {
    decodeProtectedHeader(token)
    return true
  } catch {
    return false
  }
}

/** Where the token's format is judged, for notes about a token that is not a JWT. */
export const FORMAT_JUDGED_BY = 'the access token format is judged by AT-01 and JWKS-04'

/**
 * The claims of an access token: verified as a JWT when it is one (a JWT that does not verify
 * fails as before: its signature is the interface's), otherwise read from the introspection
 * endpoint as `client` (by default the main client). A token that is not a JWT and that
 * introspection does not describe leaves the part inconclusive, never failed.
 */
export async function accessTokenFacts(
  ctx: Pick<CheckContext, 'http' | 'target' | 'note'>,
  token: string,
  options: { audience?: string; client?: TargetClient; what?: string } = {},
): Promise<AccessTokenFacts> {
  if (isCompactJws(token)) {
    const { payload } = await verifyJwt(
      ctx,
      token,
      options.audience ? { audience: options.audience } : {},
    )
    return { claims: payload, source: 'jwt' }
  }
  return { claims: await introspectedClaims(ctx, token, options), source: 'introspection' }
}

/**
 * The claims of an access token without verifying it (the checks that verify do so separately):
 * a JWT decoded, any other token read through introspection as `client` (by default the main
 * client), inconclusive when introspection does not describe it.
 */
export async function unverifiedAccessTokenClaims(
  ctx: Pick<CheckContext, 'http' | 'target' | 'note'>,
  token: string,
  options: { client?: TargetClient; what?: string } = {},
): Promise<JWTPayload & Record<string, unknown>> {
  if (isCompactJws(token)) return claimsOf(token)
  return introspectedClaims(ctx, token, options)
}

async function introspectedClaims(
  ctx: Pick<CheckContext, 'http' | 'target' | 'note'>,
  token: string,
  options: { client?: TargetClient; what?: string },
): Promise<JWTPayload & Record<string, unknown>> {
  const what = options.what ?? 'the access token'
  const res = await introspectRaw(ctx, token, options.client ? { client: options.client } : {})
  const body = res.json as Record<string, unknown> | undefined
  if (res.status !== 200 || !body || typeof body !== 'object' || body.active !== true)
    throw new ControlFailure(
      `${what} is not a JWT and its introspection (HTTP ${res.status}, active ${JSON.stringify(body?.active)}) does not describe it, so what it grants cannot be read (${FORMAT_JUDGED_BY})`,
    )
  ctx.note(`${what} is not a JWT: its claims were read from introspection (${FORMAT_JUDGED_BY})`)
  return body
}
