import { http, HttpResponse, type HttpHandler } from 'msw'
import type { logout } from '../../catalogue/logout.ts'
import { relay, type Sabotages, type Target, type TargetClient } from './kit.ts'

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
export const logoutSabotage: Record<keyof typeof logout, Sabotages> = {
  'LOGOUT-01': {
    how: 'logout deletes the session cookie but leaves the session live at the server',
    expect: /the session survived the logout/,
    faults: ['logout-keeps-session'],
  },
  'LOGOUT-02': {
    how: 'post_logout_redirect_uri compared by prefix (a query or slash added passes)',
    expect: /^the registered URI with a query added: expected no redirect/,
    handlers: redirectingLogout((params, target) => {
      const uri = params.get('post_logout_redirect_uri') ?? ''
      return registered(target).some((r) => uri.startsWith(r))
    }),
  },
  'LOGOUT-03': {
    how: 'logout redirects to post_logout_redirect_uri without an id_token_hint',
    expect: /^no id_token_hint: expected no redirect/,
    handlers: redirectingLogout((params) => !params.has('id_token_hint')),
  },
  'LOGOUT-04': {
    how: 'the id_token_hint is not verified (any hint identifies the client)',
    expect: /^a hint with a changed claim \(signature kept\): expected no redirect/,
    handlers: redirectingLogout(
      (params, target) =>
        params.has('id_token_hint') &&
        registered(target).includes(params.get('post_logout_redirect_uri') ?? ''),
    ),
  },
  'LOGOUT-05': {
    how: 'logout without state redirects with an empty state parameter',
    expect:
      /^logout without state: the parameters of the post-logout redirect: expected "", got "state="/,
    faults: ['logout-empty-state'],
  },
  'LOGOUT-06': {
    how: 'a POST logout reads the query string, not the form body',
    expect: /^the form-encoded POST logout did not redirect to /,
    faults: ['logout-post-reads-query'],
  },
  'LOGOUT-07': {
    how: 'logout without a hint ends the session without asking',
    expect: /^a logout request without a hint: the session was ended without the user confirming/,
    faults: ['logout-without-confirmation'],
  },
}
