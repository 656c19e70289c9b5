import { setTimeout as sleep } from 'node:timers/promises'
import type { BrowserContext } from '@playwright/test'

/**
 * How long sign-ins are taken to stay throttled after a 429 that names no Retry-After (RFC 6585
 * §4: the response "MAY include a Retry-After header"): a minute, the usual window of a login
 * throttle.
 */
export const DEFAULT_THROTTLE_MS = 60_000

/** The longest Retry-After believed (an HTTP-date far ahead is not waited for past this). */
export const MAX_THROTTLE_MS = 10 * 60_000

/**
 * What a sign-in needs after the wait, of the check's remaining time: the sign-in itself and
 * the pages after it. A wait that would leave less is not started.
 */
export const SIGN_IN_ROOM_MS = 10_000

/**
 * A Retry-After header's delay in ms (RFC 9110 §10.2.3: delay-seconds or an HTTP-date), from
 * `now`; undefined when absent or unreadable.
 */
export function retryAfterMs(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Math.min(MAX_THROTTLE_MS, Number(text) * 1000)
  const date = Date.parse(text)
  if (Number.isNaN(date)) return undefined
  return Math.min(MAX_THROTTLE_MS, Math.max(0, date - now))
}

/**
 * Whether an answer to a sign-in says "throttled": 429 (RFC 6585 §4), or 503 with a Retry-After
 * (RFC 9110 §15.6.4: the server is "temporarily" unable, for the time it names).
 */
export function isThrottle(status: number | undefined, retryAfter: string | undefined): boolean {
  return status === 429 || (status === 503 && retryAfter !== undefined)
}

/**
 * The run's one record of "the IdP throttles sign-ins until T": learned from the first 429 (or
 * 503 with Retry-After) a sign-in met, so that every later sign-in of the run waits it out
 * before it starts (browser.ts `browse`) instead of meeting the throttle and being misread.
 * The suite's own failed sign-ins (the throttling, enumeration and spraying probes) are counted
 * here, so that a check left inconclusive can say who tripped the throttle.
 */
export class SignInThrottle {
  #until = 0
  #failedSignIns = 0
  #last: { status: number; retryAfter: string | undefined } | undefined

  /** A sign-in was answered `status` with `retryAfter` at `now`: sign-ins wait until then. */
  note(status: number, retryAfter: string | undefined, now: number = Date.now()): void {
    const ms = retryAfterMs(retryAfter, now) ?? DEFAULT_THROTTLE_MS
    this.#until = Math.max(this.#until, now + ms)
    this.#last = { status, retryAfter }
  }

  /** One failed sign-in the suite sent on purpose (a wrong password, an unknown user). */
  failedSignIn(): void {
    this.#failedSignIns++
  }

  /** How long sign-ins are still throttled, in ms (0 when they are not). */
  remainingMs(now: number = Date.now()): number {
    return Math.max(0, this.#until - now)
  }

  /**
   * "the IdP throttled sign-ins (HTTP 429, Retry-After: 60) after the suite's own 12 failed
   * sign-ins of this run; throttled until 11:52:03Z".
   */
  describe(now: number = Date.now()): string {
    const last = this.#last
    const answer = last
      ? `HTTP ${String(last.status)}${last.retryAfter === undefined ? `, no Retry-After: taken as ${String(DEFAULT_THROTTLE_MS / 1000)} s` : `, Retry-After: ${last.retryAfter}`}`
      : 'throttled'
    const who =
      this.#failedSignIns > 0
        ? ` after the suite's own ${String(this.#failedSignIns)} failed sign-in${this.#failedSignIns === 1 ? '' : 's'} of this run (its throttling, enumeration and spraying probes)`
        : ''
    const left = this.remainingMs(now)
    return `the IdP throttled sign-ins from this address (${answer})${who}; ${left > 0 ? `throttled for ${String(Math.ceil(left / 1000))} s more` : 'the throttle has since lapsed'}`
  }

  /**
   * Waits until sign-ins are no longer throttled when that fits in `budgetMs` (the waiting
   * check's remaining time) with SIGN_IN_ROOM_MS to spare; returns how long it waited, or
   * undefined (without waiting) when it does not fit.
   */
  async waitOut(budgetMs: number, now: number = Date.now()): Promise<number | undefined> {
    const wait = this.remainingMs(now)
    if (wait === 0) return 0
    if (wait + SIGN_IN_ROOM_MS > budgetMs) return undefined
    // a wait of the length the IdP named, bounded by the check's own time (checked above)
    await sleep(wait)
    return wait
  }
}

const contextThrottle = new WeakMap<BrowserContext, SignInThrottle>()

/** Sign-ins in `context` share the run's `throttle` (check.ts, for each context it opens). */
export function throttleIn(context: BrowserContext, throttle: SignInThrottle): void {
  contextThrottle.set(context, throttle)
}

/** The run's sign-in throttle `context` shares, if a run opened it. */
export function throttleOf(context: BrowserContext): SignInThrottle | undefined {
  return contextThrottle.get(context)
}
