import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { accessDenied, invalidRequest, OAuthError } from '../errors.ts'
import { issueCode } from '../grants/issue-code.ts'
import type { AuthorizationRequest } from '../protocol/authorization-request.ts'
import { digestsEqual, sha256Hex } from '../protocol/digest.ts'
import {
  createSession,
  interactionCookie,
  INTERACTION_COOKIE,
  setSessionCookie,
} from '../sessions.ts'
import { DUMMY_HASH, verifyPassword } from '../users/passwords.ts'
import { loginPage } from '../views/login.ts'
import { newNonce, page } from '../views/respond.ts'
import { errorPageResponse, errorRedirect, redirectToClient } from './authorize.ts'

/** One message for an unknown user and a wrong password: no user enumeration. */
export const LOGIN_FAILED = 'Incorrect username or password.'

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/**
 * POST /auth/login: the hosted login form. CSRF-protected three ways (RFC 6749 §10.12): the
 * form's token must match its interaction, the interaction must be this browser's (cookie), and
 * a cross-origin Origin is refused. Success redirects with 303 (RFC 9700 §4.12).
 */
export const login = (deps: Deps): ServerRoute => ({
  method: 'POST',
  path: '/auth/login',
  options: {
    payload: { allow: 'application/x-www-form-urlencoded', maxBytes: 16 * 1024 },
    handler: async (request: Request, h: ResponseToolkit) => {
      const form = (request.payload as Record<string, unknown> | null) ?? {}
      const forbidden = (description: string) =>
        errorPageResponse(h, new OAuthError('access_denied', description), undefined, 403)
      // Referrer-Policy no-referrer makes browsers send Origin: null on the form post; any
      // other origin than ours is a cross-site post
      const origin = (request.headers as Record<string, string | undefined>).origin
      if (
        origin !== undefined &&
        origin !== 'null' &&
        origin !== new URL(deps.config.baseUrl).origin
      ) {
        return forbidden('cross-origin sign-in refused')
      }
      const id = str(form.interaction)
      const csrf = str(form.csrf)
      if (!id || !csrf)
        return errorPageResponse(h, invalidRequest('the sign-in form is incomplete'), undefined)
      if (interactionCookie(request) !== id)
        return forbidden('this sign-in was started in another browser or has expired')
      const interaction = await deps.store.interactions.get(id, deps.clock())
      if (!interaction)
        return errorPageResponse(
          h,
          invalidRequest('this sign-in request has expired; start again from the application'),
          undefined,
        )
      if (!digestsEqual(sha256Hex(csrf), interaction.csrfDigest))
        return forbidden('the sign-in form token is invalid')
      const ar = interaction.request as unknown as AuthorizationRequest

      if (str(form.action) === 'cancel') {
        await deps.store.interactions.take(id)
        return errorRedirect(
          h,
          ar,
          accessDenied('the user cancelled the sign-in'),
          deps,
          303,
        ).unstate(INTERACTION_COOKIE)
      }
      const username = str(form.username) ?? ''
      const password = str(form.password) ?? ''
      const user = username.length <= 255 ? await deps.store.users.byUsername(username) : undefined
      // the hash is checked even for an unknown user, so timing does not tell them apart
      const valid =
        (await verifyPassword(password.slice(0, 1024), user?.passwordHash ?? DUMMY_HASH)) &&
        user !== undefined
      if (!valid) {
        const nonce = newNonce()
        const branding = await deps.store.clients.branding(ar.clientId)
        return page(
          h,
          loginPage({
            interaction: id,
            csrf,
            branding,
            nonce,
            username: username.slice(0, 255),
            error: LOGIN_FAILED,
          }),
          {
            nonce,
            status: 401,
            formTargets: [ar.redirectUri],
          },
        )
      }
      // taking the interaction is atomic: a double submission cannot issue two codes
      if (!(await deps.store.interactions.take(id))) {
        return errorPageResponse(
          h,
          invalidRequest('this sign-in request was already completed'),
          undefined,
        )
      }
      const { cookie, session } = await createSession(user.id, deps)
      const code = await issueCode(ar, { userId: user.id, authTime: session.authTime }, deps)
      const response = redirectToClient(
        h,
        ar.redirectUri,
        { code, state: ar.state, iss: deps.config.baseUrl },
        303,
      )
      return setSessionCookie(response, cookie, deps).unstate(INTERACTION_COOKIE)
    },
  },
})
