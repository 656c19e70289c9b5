import { randomBytes } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import type { Request, ServerStateCookieOptions, ServerStateFormat } from '@hapi/hapi'
import type { App, AppOptions } from '../../server/app.ts'
import { clientAddress } from '../../server/protocol/client-address.ts'
import { sha256Hex } from '../../server/protocol/digest.ts'
import { rawParams } from '../../server/protocol/params.ts'
import { LOGIN_FAILED } from '../../server/routes/login.ts'
import {
  INTERACTION_COOKIE,
  interactionCookie,
  SESSION_COOKIE,
  sessionCookie,
} from '../../server/sessions.ts'
import type { Store, User } from '../../server/store/store.ts'
import { dummyHash, verifyPassword, verifyPasswordAtCost } from '../../server/users/passwords.ts'
import { escapeHtml } from '../../server/views/html.ts'
import { type Extend, onRequestOf, onResponseOf, rewriteHtml, type Route } from './broken-server.ts'

/*
 * The self-test's broken sign-in and session cookie (issue 34), built from outside the server:
 * hapi extensions around POST /auth/login and the logout route, the server's cookie
 * definitions, and wrappers of its store. kit.ts re-exports them for the sabotages.
 */

const LOGIN: Route = { path: '/auth/login', method: 'post' }

/** The server's one message for a failed sign-in (what a sound page says). */
export { LOGIN_FAILED }

/** The login form as hapi parsed it (a field sent twice is an array); {} when there is none. */
const formOf = (request: Request): Record<string, unknown> => rawParams(request.payload)

const fieldOf = (request: Request, name: string): string | undefined => {
  const value = formOf(request)[name]
  return typeof value === 'string' ? value : undefined
}

/** The user the form names, looked up as the login route does (an over-long name is nobody). */
async function userOf(app: App, request: Request): Promise<User | undefined> {
  const username = fieldOf(request, 'username') ?? ''
  return username !== '' && username.length <= 255
    ? app.deps.store.users.byUsername(username)
    : undefined
}

/** Whether the answer is the success redirect of a sign-in (to the client, with a code). */
const isSuccessRedirect = (location: unknown): boolean =>
  typeof location === 'string' &&
  URL.canParse(location) &&
  new URL(location).searchParams.has('code')

/**
 * One of the defences of the credential post against cross-site request forgery: its Origin,
 * the browser's interaction cookie, the form token's value, and the form token being there.
 */
export type SignInDefence = 'origin' | 'interaction cookie' | 'form token' | 'form token present'

/**
 * A login route that skips the given defences (RFC 6749 §10.12) and keeps the others: what it
 * reads is made to pass them before its handler runs. The Origin header is dropped; the
 * browser's interaction cookie is taken to be the form's interaction; a form without a token is
 * given one; the form's token is made the one the interaction's record expects, by storing the
 * record again with the posted token's digest.
 */
export const signInSkips =
  (...skipped: readonly [SignInDefence, ...SignInDefence[]]): Extend =>
  (app) =>
    onRequestOf(LOGIN, async (request) => {
      if (skipped.includes('origin')) delete request.headers.origin
      const id = fieldOf(request, 'interaction')
      if (id === undefined) return
      if (skipped.includes('interaction cookie')) request.state[INTERACTION_COOKIE] = id
      if (skipped.includes('form token present') && !fieldOf(request, 'csrf'))
        formOf(request).csrf = 'any token at all'
      const csrf = fieldOf(request, 'csrf')
      if (!skipped.includes('form token') || !csrf) return
      const { interactions } = app.deps.store
      const interaction = await interactions.get(id, app.deps.clock())
      if (!interaction || interaction.csrfDigest === sha256Hex(csrf)) return
      if (await interactions.take(id))
        await interactions.insert({ ...interaction, csrfDigest: sha256Hex(csrf) })
    })(app)

/** The login route reads its Cancel button as a plain (failed) sign-in. */
export const signInCancelIgnored: Extend = onRequestOf(LOGIN, (request) => {
  if (fieldOf(request, 'action') === 'cancel') delete formOf(request).action
})

/**
 * A failed sign-in of a known user is answered `ms` later than one of an unknown name, as if
 * only a known user paid for a password check (bounded: one delay per answer).
 */
export const knownUserAnsweredLate =
  (ms: number): Extend =>
  (app) =>
    onResponseOf(LOGIN, async (response, request) => {
      if (response.statusCode === 401 && (await userOf(app, request))) await delay(ms)
    })(app)

/**
 * The first failed sign-in of an unknown name is answered `ms` later, once: one request stalled
 * as a loaded machine stalls one (LOGIN-07 must not let one stalled sample hide a real gap).
 */
export const firstUnknownUserStalled =
  (ms: number): Extend =>
  (app) => {
    let stalled = false
    return onResponseOf(LOGIN, async (response, request) => {
      if (stalled || response.statusCode !== 401 || (await userOf(app, request))) return
      stalled = true
      await delay(ms)
    })(app)
  }

/**
 * A password verifier that refuses an unknown user (whose sign-in the login route checks
 * against the dummy hash) before any hashing, and checks a known user's password as the server
 * does: an unknown name is answered sooner.
 */
export const unknownUserRefusedBeforeHashing: NonNullable<AppOptions['verifyPassword']> = (
  password,
  stored,
  current,
) =>
  stored === dummyHash(current)
    ? Promise.resolve(false)
    : verifyPasswordAtCost(password, stored, current)

/** A failed sign-in of an unknown name gets its own answer: its own status, or its own message. */
export const unknownUserToldApart =
  (by: { readonly status: number } | { readonly message: string }): Extend =>
  (app) =>
    onResponseOf(LOGIN, async (response, request) => {
      if (response.statusCode !== 401 || (await userOf(app, request))) return
      if ('status' in by) response.code(by.status)
      else if (typeof response.source === 'string')
        (response as { source: unknown }).source = response.source.replace(
          escapeHtml(LOGIN_FAILED),
          escapeHtml(by.message),
        )
    })(app)

/** The page a failed sign-in redirects to under `failedSignInRedirected` (a route of its own). */
const FAILED_PAGE = '/auth/sign-in-failed'

/**
 * A failed sign-in answered the post-redirect-get way: a 303 to a page of its own (a route added
 * to the built server), which shows the message the failed post left for it. `tell` says, by
 * whether the user name is known, what the page says and which parameters the redirect carries
 * besides the message's own one-time key.
 */
export const failedSignInRedirected =
  (
    tell: (known: boolean) => {
      readonly message: string
      readonly query?: Readonly<Record<string, string>>
    },
  ): Extend =>
  async (app) => {
    // each message is read once by the page it was left for (bounded: taken when read)
    const left = new Map<string, string>()
    app.server.route({
      method: 'GET',
      path: FAILED_PAGE,
      handler: (request, h) => {
        const key = typeof request.query.flash === 'string' ? request.query.flash : ''
        const message = left.get(key) ?? 'This page has expired.'
        left.delete(key)
        return h
          .response(`<!doctype html><title>Sign in</title><p>${escapeHtml(message)}</p>`)
          .type('text/html')
      },
    })
    await onResponseOf(LOGIN, async (response, request) => {
      if (response.statusCode !== 401) return
      const { message, query } = tell((await userOf(app, request)) !== undefined)
      const flash = randomBytes(8).toString('hex')
      left.set(flash, message)
      response.code(303)
      response.location(`${FAILED_PAGE}?${new URLSearchParams({ flash, ...query }).toString()}`)
    })(app)
  }

/** The page after a failed sign-in fills the username back into its field unescaped. */
export const usernameEchoedRaw: Extend = rewriteHtml(LOGIN, (html, request, response) => {
  const username = (fieldOf(request, 'username') ?? '').slice(0, 255)
  return response.statusCode === 401
    ? html.replace(`value="${escapeHtml(username)}"`, () => `value="${username}"`)
    : html
})

/**
 * A sign-in whose user name is longer than `max` characters fails inside the server once its
 * interaction is this browser's and live (the route looks the user up only then): what a
 * VARCHAR(max) column does in PostgreSQL. The error escapes the route, and hapi answers 500.
 * A post without its interaction is refused as the sound server refuses it.
 */
export const userNameColumnOf =
  (max: number): Extend =>
  (app) =>
    onRequestOf(LOGIN, async (request) => {
      const username = fieldOf(request, 'username')
      const id = fieldOf(request, 'interaction')
      if (username === undefined || username.length <= max || id === undefined) return
      if (interactionCookie(request) !== id) return
      if (!(await app.deps.store.interactions.get(id, app.deps.clock()))) return
      throw new Error(`value too long for type character varying(${String(max)})`)
    })(app)

/** The success redirect of a sign-in is sent with this status instead of the server's own. */
export const signInRedirectStatus = (status: number): Extend =>
  onResponseOf(LOGIN, (response) => {
    if (isSuccessRedirect(response.headers.location)) response.code(status)
  })

/** The session identifier the browser brought (a well-formed one) is kept at sign-in. */
export const sessionKeptAtSignIn: Extend = (app) =>
  onResponseOf(LOGIN, (response, request) => {
    const planted = sessionCookie(request)
    if (planted && isSuccessRedirect(response.headers.location))
      response.state(SESSION_COOKIE, planted, { ttl: app.deps.config.sessionTtl * 1000 })
  })(app)

/**
 * The authorization endpoint answers prompt=none as if no one were signed in (login_required),
 * whatever session the browser brings: the session cookie is hidden from those requests only.
 */
export const promptNoneSignedOut: Extend = (app) => {
  app.server.ext('onPreAuth', (request, h) => {
    if (request.path === '/auth/authorize' && rawParams(request.query).prompt === 'none')
      Reflect.deleteProperty(request.state, SESSION_COOKIE)
    return h.continue
  })
}

/**
 * Not a breakage: a successful sign-in also sets a cookie scripts may read (a double-submit CSRF
 * token, as many frameworks set), Secure but not HttpOnly, that carries no session.
 */
export const readableCookieAtSignIn: Extend = onResponseOf(LOGIN, (response) => {
  if (isSuccessRedirect(response.headers.location))
    response.state('XSRF-TOKEN', randomBytes(16).toString('hex'), {
      isSecure: true,
      isHttpOnly: false,
      isSameSite: 'Lax',
      path: '/',
    })
})

/**
 * Not fixation: at sign-in the session the browser brought is ended, and its identifier written
 * back into the cookie (the new session is left unreachable), so the browser keeps the planted
 * value while it carries no session.
 */
export const plantedSessionEndedAndKept: Extend = (app) =>
  onResponseOf(LOGIN, async (response, request) => {
    const planted = sessionCookie(request)
    if (!planted || !isSuccessRedirect(response.headers.location)) return
    await app.deps.store.sessions.end(sha256Hex(planted), app.deps.clock())
    response.state(SESSION_COOKIE, planted, { ttl: app.deps.config.sessionTtl * 1000 })
  })(app)

/**
 * A sign-in's session is given an identifier of 32 random bits behind a fixed prefix, in the
 * cookie's 43 characters: the session is stored under it, and the cookie carries it instead of
 * the server's own (whose session is left unreachable).
 */
export const weakSessionIds: Extend = (app) =>
  onResponseOf(LOGIN, async (response, request) => {
    const user = await userOf(app, request)
    if (!user || !isSuccessRedirect(response.headers.location)) return
    const id = `session-${randomBytes(4).toString('hex')}`.padEnd(43, '0')
    const now = app.deps.clock()
    const ttl = app.deps.config.sessionTtl
    await app.deps.store.sessions.insert({
      digest: sha256Hex(id),
      userId: user.id,
      authTime: now,
      expiresAt: now + ttl,
    })
    response.state(SESSION_COOKIE, id, { ttl: ttl * 1000 })
  })(app)

/** Signing out ends the session but leaves the browser its session cookie. */
export const logoutKeepsSessionCookie: Extend = (app) =>
  onResponseOf({ path: '/auth/logout' }, (response, request) => {
    const brought = sessionCookie(request)
    if (brought) response.state(SESSION_COOKIE, brought, { ttl: app.deps.config.sessionTtl * 1000 })
  })(app)

/** The session cookie is set with other attributes than the server declares (hapi's definition). */
export const sessionCookieWith =
  (attributes: Partial<ServerStateCookieOptions>): Extend =>
  (app) => {
    const definition = app.server.states.cookies[SESSION_COOKIE]
    if (!definition) throw new Error(`the server declares no ${SESSION_COOKIE} cookie`)
    Object.assign(definition, attributes)
  }

/**
 * The session cookie is set under another name, with other attributes (a browser refuses a
 * `__Host-` cookie that is not Secure, RFC 6265bis §4.1.3.2, so one without Secure needs
 * another name), and read back under that name: hapi formats every Set-Cookie through
 * `server.states.format`, which renames it on the way out; the parsed cookie is handed to
 * the server under its own name before the route runs.
 */
export const sessionCookieRenamed =
  (name: string, attributes: Partial<ServerStateCookieOptions>): Extend =>
  (app) => {
    const states = app.server.states
    app.server.state(name, { ...states.cookies[SESSION_COOKIE], ...attributes })
    type Format = (
      cookies: ServerStateFormat | ServerStateFormat[],
      ...rest: unknown[]
    ) => Promise<string>
    // hapi passes the request as a second argument, which the declared type leaves out
    const format: Format = states.format.bind(states)
    ;(states as { format: Format }).format = (cookies, ...rest) =>
      format(
        (Array.isArray(cookies) ? cookies : [cookies]).map((c) =>
          c.name === SESSION_COOKIE ? { ...c, name } : c,
        ),
        ...rest,
      )
    app.server.ext('onPreAuth', (request, h) => {
      if (name in request.state) request.state[SESSION_COOKIE] = request.state[name]
      return h.continue
    })
  }

/** The login throttle's counters (routes/login.ts keys them `login:…` and `loginaddress:…`). */
const LOGIN_COUNTERS = /^login(address)?:/
const ADDRESS_COUNTERS = /^loginaddress:/

/** A store whose rate-limit counters named by `uncounted` never count: every hit is the first. */
const uncounting =
  (uncounted: (key: string) => boolean) =>
  (store: Store): Store => ({
    ...store,
    rateLimits: {
      hit: (key, windowStart, window) =>
        uncounted(key) ? Promise.resolve(1) : store.rateLimits.hit(key, windowStart, window),
      count: (key, windowStart) =>
        uncounted(key) ? Promise.resolve(0) : store.rateLimits.count(key, windowStart),
    },
  })

/** Failed sign-ins are never throttled: the store never counts the login counters. */
export const signInsUncounted = uncounting((key) => LOGIN_COUNTERS.test(key))

/** Failed sign-ins are limited per user name only, never per address (password spraying). */
export const sprayingUncounted = uncounting((key) => ADDRESS_COUNTERS.test(key))

/**
 * The login throttle holds back wrong passwords only: while a post with the right password is
 * handled, the store does not count its address's and user name's counters, so a guesser who
 * finds the password while throttled signs in.
 */
export function throttleSparesRightPassword(): {
  readonly store: (store: Store) => Store
  readonly extend: Extend
} {
  /** The counters' prefixes of the posts with a right password now being handled. */
  const spared = new Map<Request, readonly string[]>()
  const isSpared = (key: string) =>
    [...spared.values()].some((prefixes) => prefixes.some((p) => key.startsWith(p)))
  return {
    store: uncounting(isSpared),
    extend: async (app) => {
      await onRequestOf(LOGIN, async (request) => {
        const user = await userOf(app, request)
        const password = (fieldOf(request, 'password') ?? '').slice(0, 1024)
        if (!user || !(await verifyPassword(password, user.passwordHash))) return
        const address = clientAddress(request, app.deps.config.trustProxy)
        spared.set(request, [
          `login:${address}:${sha256Hex(fieldOf(request, 'username') ?? '')}:`,
          `loginaddress:${address}:`,
        ])
      })(app)
      app.server.ext('onPreResponse', (request, h) => {
        spared.delete(request)
        return h.continue
      })
    },
  }
}
