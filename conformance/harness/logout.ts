import { randomBytes } from 'node:crypto'
import type { BrowserContext } from '@playwright/test'
import type { BrowserOutcome } from './browser.ts'
import type { CheckContext } from './check.ts'
import { expectEqual, expectThat } from './expect.ts'
import { idTokenOf, signIn } from './flows.ts'
import { endpointUrl } from './requests.ts'

// What the logout checks (logout-requests.ts, logout-session.ts) share: the RP-initiated
// logout request, the session it ends, and where the browser may and may not be sent.

/** The main client's registered post-logout URI, or the check is skipped. */
export function postLogoutUri(ctx: CheckContext): string {
  const uri = ctx.target.clients.main.postLogoutRedirectUri
  if (!uri)
    ctx.skip(
      `client ${ctx.target.clients.main.id} has no postLogoutRedirectUri in the target config`,
    )
  return uri
}

/** A state value of `length` URL-safe characters. */
export const randomState = (length: number): string =>
  randomBytes(Math.ceil((length * 3) / 4))
    .toString('base64url')
    .slice(0, length)

/** The end-session endpoint's URL with `params` in its query. */
export const logoutUrl = (ctx: CheckContext, params: Record<string, string>): string => {
  const query = new URLSearchParams(params).toString()
  const endpoint = endpointUrl(ctx.target, 'end_session_endpoint')
  return query ? `${endpoint}${endpoint.includes('?') ? '&' : '?'}${query}` : endpoint
}

/**
 * A session of its own in `context`, and its ID token: the subject is the logout that follows,
 * so the login form is posted over HTTP (the browser when it cannot be; LOGIN-* test the page).
 */
export async function signedIn(ctx: CheckContext, context: BrowserContext): Promise<string> {
  return idTokenOf(await signIn(ctx, { context, byFormPost: true }))
}

/**
 * The URL must be `uri` with exactly the parameters `params` added (RP-Initiated Logout §3:
 * state echoed, nothing else; OIDF CheckForUnexpectedParametersInPostLogoutRedirect).
 */
export function expectPostLogoutUrl(
  actual: string | undefined,
  uri: string,
  params: Record<string, string>,
  what: string,
): void {
  expectThat(actual, `${what}: the IdP never redirected to ${uri}`)
  const got = new URL(actual)
  const want = new URL(uri)
  for (const [k, v] of Object.entries(params)) want.searchParams.append(k, v)
  expectEqual(
    `${got.origin}${got.pathname}`,
    `${want.origin}${want.pathname}`,
    `${what}: the post-logout redirect target`,
  )
  const sorted = (u: URL) =>
    [...u.searchParams]
      .map(([k, v]) => `${k}=${v}`)
      .sort()
      .join('&')
  expectEqual(sorted(got), sorted(want), `${what}: the parameters of the post-logout redirect`)
  expectThat(
    got.hash === '' && !/[?&]$/.test(actual),
    `${what}: the post-logout redirect has a stray fragment or separator: ${actual}`,
  )
}

/** The browser must stay at the IdP: no navigation to a client URI. */
export function expectStayed(ctx: CheckContext, outcome: BrowserOutcome, what: string): void {
  expectThat(
    outcome.callback === undefined,
    `${what}: expected an error or confirmation page, but the browser was sent to ${outcome.callback ?? ''}`,
  )
  const at = outcome.page.url()
  expectThat(
    at.startsWith(ctx.target.baseUrl),
    `${what}: expected the browser to stay at the IdP, it is at ${at}`,
  )
}
