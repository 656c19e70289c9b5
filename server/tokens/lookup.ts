import type { Request } from '@hapi/hapi'
import { authenticateClient } from '../clients/authenticate.ts'
import type { Deps } from '../deps.ts'
import { required, singleParams } from '../protocol/params.ts'
import { sha256Hex } from '../protocol/digest.ts'
import type { StoredToken } from '../store/store.ts'
import {
  MAX_TOKEN_LENGTH,
  verifyAccessToken,
  type VerifiedAccessToken,
} from './verify-access-token.ts'

/** A token presented to introspection or revocation, as this server knows it. */
export type KnownToken =
  | { readonly kind: 'access'; readonly stored: StoredToken; readonly access: VerifiedAccessToken }
  | { readonly kind: 'refresh'; readonly stored: StoredToken }

/**
 * Finds an active token by its value: an access token (verified JWT, stored jti, not revoked,
 * not expired) or a refresh token (by digest, not revoked, not expired). The hint only says
 * which to try first (RFC 7662 §2.1, RFC 7009 §2.1); anything else is undefined.
 */
export async function findActiveToken(
  token: string,
  hint: string | undefined,
  deps: Pick<Deps, 'keys' | 'clock' | 'config' | 'store'>,
): Promise<KnownToken | undefined> {
  if (token.length > MAX_TOKEN_LENGTH) return undefined
  const asAccess = async (): Promise<KnownToken | undefined> => {
    if (token.split('.').length !== 3) return undefined
    try {
      const access = await verifyAccessToken(token, deps)
      return { kind: 'access', stored: access.stored, access }
    } catch {
      return undefined
    }
  }
  const asRefresh = async (): Promise<KnownToken | undefined> => {
    const stored = await deps.store.tokens.get(sha256Hex(token))
    if (
      !stored ||
      stored.kind !== 'refresh' ||
      stored.revokedAt !== null ||
      stored.expiresAt <= deps.clock()
    )
      return undefined
    return { kind: 'refresh', stored }
  }
  return hint === 'refresh_token'
    ? ((await asRefresh()) ?? (await asAccess()))
    : ((await asAccess()) ?? (await asRefresh()))
}

/**
 * The shared start of introspection and revocation: form parameters once each, client
 * authentication (client_secret_post), a required `token`, and the active token it names,
 * if the authenticated client owns it (RFC 7662 §2.1, RFC 7009 §2.1; ARCHITECTURE.md: a client
 * sees and revokes only its own tokens).
 */
export async function findOwnActiveToken(
  request: Request,
  deps: Parameters<typeof authenticateClient>[2] & Parameters<typeof findActiveToken>[2],
): Promise<KnownToken | undefined> {
  const params = singleParams(request.payload)
  const client = await authenticateClient(request, params, deps)
  const token = required(params, 'token')
  const found = await findActiveToken(token, params.token_type_hint, deps)
  return found?.stored.clientId === client.id ? found : undefined
}
