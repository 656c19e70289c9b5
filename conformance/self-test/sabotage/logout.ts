import { http, HttpResponse, type HttpHandler } from 'msw'
import type { logout } from '../../catalogue/logout.ts'
import type { Target, TargetClient } from '../../harness/target.ts'
import type { Sabotage } from './kit.ts'
import { relay } from './rate-limit.ts'

/**
 * GET /auth/logout answered with a redirect to post_logout_redirect_uri (state echoed) whenever
 * `redirects` says so and the real server refused: the open redirects the checks look for.
 */
const redirectingLogout =
  (redirects: (params: URLSearchParams, target: Target) => boolean) =>
  (target: Target): HttpHandler[] => [
    http.get(`${target.baseUrl}/auth/logout`, async ({ request }) => {
      const real = await relay(target, request)
      const params = new URL(request.url).searchParams
      const uri = params.get('post_logout_redirect_uri')
      if (!uri || real.headers.has('location') || !redirects(params, target)) return real
      const state = params.get('state')
      const location = state ? `${uri}${uri.includes('?') ? '&' : '?'}state=${state}` : uri
      return new HttpResponse(null, { status: 302, headers: { location } })
    }),
  ]

const registered = (target: Target): string[] =>
  Object.values(target.clients as Record<string, TargetClient | undefined>).flatMap((c) =>
    c?.postLogoutRedirectUri ? [c.postLogoutRedirectUri] : [],
  )

/** How to break the target for each LOGOUT-* check. */
export const logoutSabotage: Record<keyof typeof logout, Sabotage> = {
  'LOGOUT-01': {
    how: 'logout deletes the session cookie but leaves the session live at the server',
    faults: ['logout-keeps-session'],
  },
  'LOGOUT-02': {
    how: 'post_logout_redirect_uri compared by prefix (a query or slash added passes)',
    handlers: redirectingLogout((params, target) => {
      const uri = params.get('post_logout_redirect_uri') ?? ''
      return registered(target).some((r) => uri.startsWith(r))
    }),
  },
  'LOGOUT-03': {
    how: 'logout redirects to post_logout_redirect_uri without an id_token_hint',
    handlers: redirectingLogout((params) => !params.has('id_token_hint')),
  },
  'LOGOUT-04': {
    how: 'the id_token_hint is not verified (any hint identifies the client)',
    handlers: redirectingLogout(
      (params, target) =>
        params.has('id_token_hint') &&
        registered(target).includes(params.get('post_logout_redirect_uri') ?? ''),
    ),
  },
  'LOGOUT-05': {
    how: 'logout without state redirects with an empty state parameter',
    faults: ['logout-empty-state'],
  },
  'LOGOUT-06': {
    how: 'a POST logout reads the query string, not the form body',
    faults: ['logout-post-reads-query'],
  },
  'LOGOUT-07': {
    how: 'logout without a hint ends the session without asking',
    faults: ['logout-without-confirmation'],
  },
}
