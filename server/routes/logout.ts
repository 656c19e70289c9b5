import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose'
import type { Deps } from '../deps.ts'
import { invalidRequest, OAuthError } from '../errors.ts'
import { randomToken, sha256Hex, digestsEqual } from '../protocol/digest.ts'
import { rawParams, safeName, single } from '../protocol/params.ts'
import { isRegisteredRedirectUri } from '../protocol/redirect-uri.ts'
import { endSession, interactionCookie, INTERACTION_COOKIE, SESSION_COOKIE } from '../sessions.ts'
import type { Client } from '../store/store.ts'
import { loggedOutPage, logoutConfirmPage } from '../views/logout.ts'
import { newNonce, page } from '../views/respond.ts'
import { errorPageResponse as authorizeErrorPage, redirectToClient } from './authorize.ts'

/** The error page of a sign-out: titled as one (issue 23), otherwise the sign-in error page. */
const errorPageResponse = (
  h: Parameters<typeof authorizeErrorPage>[0],
  error: Parameters<typeof authorizeErrorPage>[1],
  branding: Parameters<typeof authorizeErrorPage>[2],
  status?: number,
) => authorizeErrorPage(h, error, branding, status ?? error.status, 'Sign-out error')

/** The logout request once its client is identified (or not). */
interface LogoutRequest {
  readonly client: Client | undefined
  readonly postLogoutRedirectUri: string | undefined
  readonly state: string | undefined
}

const MAX_HINT = 8192

/**
 * Verifies an id_token_hint: signed by one of our published keys with RS256, issued by us, an
 * ID token (not an access token), expiry tolerated (RP-Initiated Logout §2). Returns its aud.
 */
async function verifyHint(
  hint: string,
  deps: Pick<Deps, 'keys' | 'clock' | 'config'>,
): Promise<string | undefined> {
  if (hint.length > MAX_HINT) return undefined
  try {
    const header = decodeProtectedHeader(hint)
    if (header.alg !== 'RS256' || typeof header.kid !== 'string' || header.typ === 'at+jwt')
      return undefined
    const key = await deps.keys.verificationKey(header.kid, deps.clock())
    if (!key) return undefined
    const { iat } = decodeJwt(hint)
    // verified as of its own issue time, so an expired hint still identifies the client
    const { payload } = await jwtVerify(hint, key, {
      algorithms: ['RS256'],
      issuer: deps.config.baseUrl,
      currentDate: new Date((typeof iat === 'number' ? iat : deps.clock()) * 1000),
    })
    return typeof payload.aud === 'string' ? payload.aud : undefined
  } catch {
    return undefined
  }
}

/**
 * GET and POST /auth/logout: RP-initiated logout (INTERFACE.md §4.6, RP-Initiated Logout 1.0).
 * With a valid id_token_hint the session ends at once; post_logout_redirect_uri is honoured only
 * for the identified client and only when registered for it, compared exactly (ARCHITECTURE.md
 * C6), with state echoed. Without a valid hint the user confirms first. Never an open redirect.
 */
export const logout = (deps: Deps): ServerRoute[] => {
  const finish = async (
    request: Request,
    h: ResponseToolkit,
    lr: LogoutRequest,
    status: 302 | 303,
  ) => {
    const nonce = newNonce()
    const end = async (response: ResponseObject) => {
      await endSession(request, response, deps)
      return response
    }
    if (lr.client && lr.postLogoutRedirectUri)
      return end(redirectToClient(h, lr.postLogoutRedirectUri, { state: lr.state }, status))
    const branding = lr.client ? await deps.store.clients.branding(lr.client.id) : undefined
    return end(page(h, loggedOutPage({ branding, nonce }), { nonce }))
  }

  /**
   * A cross-site form POST (an RP's logout form) carries no SameSite=Lax session cookie, so the
   * session could not be ended; a 303 turns it into a top-level GET, which does carry it.
   */
  const bounceToGet = (h: ResponseToolkit, raw: Record<string, unknown>) => {
    const query = new URLSearchParams()
    // repeated parameters stay repeated, so the GET refuses them as the POST would have
    for (const [k, v] of Object.entries(raw))
      for (const x of Array.isArray(v) ? (v as unknown[]) : [v])
        if (typeof x === 'string') query.append(k, x)
    const encoded = query.toString()
    return h
      .redirect(`${deps.config.baseUrl}/auth/logout${encoded ? `?${encoded}` : ''}`)
      .code(303)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
  }

  const start = async (request: Request, h: ResponseToolkit) => {
    const post = request.method === 'post'
    const raw = rawParams(post ? request.payload : request.query)
    if (post && single(raw, 'action') === 'confirm') return confirm(request, h, raw)
    const hasSessionCookie = Boolean(
      (request.state as Record<string, unknown> | null)?.[SESSION_COOKIE],
    )
    if (post && !hasSessionCookie) return bounceToGet(h, raw)
    const hint = single(raw, 'id_token_hint')
    const clientIdParam = single(raw, 'client_id')
    const postLogoutRedirectUri = single(raw, 'post_logout_redirect_uri')
    const state = single(raw, 'state')
    if (state && state.length > 2048) throw invalidRequest('state is too long')
    let clientId = clientIdParam
    if (hint) {
      const aud = await verifyHint(hint, deps)
      // RP-Initiated Logout §4: an invalid hint is an error, never a redirect
      if (!aud)
        return errorPageResponse(h, invalidRequest('the id_token_hint is not valid'), undefined)
      if (clientIdParam && clientIdParam !== aud)
        return errorPageResponse(
          h,
          invalidRequest('client_id does not match the id_token_hint'),
          undefined,
        )
      clientId = aud
    }
    const client =
      clientId && clientId.length <= 255 ? await deps.store.clients.get(clientId) : undefined
    if (clientId && !client)
      return errorPageResponse(h, invalidRequest('unknown client'), undefined)
    if (
      postLogoutRedirectUri &&
      (!client || !isRegisteredRedirectUri(client.postLogoutRedirectUris, postLogoutRedirectUri))
    ) {
      const branding = client ? await deps.store.clients.branding(client.id) : undefined
      return errorPageResponse(
        h,
        invalidRequest(
          client
            ? `post_logout_redirect_uri '${safeName(postLogoutRedirectUri)}' is not registered for client '${safeName(client.id)}': register it in its post_logout_redirect_uris${slashHint(client.postLogoutRedirectUris, postLogoutRedirectUri)}`
            : 'post_logout_redirect_uri needs a client: send client_id or id_token_hint with it (OpenID RP-Initiated Logout section 3)',
        ),
        branding,
      )
    }
    const lr: LogoutRequest = { client, postLogoutRedirectUri, state }
    if (hint) return finish(request, h, lr, post ? 303 : 302)
    // no hint: the user confirms, so a cross-site request cannot end the session silently
    const interaction = randomToken()
    const csrf = randomToken()
    await deps.store.interactions.insert({
      id: interaction,
      request: {
        kind: 'logout',
        clientId: client?.id ?? null,
        postLogoutRedirectUri: postLogoutRedirectUri ?? null,
        state: state ?? null,
      },
      csrfDigest: sha256Hex(csrf),
      expiresAt: deps.clock() + 600,
    })
    const nonce = newNonce()
    const branding = client ? await deps.store.clients.branding(client.id) : undefined
    return page(h, logoutConfirmPage({ interaction, csrf, branding, nonce }), {
      nonce,
      formTargets: postLogoutRedirectUri ? [postLogoutRedirectUri] : [],
    }).state(INTERACTION_COOKIE, interaction, { ttl: 600_000 })
  }

  const confirm = async (request: Request, h: ResponseToolkit, raw: Record<string, unknown>) => {
    const id = single(raw, 'interaction')
    const csrf = single(raw, 'csrf')
    const refused = (description: string) =>
      errorPageResponse(h, new OAuthError('access_denied', description), undefined, 403)
    if (!id || !csrf || interactionCookie(request) !== id)
      return refused('this sign-out was started elsewhere or has expired')
    const interaction = await deps.store.interactions.get(id, deps.clock())
    if (!interaction || interaction.request.kind !== 'logout')
      return refused('this sign-out request has expired')
    if (!digestsEqual(sha256Hex(csrf), interaction.csrfDigest))
      return refused('the sign-out form token is invalid')
    if (!(await deps.store.interactions.take(id)))
      return refused('this sign-out request was already completed')
    const saved = interaction.request as {
      clientId: string | null
      postLogoutRedirectUri: string | null
      state: string | null
    }
    const client = saved.clientId ? await deps.store.clients.get(saved.clientId) : undefined
    const response = await finish(
      request,
      h,
      {
        client,
        postLogoutRedirectUri: saved.postLogoutRedirectUri ?? undefined,
        state: saved.state ?? undefined,
      },
      303,
    )
    return response.unstate(INTERACTION_COOKIE)
  }

  return [
    { method: 'GET', path: '/auth/logout', options: { handler: start } },
    {
      method: 'POST',
      path: '/auth/logout',
      options: {
        handler: start,
        payload: { allow: 'application/x-www-form-urlencoded', maxBytes: 16 * 1024 },
      },
    },
  ]
}

/**
 * Registered URIs are compared exactly (OpenID RP-Initiated Logout §3; RFC 9700 §4.1.3), and
 * libraries commonly send the origin without the trailing slash a registration may have: say so
 * when that is the only difference.
 */
function slashHint(registered: readonly string[], sent: string): string {
  const bare = (u: string) => u.replace(/\/+$/, '')
  const near = registered.find((r) => r !== sent && bare(r) === bare(sent))
  return near === undefined
    ? ''
    : ` (registered is '${safeName(near)}', which differs only by a trailing slash: URIs are compared exactly, so register the form your library sends)`
}
