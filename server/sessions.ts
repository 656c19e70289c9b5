import { randomBytes } from 'node:crypto'
import type { Request, ResponseObject, Server } from '@hapi/hapi'
import type { Deps, Fault } from './deps.ts'
import { randomToken, sha256Hex } from './protocol/digest.ts'
import type { Session } from './store/store.ts'

/** The `__Host-` prefix pins the cookie to this origin: Secure, Path=/, no Domain. */
export const SESSION_COOKIE = '__Host-idp_session'
/** Binds a pending sign-in (interaction) to the browser that started it. */
export const INTERACTION_COOKIE = '__Host-idp_interaction'
/**
 * The session cookie of the self-test's broken server that sets it without Secure (SEC-07's
 * `session-cookie-not-secure`): a browser refuses a `__Host-` cookie that is not Secure
 * (RFC 6265bis §4.1.3.2), so the fault's cookie goes without the prefix.
 */
const UNSECURED_SESSION_COOKIE = 'idp_session'

/** The session cookie's name: SESSION_COOKIE, unless a test-only fault drops its Secure. */
export const sessionCookieName = (faults: ReadonlySet<Fault>): string =>
  faults.has('session-cookie-not-secure') ? UNSECURED_SESSION_COOKIE : SESSION_COOKIE

/**
 * Declares the cookies: Secure, HttpOnly, SameSite=Lax, never signed or encoded by hapi. The
 * test-only faults of SEC-07 drop Secure or HttpOnly from the session cookie.
 */
export function registerCookies(server: Server, faults: ReadonlySet<Fault> = new Set()): void {
  for (const name of [sessionCookieName(faults), INTERACTION_COOKIE]) {
    const session = name !== INTERACTION_COOKIE
    server.state(name, {
      isSecure: !(session && faults.has('session-cookie-not-secure')),
      isHttpOnly: !(session && faults.has('session-cookie-not-httponly')),
      // LOGIN-05's sabotage: the session cookie goes on cross-site requests too
      isSameSite: session && faults.has('session-cookie-samesite-none') ? 'None' : 'Lax',
      path: '/',
      encoding: 'none',
      strictHeader: true,
      ignoreErrors: true,
      clearInvalid: true,
    })
  }
}

const cookie = (request: Request, name: string): string | undefined => {
  const v = (request.state as Record<string, unknown> | null)?.[name]
  return typeof v === 'string' && /^[A-Za-z0-9_-]{43}$/.test(v) ? v : undefined
}

/** The live login session of the browser, if any. */
export async function currentSession(
  request: Request,
  deps: Pick<Deps, 'store' | 'clock' | 'faults'>,
): Promise<Session | undefined> {
  const id = cookie(request, sessionCookieName(deps.faults))
  return id ? deps.store.sessions.get(sha256Hex(id), deps.clock()) : undefined
}

/** Starts a session after a successful login: the cookie will hold the id, the store its digest. */
export async function createSession(
  userId: string,
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'faults'>,
  /** Test-only (the SEC-07 fault): reuse this identifier instead of a fresh one. */
  reuse?: string,
): Promise<{ cookie: string; session: Session }> {
  // test-only fault (SEC-06): 32 random bits behind a fixed prefix, in the cookie's 43 characters
  const weak = () => `session-${randomBytes(4).toString('hex')}`.padEnd(43, '0')
  const id = reuse ?? (deps.faults.has('weak-session-ids') ? weak() : randomToken())
  const now = deps.clock()
  const session: Session = {
    digest: sha256Hex(id),
    userId,
    authTime: now,
    expiresAt: now + deps.config.sessionTtl,
  }
  // the reused identifier's session is already stored (that is the fault: it lives on)
  if (reuse === undefined) await deps.store.sessions.insert(session)
  return { cookie: id, session }
}

export function setSessionCookie(
  response: ResponseObject,
  cookie: string,
  deps: Pick<Deps, 'config' | 'faults'>,
): ResponseObject {
  return response.state(sessionCookieName(deps.faults), cookie, {
    ttl: deps.config.sessionTtl * 1000,
  })
}

/** Ends the browser's session (logout), server-side and in the cookie. */
export async function endSession(
  request: Request,
  response: ResponseObject,
  deps: Pick<Deps, 'store' | 'clock' | 'faults'>,
): Promise<void> {
  const name = sessionCookieName(deps.faults)
  const id = cookie(request, name)
  if (id) await deps.store.sessions.end(sha256Hex(id), deps.clock())
  // LOGOUT-01's and LOGOUT-05's sabotage (with logout-keeps-session): the cookie stays as well
  if (!deps.faults.has('logout-keeps-cookie')) response.unstate(name)
}

/** The session identifier the browser sent, if well-formed. */
export const sessionCookie = (
  request: Request,
  faults: ReadonlySet<Fault> = new Set(),
): string | undefined => cookie(request, sessionCookieName(faults))

export const interactionCookie = (request: Request): string | undefined =>
  cookie(request, INTERACTION_COOKIE)
