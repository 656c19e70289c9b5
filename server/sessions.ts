import type { Request, ResponseObject, Server } from '@hapi/hapi'
import type { Deps } from './deps.ts'
import { randomToken, sha256Hex } from './protocol/digest.ts'
import type { Session } from './store/store.ts'

/** The `__Host-` prefix pins the cookie to this origin: Secure, Path=/, no Domain. */
export const SESSION_COOKIE = '__Host-idp_session'
/** Binds a pending sign-in (interaction) to the browser that started it. */
export const INTERACTION_COOKIE = '__Host-idp_interaction'

/** Declares the cookies: Secure, HttpOnly, SameSite=Lax, never signed or encoded by hapi. */
export function registerCookies(server: Server): void {
  for (const name of [SESSION_COOKIE, INTERACTION_COOKIE]) {
    server.state(name, {
      isSecure: true,
      isHttpOnly: true,
      isSameSite: 'Lax',
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
  deps: Pick<Deps, 'store' | 'clock'>,
): Promise<Session | undefined> {
  const id = cookie(request, SESSION_COOKIE)
  return id ? deps.store.sessions.get(sha256Hex(id), deps.clock()) : undefined
}

/** Starts a session after a successful login: the cookie will hold the id, the store its digest. */
export async function createSession(
  userId: string,
  deps: Pick<Deps, 'store' | 'clock' | 'config'>,
): Promise<{ cookie: string; session: Session }> {
  const id = randomToken()
  const now = deps.clock()
  const session: Session = {
    digest: sha256Hex(id),
    userId,
    authTime: now,
    expiresAt: now + deps.config.sessionTtl,
  }
  await deps.store.sessions.insert(session)
  return { cookie: id, session }
}

export function setSessionCookie(
  response: ResponseObject,
  cookie: string,
  deps: Pick<Deps, 'config'>,
): ResponseObject {
  return response.state(SESSION_COOKIE, cookie, {
    ttl: deps.config.sessionTtl * 1000,
  })
}

/** Ends the browser's session (logout), server-side and in the cookie. */
export async function endSession(
  request: Request,
  response: ResponseObject,
  deps: Pick<Deps, 'store' | 'clock'>,
): Promise<void> {
  const id = cookie(request, SESSION_COOKIE)
  if (id) await deps.store.sessions.end(sha256Hex(id), deps.clock())
  response.unstate(SESSION_COOKIE)
}

/** The session identifier the browser sent, if well-formed. */
export const sessionCookie = (request: Request): string | undefined =>
  cookie(request, SESSION_COOKIE)

export const interactionCookie = (request: Request): string | undefined =>
  cookie(request, INTERACTION_COOKIE)
