import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { passwordHashing, windowStart as startOf } from '../config.ts'
import { accessDenied, invalidRequest, OAuthError } from '../errors.ts'
import { rateLimitHeaders, tooManyRequests, type RateLimitState } from '../plugins/rate-limit.ts'
import type { AuthorizationRequest } from '../protocol/authorization-request.ts'
import { clientAddress } from '../protocol/client-address.ts'
import { digestsEqual, sha256Hex } from '../protocol/digest.ts'
import { formField, rawParams } from '../protocol/params.ts'
import {
  createSession,
  interactionCookie,
  INTERACTION_COOKIE,
  setSessionCookie,
} from '../sessions.ts'
import type { User } from '../store/store.ts'
import { HashingBusy } from '../users/hashing-gate.ts'
import { dummyHash, hashPassword, needsRehash, verificationWeight } from '../users/passwords.ts'
import { loginPage } from '../views/login.ts'
import { newNonce, page } from '../views/respond.ts'
import { errorPageResponse, errorRedirect, issueCodeParams, redirectToClient } from './authorize.ts'

/** One message for an unknown user and a wrong password: no user enumeration. */
export const LOGIN_FAILED = 'Incorrect username or password.'

type LoginDeps = Pick<
  Deps,
  | 'store'
  | 'clock'
  | 'config'
  | 'rateLimits'
  | 'log'
  | 'hashing'
  | 'verifyPassword'
  | 'passwordCosts'
>

/**
 * Counts a password check against the login limit, per client IP + username (RFC 6749 §10.10,
 * ARCHITECTURE.md). Only failures count, so a user who signs in often is never throttled; but
 * once the failures reach the limit, a correct password is refused too, or throttling would not
 * slow down guessing. The store's counters only go up, so the failures seen at a success are
 * the attempts minus the successes.
 */
async function countAttempt(
  { limit, key, windowStart, window }: LoginWindow,
  succeeded: boolean,
  deps: LoginDeps,
): Promise<RateLimitState & { blocked: boolean }> {
  const hit = (counter: string) =>
    deps.store.rateLimits.hit(`${key}:${counter}`, windowStart, window)
  const attempts = await hit('attempts')
  // a success does not count as a failure; a failure includes this attempt
  const failures = succeeded ? attempts - (await hit('successes')) : await hit('failures')
  return {
    limit,
    remaining: Math.max(0, limit - failures),
    reset: windowStart + window,
    blocked: succeeded ? failures >= limit : failures > limit,
  }
}

/** The login limit's counter key and current window for this client IP + username. */
type LoginWindow = ReturnType<typeof loginWindow>
function loginWindow(request: Request, username: string, deps: LoginDeps) {
  const limits = deps.rateLimits().login
  const { limit, window } = limits
  const windowStart = startOf(deps.clock(), limits)
  const key = `login:${clientAddress(request, deps.config.trustProxy)}:${sha256Hex(username)}`
  return { limit, window, windowStart, key }
}

/**
 * The window of the per-address limit on failed sign-ins, whatever the username: throttling
 * each IP + username alone lets one address try a common password against every user
 * (password spraying, RFC 6749 §10.10).
 */
function addressWindow(request: Request, deps: LoginDeps): LoginWindow {
  const limits = deps.rateLimits().loginaddress
  const { limit, window } = limits
  const windowStart = startOf(deps.clock(), limits)
  const key = `loginaddress:${clientAddress(request, deps.config.trustProxy)}`
  return { limit, window, windowStart, key }
}

/** Counts a failed sign-in against its address; the state when the address is over its limit. */
async function countAddressFailure(
  { limit, key, windowStart, window }: LoginWindow,
  deps: LoginDeps,
): Promise<(RateLimitState & { blocked: boolean }) | undefined> {
  try {
    const failures = await deps.store.rateLimits.hit(`${key}:failures`, windowStart, window)
    return failures > limit
      ? { limit, remaining: 0, reset: windowStart + window, blocked: true }
      : undefined
  } catch (err) {
    deps.log('rate-limit-unavailable', { error: (err as Error).message })
    return undefined
  }
}

/**
 * The limit's state when this client IP + username has already used up its failures, read
 * before the password is checked: a blocked attempt is refused whatever the password, so a
 * throttled guesser costs one counter read instead of a password hash (tens of ms of CPU) and is
 * not counted again. Undefined while attempts remain, or when the counter cannot be read.
 */
async function alreadyBlocked(
  { limit, key, windowStart, window }: LoginWindow,
  deps: LoginDeps,
): Promise<RateLimitState | undefined> {
  try {
    const failures = await deps.store.rateLimits.count(`${key}:failures`, windowStart)
    return failures >= limit ? { limit, remaining: 0, reset: windowStart + window } : undefined
  } catch (err) {
    deps.log('rate-limit-unavailable', { error: (err as Error).message })
    return undefined
  }
}

/**
 * Replaces a hash made with another algorithm or cost than the configured ones, now that the
 * password is known to be right: a scrypt hash becomes Argon2id (the default), and raising
 * ARGON2_MEMORY upgrades each user, at their next sign-in. A failure leaves the old hash, which
 * still verifies; it never fails the sign-in.
 */
async function rehash(user: User, password: string, deps: LoginDeps): Promise<void> {
  try {
    // through the gate like every hash; a busy gate leaves the old hash for the next sign-in
    const next = await deps.hashing.run(() =>
      hashPassword(password.slice(0, 1024), passwordHashing(deps.config)),
    )
    if (await deps.store.users.replacePasswordHash(user.id, user.passwordHash, next))
      deps.log('password-rehashed', { userId: user.id })
  } catch (err) {
    deps.log('password-rehash-failed', { userId: user.id, error: (err as Error).message })
  }
}

/** RFC 6585 §4: 429 with Retry-After; the hosted page for a browser, JSON for anything else. */
function throttled(
  request: Request,
  h: ResponseToolkit,
  state: RateLimitState,
  deps: LoginDeps,
): ResponseObject {
  return refused(
    request,
    h,
    tooManyRequests(state, deps.clock()),
    'Too many failed sign-in attempts. Try again later.',
  )
}

/**
 * A sign-in refused before its password was judged (throttled, or the hashing queue full): the
 * JSON error for a client that does not take HTML, else the hosted error page with the same
 * status and headers (Retry-After).
 */
function refused(
  request: Request,
  h: ResponseToolkit,
  error: OAuthError,
  description: string,
): ResponseObject {
  const accept = (request.headers as Record<string, string | undefined>).accept ?? ''
  if (!accept.includes('text/html')) throw error
  const res = errorPageResponse(
    h,
    new OAuthError('temporarily_unavailable', description),
    undefined,
    error.status,
  )
  for (const [name, value] of Object.entries(error.headers)) res.header(name, value)
  return res
}

/**
 * A sign-in refused because the hashing queue is full: 503 with Retry-After (RFC 9110 §15.6.4),
 * the same answer for every username since no user was looked up. It counts as a failed
 * sign-in of its address, so one address that retries each refusal at once uses up its
 * `loginaddress` budget and is then answered 429 for a counter read, instead of spinning on
 * 503s; it does not count against the username, whose owner did nothing.
 */
async function busy(
  request: Request,
  h: ResponseToolkit,
  byAddress: LoginWindow,
  deps: LoginDeps,
): Promise<ResponseObject> {
  const over = await countAddressFailure(byAddress, deps)
  await holdRefusal(request, deps)
  if (over) return throttled(request, h, over, deps)
  return refused(request, h, new HashingBusy(), 'The server is busy. Try again in a moment.')
}

/**
 * Holds a sign-in refused before its hash for `PASSWORD_HASH_BUSY_HOLD` on a timer (the
 * hashing gate bounds how many), ended early if the client closes its connection: a flood
 * client that retries every refusal at once would otherwise turn each cheap refusal into the
 * next request at once, and those requests, not the hashes, were what delayed every other
 * endpoint under a sign-in flood (issue 33).
 */
async function holdRefusal(request: Request, deps: LoginDeps): Promise<void> {
  const closed = new AbortController()
  const abort = () => closed.abort()
  request.raw.res.once('close', abort)
  try {
    await deps.hashing.holdRefusal(closed.signal)
  } finally {
    request.raw.res.removeListener('close', abort)
  }
}

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
      const form = rawParams(request.payload)
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
      const id = formField(form, 'interaction')
      const csrf = formField(form, 'csrf') ?? ''
      if (!id || !csrf)
        return errorPageResponse(h, invalidRequest('the sign-in form is incomplete'), undefined)
      if (interactionCookie(request) !== id)
        return forbidden('this sign-in was started in another browser or has expired')
      const cancelling = formField(form, 'action') === 'cancel'
      const byAddress = addressWindow(request, deps)
      if (!cancelling) {
        // before any store work: a throttled address, or a full hashing queue, is refused for
        // the price of a counter, so a flood of sign-ins that retries every refusal at once
        // (issue 33) costs no interaction read, user lookup or page
        const addressBlocked = await alreadyBlocked(byAddress, deps)
        if (addressBlocked) {
          await holdRefusal(request, deps)
          return throttled(request, h, addressBlocked, deps)
        }
        if (deps.hashing.full) return busy(request, h, byAddress, deps)
      }
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

      if (cancelling) {
        await deps.store.interactions.take(id)
        return errorRedirect(
          h,
          ar,
          accessDenied('the user cancelled the sign-in'),
          deps,
          303,
        ).unstate(INTERACTION_COOKIE)
      }
      const username = formField(form, 'username') ?? ''
      const password = formField(form, 'password') ?? ''
      const counted = loginWindow(request, username, deps)
      const blocked = await alreadyBlocked(counted, deps)
      if (blocked) return throttled(request, h, blocked, deps)
      // no user name holds U+0000 (PostgreSQL's text cannot store one, so the query would
      // fail: a 500 for a malformed sign-in); such a name is an unknown user, hashed as one
      const user =
        username !== '' && username.length <= 255 && !username.includes('\u0000')
          ? await deps.store.users.byUsername(username)
          : undefined
      // the hash is checked even for an unknown user, so timing does not tell them apart
      const current = passwordHashing(deps.config)
      const stored = user?.passwordHash ?? dummyHash(current)
      let verified = false
      try {
        // bounded: a burst of sign-ins waits here (or is refused) instead of filling the
        // thread pool the store's queries need
        verified = await deps.hashing.run(
          () => deps.verifyPassword(password.slice(0, 1024), stored, current, deps.passwordCosts),
          verificationWeight(stored, current, deps.passwordCosts),
        )
      } catch (err) {
        // the queue filled up since the check above: refused the same way
        if (err instanceof HashingBusy) return busy(request, h, byAddress, deps)
        throw err
      }
      const valid = verified && user !== undefined
      let limit: (RateLimitState & { blocked: boolean }) | undefined
      try {
        limit = await countAttempt(counted, valid, deps)
      } catch (err) {
        // as for the API limits: counters that cannot be written do not take sign-in down
        deps.log('rate-limit-unavailable', { error: (err as Error).message })
      }
      if (limit?.blocked) return throttled(request, h, limit, deps)
      const sprayed = valid ? undefined : await countAddressFailure(byAddress, deps)
      if (sprayed) return throttled(request, h, sprayed, deps)
      const withLimit = (res: ResponseObject): ResponseObject => {
        if (limit)
          for (const [name, value] of Object.entries(rateLimitHeaders(limit)))
            res.header(name, value)
        return res
      }
      if (!valid) {
        const nonce = newNonce()
        const branding = await deps.store.clients.branding(ar.clientId)
        return withLimit(
          page(
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
          ),
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
      if (needsRehash(user.passwordHash, current)) await rehash(user, password, deps)
      const { cookie, session } = await createSession(user.id, deps)
      const params = await issueCodeParams(
        ar,
        { userId: user.id, authTime: session.authTime },
        deps,
      )
      const response = redirectToClient(h, ar.redirectUri, params, 303)
      return withLimit(setSessionCookie(response, cookie, deps).unstate(INTERACTION_COOKIE))
    },
  },
})
