import type { BrowserContext, Cookie } from '@playwright/test'
import { CookieJar } from 'tough-cookie'
import { browserLike, followWithJar, pageTitle, readApproveForm } from './form-sign-in.ts'
import type { CheckContext } from './check.ts'
import type { Http } from './http.ts'
import type { InteractionConfig, TargetUser } from './target.ts'

/**
 * What one run counted, for the benchmark (`npm run bench -- --suite`) and the run's summary:
 * how many times a user was signed in through the login page, how many browser contexts were
 * opened, how many HTTP requests the harness sent itself, and how many authorization codes
 * came from a replay of the IdP's session instead of the browser.
 */
export interface RunCounters {
  browserSignIns: number
  /** Checks that opened a browser context: those whose subject is the page or the session. */
  browserChecks: number
  browserContexts: number
  httpRequests: number
  sessionReplays: number
}

export const newCounters = (): RunCounters => ({
  browserSignIns: 0,
  browserChecks: 0,
  browserContexts: 0,
  httpRequests: 0,
  sessionReplays: 0,
})

/** The run's counters of each browser context the harness opened (see `countSignIn`). */
const contextCounters = new WeakMap<BrowserContext, RunCounters>()

/** Makes sign-ins in `context` count towards `counters`. */
export function countIn(context: BrowserContext, counters: RunCounters): void {
  contextCounters.set(context, counters)
}

/** Counts one sign-in through the login page in `context` (called by the browser flow). */
export function countSignIn(context: BrowserContext): void {
  const counters = contextCounters.get(context)
  if (counters) counters.browserSignIns++
}

/** Where a session replay ended. */
export type ReplayOutcome =
  | {
      readonly kind: 'callback'
      readonly callback: string
      /** The pages answered on the way (`continue (built-in: "Continue")`), in order. */
      readonly answered: readonly string[]
    }
  /** The IdP showed its login form again: the session is gone (or was never reusable). */
  | { readonly kind: 'login' }
  /**
   * Anything else (an error or consent page, a self-submitting form): the browser decides.
   * `atPage`: the replay stopped at a page of the IdP it could not read (HTTP 200), which may be
   * a login page a script renders: the browser, given the session's cookies, tells.
   */
  | { readonly kind: 'other'; readonly why: string; readonly atPage?: boolean }

/**
 * The IdP sessions of one run, one per user: the cookies the browser received when the user
 * signed in through the real login page. Checks whose subject is not the login page obtain
 * further authorization codes by replaying the authorization request with those cookies over
 * HTTP, exactly as a browser with an existing session would (INTERFACE.md §4.1: with a session
 * the IdP redirects to the client without showing the form).
 *
 * Each replay works on a copy of the jar, so what the IdP sets during one replay never changes
 * the session another check replays beside it, except for a replay that reaches the client:
 * its cookies are the session from then on (an IdP may give the session a new identifier when
 * an interaction is answered), and the replays of one session take turns for that reason. Exclusive checks, and checks that log out or
 * change the session, never get here: they drive their own browser contexts.
 */
export class SharedSessions {
  readonly #jars = new Map<string, Promise<CookieJar | undefined>>()
  /** Jars a replay has signed a user in with at least once. */
  readonly #worked = new WeakSet<CookieJar>()
  /**
   * Each established session's line of cookie jars: the IdP may give the session a new
   * identifier whenever an interaction is answered (node-oidc-provider's resume does, against
   * session fixation), so the jar a replay ends with is the session from then on. Replays of
   * one session take turns (`tail`), each with the newest jar (`latest`).
   */
  readonly #lines = new WeakMap<CookieJar, { tail: Promise<void>; latest: CookieJar }>()
  /** Set when a fresh session was not reusable: every later sign-in goes through the browser. */
  unusable: string | undefined
  readonly counters: RunCounters
  /** Told once, when the session turns out not to be reusable. */
  readonly onUnusable: ((why: string) => void) | undefined
  /** Set on a borrowed view (see `borrowed`): the sessions it replays, never changes. */
  readonly #lender: SharedSessions | undefined
  constructor(
    counters: RunCounters = newCounters(),
    onUnusable?: (why: string) => void,
    lender?: SharedSessions,
  ) {
    this.counters = counters
    this.onUnusable = onUnusable
    this.#lender = lender
  }

  /**
   * A view of these sessions for a check that moves the target's clock or limits: it may take
   * codes from a session that exists, but never establishes or drops one, since what it sees
   * of the target then is not the run's normal state (a session signed in at a moved clock, or
   * one taken for gone under a lowered limit). When its replay fails it signs in on its own.
   */
  borrowed(): SharedSessions {
    return new SharedSessions(this.counters, undefined, this)
  }

  /** The user's session, waiting for a sign-in in flight; undefined when there is none. */
  current(user: TargetUser): Promise<CookieJar | undefined> | undefined {
    if (this.#lender) return this.#lender.current(user)
    return this.unusable ? undefined : this.#jars.get(user.username)
  }

  /**
   * Claims the right to establish the user's session: returns a function to call with the
   * signed-in browser context (or undefined when the sign-in did not end at the client), or
   * undefined when another check is already establishing it.
   */
  claim(user: TargetUser): ((context: BrowserContext | undefined) => Promise<void>) | undefined {
    if (this.#lender || this.unusable || this.#jars.has(user.username)) return undefined
    let settle: (jar: CookieJar | undefined) => void = () => undefined
    const pending = new Promise<CookieJar | undefined>((resolve) => (settle = resolve))
    this.#jars.set(user.username, pending)
    return async (context) => {
      const jar = context ? await jarOf(context).catch(() => undefined) : undefined
      if (!jar) this.#jars.delete(user.username)
      settle(jar)
    }
  }

  /** The newest cookies of the session `jar` began (an IdP may have given it a new identifier). */
  newest(jar: CookieJar): CookieJar {
    return (this.#lender ?? this).#lines.get(jar)?.latest ?? jar
  }

  /** Drops the user's session when it is still `jar` (a replay found it gone); settles once dropped. */
  async forget(user: TargetUser, jar: CookieJar): Promise<void> {
    if (this.#lender) return
    // a session that never signed the user in again is not reusable at this target at all
    if (!this.#worked.has(jar) && !this.unusable) {
      this.unusable =
        'the IdP showed its login form to a replay of the session the browser received, so every later sign-in of this run goes through the browser'
      this.onUnusable?.(this.unusable)
    }
    const entry = this.#jars.get(user.username)
    if (!entry) return
    const current = await entry
    if (current === jar && this.#jars.get(user.username) === entry) this.#jars.delete(user.username)
  }

  /** The queue of uses of one shared session (its replays and browser holds), made on first use. */
  #lineOf(jar: CookieJar) {
    let line = this.#lines.get(jar)
    if (!line) {
      line = { tail: Promise.resolve(), latest: jar }
      this.#lines.set(jar, line)
    }
    return line
  }

  /**
   * Sends the authorization request with the session's cookies and follows the IdP's redirects
   * (followWithJar: each hop recorded in the check's transcript) until the client's redirect
   * URI, which is never fetched. On the way it answers, as the browser driver's built-in answers
   * do, a server-rendered consent page or "continue" interstitial whose one form asks nothing
   * and whose only submit approves (readApproveForm), at most `MAX_ANSWERS` of them; a page the
   * target's configuration may describe (`interactions`), a script-rendered page or anything
   * else is left to the browser.
   */
  async replay(
    http: Http,
    jar: CookieJar,
    url: string,
    clientOrigins: readonly string[],
    loginDetect: RegExp,
    interactions: readonly InteractionConfig[] = [],
    /**
     * The IdP's origins (idp-origins.ts: base URL, discovery, `idpOrigins`, learned), whose
     * redirects and pages the replay follows and answers; the authorization URL's always.
     */
    idpOrigins: ReadonlySet<string> = new Set(),
  ): Promise<ReplayOutcome> {
    const root = this.#lender ?? this
    const theLine = root.#lineOf(jar)
    // one replay of a session at a time: another may be giving it a new identifier right now
    let timer: NodeJS.Timeout | undefined
    const waited = new Promise<'busy'>((resolve) => {
      timer = setTimeout(() => resolve('busy'), TURN_WAIT_MS)
    })
    let abandoned = false
    const turn = theLine.tail.then(() =>
      abandoned
        ? undefined
        : this.#replayOnce(
            http,
            theLine.latest,
            url,
            clientOrigins,
            loginDetect,
            interactions,
            new Set([...idpOrigins, new URL(url).origin]),
          ),
    )
    theLine.tail = turn.then(
      (done) => {
        // the session lives on in the cookies the IdP gave on the way to the client
        if (done?.outcome.kind === 'callback') {
          theLine.latest = done.cookies
          root.#lines.set(done.cookies, theLine)
        }
      },
      () => undefined,
    )
    try {
      const done = await Promise.race([turn, waited])
      if (done === 'busy' || done === undefined) {
        // its turn, when it comes, is skipped: no request of this check after it moved on
        abandoned = true
        return {
          kind: 'other',
          why: `other replays of this session took more than ${TURN_WAIT_MS / 1000} s`,
        }
      }
      if (done.outcome.kind === 'callback') {
        this.counters.sessionReplays++
        root.#worked.add(jar)
      }
      return done.outcome
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Takes the session `jar` began for a browser that goes on with its cookies (a page the replay
   * left to the browser: a configured consent, an account chooser, a page a script renders).
   * Replays and other holds of the session wait until `release`: answering an interaction may
   * give the session a new identifier (node-oidc-provider's resume does), and a browser and a
   * replay answering on one session at once leave one of them on the provider's error page
   * ("interaction session and authentication session mismatch"), a verdict that would depend on
   * what ran beside it. `release(cookies)` with the cookies the browser ended with at the client
   * makes them the session from then on. Undefined when other uses of the session took more
   * than TURN_WAIT_MS: the caller then signs in on a session of its own. A hold not released
   * within HOLD_MS is released, so a check that died holding it stops no other.
   */
  async hold(jar: CookieJar): Promise<SessionHold | undefined> {
    const root = this.#lender ?? this
    const theLine = root.#lineOf(jar)
    let free: (cookies: CookieJar | undefined) => void = () => undefined
    const released = new Promise<CookieJar | undefined>((resolve) => (free = resolve))
    let abandoned = false
    const turn = theLine.tail.then(() => (abandoned ? undefined : theLine.latest))
    let limit: NodeJS.Timeout | undefined
    theLine.tail = turn.then(
      async (held) => {
        if (held === undefined) return
        limit = setTimeout(() => free(undefined), HOLD_MS)
        limit.unref()
        const cookies = await released
        clearTimeout(limit)
        if (cookies) {
          theLine.latest = cookies
          root.#lines.set(cookies, theLine)
        }
      },
      () => undefined,
    )
    let timer: NodeJS.Timeout | undefined
    const waited = new Promise<'busy'>((resolve) => {
      timer = setTimeout(() => resolve('busy'), TURN_WAIT_MS)
    })
    try {
      const held = await Promise.race([turn, waited])
      if (held === 'busy' || held === undefined) {
        // its turn, when it comes, is skipped
        abandoned = true
        return undefined
      }
      return { jar: held, release: (cookies) => free(cookies) }
    } finally {
      clearTimeout(timer)
    }
  }

  /** One replay with the session's newest cookies, on a copy of them (see `replay`). */
  async #replayOnce(
    http: Http,
    jar: CookieJar,
    url: string,
    clientOrigins: readonly string[],
    loginDetect: RegExp,
    interactions: readonly InteractionConfig[],
    idp: ReadonlySet<string>,
  ): Promise<{ outcome: ReplayOutcome; cookies: CookieJar }> {
    const cookies = await jar.clone()
    // a form is sent with the Origin of the page that holds it, as a browser sends it
    const sendFrom = (page: string) => browserLike(http, cookies, new URL(page).origin)
    const answered: string[] = []
    let sent = await sendFrom(url)(url)
    for (;;) {
      const end = await followWithJar(
        http,
        cookies,
        sent,
        idp,
        (next) => clientOrigins.includes(next.origin) && !idp.has(next.origin),
      )
      if ('client' in end)
        return {
          outcome: { kind: 'callback', callback: end.client.toString(), answered },
          cookies,
        }
      const res = end.stopped
      const location = res.headers.get('location')
      if (res.status >= 300 && res.status < 400 && location) {
        const next = new URL(location, res.url)
        const why = !idp.has(next.origin)
          ? `redirected to ${next.origin}, not one of the IdP's origins`
          : 'more than 10 redirects'
        return { outcome: { kind: 'other', why }, cookies }
      }
      if (loginDetect.test(res.text)) return { outcome: { kind: 'login' }, cookies }
      // the browser looks at configured interactions first; the replay cannot run their
      // selectors on served HTML, so a page one of them may describe is answered only when its
      // one approving submit is all a user could press or choose there (an account chooser's
      // "Continue as …"): any steps that answer it press that. Anything more is the browser's.
      const configured = interactions.some((i) => !i.url || matches(i.url, res.url))
      const form =
        res.status === 200 && idp.has(new URL(res.url).origin)
          ? readApproveForm(res.text, res.url, { onlyControl: configured })
          : undefined
      if (!form || !idp.has(new URL(form.action).origin)) {
        const title = res.status === 200 ? pageTitle(res.text) : undefined
        const at = new URL(res.url)
        const why = `the IdP answered HTTP ${res.status} without a redirect at ${at.origin}${at.pathname}${title ? ` ("${title}")` : ''}${answered.length > 0 ? ` after ${answered.join(', ')}` : ''}${res.status === 200 ? `: no one-button consent or "continue" form in its HTML${configured ? ' that is all the page offers (a configured interaction may describe it)' : ''}` : ''}`
        return { outcome: { kind: 'other', why, atPage: res.status === 200 }, cookies }
      }
      if (answered.length >= MAX_ANSWERS)
        return {
          outcome: {
            kind: 'other',
            why: `after ${answered.join(', ')} the IdP showed yet another page to answer`,
          },
          cookies,
        }
      answered.push(form.label)
      const fields: Record<string, string[]> = {}
      for (const [name, value] of form.fields) (fields[name] ??= []).push(value)
      const send = sendFrom(res.url)
      sent =
        form.method === 'POST'
          ? await send(form.action, { method: 'POST', form: fields })
          : await send(formGet(form.action, form.fields))
    }
  }
}

/** How long a replay waits for the other replays of its session before the browser decides. */
const TURN_WAIT_MS = 20_000

/** The longest a browser holds a shared session (SharedSessions.hold) before it is taken back. */
const HOLD_MS = 120_000

/** A shared session taken by one browser (SharedSessions.hold). */
export interface SessionHold {
  /** The session's newest cookies, for the browser to go on with. */
  readonly jar: CookieJar
  /**
   * Lets the session's other uses go on; given the cookies the browser ended with at the client,
   * they are the session from then on. Only the first call counts.
   */
  release(cookies?: CookieJar): void
}

/** How many consent / "continue" pages one replay answers before it leaves them to the browser. */
export const MAX_ANSWERS = 3

/** Whether a configured URL pattern matches; a pattern that is no regular expression may. */
function matches(pattern: string, url: string): boolean {
  try {
    return new RegExp(pattern).test(url)
  } catch {
    return true
  }
}

/** The URL a GET form goes to: its action with the query replaced by the fields, as a browser. */
function formGet(action: string, fields: readonly (readonly [string, string])[]): string {
  const to = new URL(action)
  to.search = new URLSearchParams(fields.map(([k, v]) => [k, v])).toString()
  return to.toString()
}

/** The cookies of a signed-in browser context, in a tough-cookie jar. */
export async function jarOf(context: BrowserContext): Promise<CookieJar | undefined> {
  const cookies = await context.cookies()
  return cookies.length === 0 ? undefined : jarOfCookies(cookies)
}

/** Browser cookies (as Playwright lists them) in a tough-cookie jar. */
export async function jarOfCookies(cookies: readonly Cookie[]): Promise<CookieJar> {
  const jar = new CookieJar()
  for (const c of cookies) {
    const url = `${c.secure ? 'https' : 'http'}://${c.domain.replace(/^\./, '')}${c.path}`
    await jar
      .setCookie(
        `${c.name}=${c.value}; Path=${c.path}${c.secure ? '; Secure' : ''}${c.httpOnly ? '; HttpOnly' : ''}`,
        url,
      )
      .catch(() => undefined)
  }
  return jar
}

/** Cookies of the target's origin. */
export async function idpCookies(ctx: CheckContext, context: BrowserContext): Promise<Cookie[]> {
  return context.cookies(ctx.target.baseUrl)
}
