import { requirements, type Requirement, type RequirementId } from '../requirements.ts'
import type { Browser, BrowserContext, Page } from '@playwright/test'
import { clientOrigins, launchBrowser } from './browser.ts'
import { BROWSER_CHECKS_AT_ONCE, CHECK_TIMEOUT_MS, embeddedOnlyReason } from './needs.ts'
import { createHttp, type Http } from './http.ts'
import { fallbackNote, resolveEndpoints, type EndpointName, type Endpoints } from './endpoints.ts'
import { Slots, type Slot } from './pool.ts'
import { countIn, newCounters, SharedSessions, type RunCounters } from './session.ts'
import { redactResult, redactUrl } from './redact.ts'
import type { Target } from './target.ts'
import { CheckFailure, ControlFailure, on } from './expect.ts'
import { inCheckScope } from './guard.ts'
import type { Level } from '../catalogue/requirement.ts'
import {
  WHOLE_SUBJECT,
  type Aside,
  type CheckResult,
  type Exchange,
  type Verdict,
} from './types.ts'
import { settledWithin } from './settled.ts'
import { transportProblem } from './transport.ts'
import { Pace, paceIn, ROUND_MARGIN } from './pace.ts'
import { SignInThrottle, throttleIn } from './throttle.ts'

/** What a check body receives. */
export interface CheckContext {
  /** The check's requirement (unset in a context a test builds by hand). */
  readonly id?: RequirementId
  readonly target: Target
  readonly http: Http
  /** Records an observation that does not change the verdict. */
  note(message: string): void
  /** Ends the check as skipped, with the reason (never counted as a pass). */
  skip(reason: string): never
  /**
   * Keeps a PNG screenshot of the page as evidence. Evidence only: a screenshot the browser
   * cannot take (a page navigating away, a renderer busy past the limit) is noted, never a
   * verdict of its own.
   */
  screenshot(name: string, page: Page, options?: { readonly fullPage?: boolean }): Promise<void>
  /**
   * A fresh browser context (own cookies), closed when the check ends. The first one takes the
   * check's place in the run's browser pool, waiting for one; `outsidePool` skips that for the
   * sign-in that establishes a user's shared session, which checks holding a place may await.
   */
  newBrowserContext(options?: { readonly outsidePool?: boolean }): Promise<BrowserContext>
  /** Milliseconds left before the check is stopped as timed out (`--check-timeout`). */
  timeLeftMs(): number
  /**
   * Gives the check at least `ms` more from now: for a check whose work scales with a time it
   * measured on the target in the same run (N sign-ins after timing one). Never shortens the
   * limit, and never past MAX_EXTENSION times `--check-timeout`, so a hung target still ends
   * as a timeout (inconclusive).
   */
  extendTimeout(ms: number): void
  /**
   * Awaits `what`, a shared resource another check holds (a user's shared IdP session): the
   * time spent waiting does not count against the check's limit (at most MAX_EXTENSION times
   * the limit is credited, so a wait that never ends still ends the check). Optional: a context
   * a test builds by hand may leave it out.
   */
  waitingFor?<T>(what: Promise<T>): Promise<T>
  /**
   * Runs one sub-case that does not depend on the others: its failure is recorded and the check
   * goes on, so every deviation is reported (the first as the headline, the rest in `more`).
   * Anything but a conformance failure (a failed control, a harness error) ends the check.
   */
  subcase(
    what: string,
    fn: () => Promise<void> | void,
    options?: {
      /** The part of the check's subject the sub-case is about (expect.ts `on`). */
      readonly subject?: string
    },
  ): Promise<void>
  /**
   * The run's shared IdP sessions, from which `authorize` may take codes over HTTP; undefined
   * for a check that must drive the browser (its subject is the login page, the session or
   * logout: see `drivesBrowser`); borrowed (replayed, never established) by exclusive checks.
   */
  readonly sessions?: SharedSessions | undefined
}

/** What the checks of one run share: one browser, launched on first use. */
export interface RunResources {
  browser(): Promise<Browser>
  close(): Promise<void>
  /** What the run counted (sign-ins, contexts, requests). */
  readonly counters: RunCounters
  /** The users' IdP sessions, when the run reuses them (the default). */
  readonly sessions: SharedSessions | undefined
  /**
   * The browser pool: how many checks may drive the browser at once (a check holds its place
   * from its first browser context to its end). Undefined: no limit beyond the run's.
   */
  readonly browserSlots?: Slots | undefined
  /**
   * Set for the exclusive checks' own lane on a twin of the embedded server (runner.ts): they
   * run there one at a time and nothing else does, so they use its sessions as their own
   * instead of borrowing the run's (each moves the clock only after its first authorization,
   * and the twin's clock and limits are put back after each check).
   */
  readonly ownTarget?: boolean
  /**
   * The target's endpoints as its discovery document advertises them, read once per run and
   * target (endpoints.ts). Absent, each check reads them itself.
   */
  readonly endpoints?: (target: Target) => Promise<Endpoints>
  /**
   * Checks to run in place of the registered ones for these IDs (RunOptions.checks: a test's
   * own checks, which the registry, one check per catalogue row, has no room for).
   */
  readonly checks?: ReadonlyMap<RequirementId, Check> | undefined
  /**
   * The run's measured speed (the browser rounds' durations, pace.ts): a check's default limit
   * scales with it. Absent, limits are not scaled.
   */
  readonly pace?: Pace | undefined
  /**
   * The run's one "sign-ins throttled until T" (throttle.ts): a 429 one sign-in met makes every
   * later sign-in of the run wait it out.
   */
  readonly throttle?: SignInThrottle | undefined
  /**
   * Whether check limits scale with `pace` (default true): false when `--check-timeout` was
   * given, which then holds as given.
   */
  readonly scaleLimits?: boolean
}

export function createRunResources(
  target: Pick<Target, 'baseUrl' | 'ca'>,
  options: {
    reuseSessions?: boolean
    onNotice?: (message: string) => void
    browserChecks?: number
    pace?: Pace
    scaleLimits?: boolean
  } = {},
): RunResources {
  let browser: Promise<Browser> | undefined
  const counters = newCounters()
  // per base URL: the exclusive checks' twin (runner.ts) is another server with its own
  const endpoints = new Map<string, Promise<Endpoints>>()
  return {
    counters,
    pace: options.pace ?? new Pace(),
    throttle: new SignInThrottle(),
    scaleLimits: options.scaleLimits ?? true,
    endpoints(on) {
      let found = endpoints.get(on.baseUrl)
      if (!found) endpoints.set(on.baseUrl, (found = resolveEndpoints(on)))
      return found
    },
    browserSlots: new Slots(options.browserChecks ?? BROWSER_CHECKS_AT_ONCE),
    sessions:
      options.reuseSessions === false ? undefined : new SharedSessions(counters, options.onNotice),
    // a browser that dies (killed, crashed) fails the checks that were driving it; the next
    // check that needs one launches another instead of failing on the dead one
    browser: () => {
      if (browser) return browser
      const launched: Promise<Browser> = launchBrowser(target).then((b) => {
        b.on('disconnected', () => {
          if (browser === launched) browser = undefined
        })
        return b
      })
      browser = launched
      return launched
    },
    async close() {
      // the verdicts are in: a browser that crashed or will not close ends nothing of the run
      if (browser) await (await browser.catch(() => undefined))?.close().catch(() => undefined)
      browser = undefined
    },
  }
}

export type CheckBody = (ctx: CheckContext) => Promise<void>

export class Skip extends Error {
  override readonly name = 'Skip'
}

export interface CheckOptions {
  /**
   * The check changes state that other checks see (the target's clock or rate limits, a
   * rate-limit budget it exhausts, a login throttle it trips): it runs alone, never beside
   * another check. Only exclusive checks may use the target's controls.
   */
  readonly exclusive?: boolean
  /**
   * Why the check can run only against the embedded reference server (it needs the clock
   * control or the fixtures): a run against another deployment lists it as "embedded only"
   * and does not count it as skipped. The same text as its row in needs.ts's EMBEDDED_ONLY,
   * which the CLI reads without loading the checks: registration refuses a difference.
   */
  readonly embeddedOnly?: string
  /**
   * How many browser rounds (authorizations through the browser) the check needs at most: its
   * default limit is at least that many times the run's measured round (pace.ts), so a check
   * that signs in twenty times is not stopped on a slow target where one that signs in once is
   * not. Never past MAX_EXTENSION times the limit.
   */
  readonly browserRounds?: number
}

/** A check as its area file declares it: the body, and how the run must schedule it. */
export interface Check {
  readonly body: CheckBody
  readonly exclusive: boolean
  readonly embeddedOnly: string | undefined
  readonly browserRounds?: number | undefined
}

/**
 * One area's checks, by the IDs of its catalogue file: a catalogue row without a check (or a
 * check without a row) does not compile.
 */
export type AreaChecks<Rows> = { readonly [Id in keyof Rows]: Check }

/** Every ID a part of `Parts` holds (`keyof` a union would keep only the IDs all parts share). */
type IdsOf<Part> = Part extends unknown ? keyof Part : never

/** The IDs more than one of `Parts` holds: never when each is in one part only. */
type HeldTwice<Parts extends readonly object[], Seen = never> = Parts extends readonly [
  infer First,
  ...infer Rest extends readonly object[],
]
  ? Extract<keyof First, Seen> | HeldTwice<Rest, Seen | keyof First>
  : never

/** The parts joined, or, when a row is in two of them, a type no AreaChecks accepts. */
type Joined<Parts extends readonly object[]> = [HeldTwice<Parts>] extends [never]
  ? { readonly [Id in IdsOf<Parts[number]>]: Check }
  : { readonly 'a row with a check in two parts': HeldTwice<Parts> }

/**
 * One area's checks from the files its rows are split into by concept (`security-sessions.ts`,
 * …: each part typed `satisfies Partial<AreaChecks<typeof catalogue>>`), for a record typed
 * `AreaChecks<typeof catalogue>`: a row in no part does not compile, as in one area file, and
 * neither does a row in two parts (where one object literal would refuse the key twice, a
 * spread of the parts would keep the last one silently).
 */
export function joinParts<const Parts extends readonly Readonly<Record<string, Check>>[]>(
  ...parts: Parts
): Joined<Parts> {
  return Object.fromEntries(parts.flatMap((part) => Object.entries(part))) as Joined<Parts>
}

/**
 * The check for a catalogue row (title, level and source come from the catalogue);
 * `check({ exclusive: true }, body)` declares one that must run alone.
 */
export function check(body: CheckBody): Check
export function check(options: CheckOptions, body: CheckBody): Check
export function check(bodyOrOptions: CheckBody | CheckOptions, maybeBody?: CheckBody): Check {
  const [options, body] =
    typeof bodyOrOptions === 'function' ? [{}, bodyOrOptions] : [bodyOrOptions, maybeBody]
  if (!body) throw new Error('a check has no body')
  return {
    body,
    exclusive: options.exclusive ?? false,
    embeddedOnly: options.embeddedOnly,
    ...(options.browserRounds === undefined ? {} : { browserRounds: options.browserRounds }),
  }
}

const registry = new Map<RequirementId, Check>()

/** Registers checks for the run (conformance/checks/index.ts registers every area's). */
export function register(checks: Partial<Record<RequirementId, Check>>): void {
  for (const [id, entry] of Object.entries(checks) as [RequirementId, Check][]) {
    if (registry.has(id)) throw new Error(`check ${id} is registered twice`)
    if (entry.embeddedOnly !== embeddedOnlyReason(id))
      throw new Error(
        `check ${id} says embeddedOnly ${JSON.stringify(entry.embeddedOnly)} but EMBEDDED_ONLY in harness/needs.ts says ${JSON.stringify(embeddedOnlyReason(id))}: make them the same`,
      )
    registry.set(id, entry)
  }
}

/** Whether the check must run alone (see CheckOptions.exclusive). */
export function isExclusive(id: RequirementId): boolean {
  return registry.get(id)?.exclusive ?? false
}

/**
 * The target as a check sees it: a check not registered as exclusive gets controls that
 * refuse to act, so a check that moves the clock cannot slip into a parallel batch unnoticed.
 */
function targetFor(id: RequirementId, target: Target, exclusive: boolean): Target {
  if (exclusive || !target.controls) return target
  const refuse = (): never => {
    throw new Error(
      `check ${id} uses the target's controls but is not registered with { exclusive: true }`,
    )
  }
  return {
    ...target,
    controls: { advanceClock: refuse, setRateLimit: refuse, reset: () => undefined },
  }
}

/**
 * Checks whose subject is the login page, the interaction or the session itself (the form,
 * CSRF, clickjacking, user enumeration, the throttle, prompt/max_age, cancel, logout, session
 * fixation): they always sign in through the browser, never with a replayed session.
 */
export function drivesBrowser(id: RequirementId): boolean {
  return /^(LOGIN|LOGOUT|RATE)-/.test(id) || id === 'SEC-07'
}

/**
 * Whether the check's subject is the authorization endpoint or its login page (AUTHZ-*,
 * LOGIN-*): for such a check a provider's error page in place of the redirect is a verdict;
 * for any other, the authorization is a step before its subject, and a flow stuck there leaves
 * it inconclusive (flows.ts `codeOf`).
 */
export function authorizationIsSubject(id: RequirementId): boolean {
  return /^(AUTHZ|LOGIN)-/.test(id)
}

/** Every registered check ID, in catalogue order. */
export function registeredChecks(): RequirementId[] {
  return (Object.keys(requirements) as RequirementId[]).filter((id) => registry.has(id))
}

const failedVerdict: Record<Level, Verdict> = { MUST: 'fail', SHOULD: 'warn', MAY: 'info' }

/** extendTimeout never takes a check past this many times its `--check-timeout`. */
export const MAX_EXTENSION = 10

class CheckTimeout extends Error {
  override readonly name = 'CheckTimeout'
}

/** A rejection or exception that escaped the check's awaits, caught by the run's guard. */
class Escaped extends Error {
  override readonly name = 'Escaped'
}

/** The run was stopped (a signal, --run-timeout) while the check ran. */
class Interrupted extends Error {
  override readonly name = 'Interrupted'
}

const reasonOf = (signal: AbortSignal): string =>
  signal.reason instanceof Error
    ? signal.reason.message
    : typeof signal.reason === 'string'
      ? signal.reason
      : 'the run was stopped'

/**
 * The result of a check the run did not run to its end (see Verdict 'notrun'): `why` says what
 * stopped the run.
 */
export function notRunResult(id: RequirementId, why: string, durationMs = 0): CheckResult {
  return {
    id,
    ...requirements[id],
    verdict: 'notrun',
    message: `not run: ${why}`,
    notes: [],
    exchanges: [],
    screenshots: [],
    durationMs,
  }
}

/**
 * Runs one check against a target and returns its result; never throws. `stop`, once aborted,
 * ends the check at once as not run (its reason says why); a check asked to start after that is
 * not run at all. An error that escapes the check's own awaits (caught by the run's guard,
 * guard.ts) ends it as inconclusive.
 */
export async function runCheck(
  id: RequirementId,
  given: Target,
  resources: RunResources,
  timeoutMs = CHECK_TIMEOUT_MS,
  stop?: AbortSignal,
): Promise<CheckResult> {
  if (stop?.aborted) return notRunResult(id, reasonOf(stop))
  const entry = resources.checks?.get(id) ?? registry.get(id)
  const req: Requirement = requirements[id]
  // the endpoints as discovery advertises them (never throws: the interface's paths otherwise)
  const endpoints =
    given.endpoints ?? (await (resources.endpoints?.(given) ?? resolveEndpoints(given)))
  const target: Target = { ...given, endpoints }
  // aborted when the check times out: its requests still in flight and any it would start
  // next fail at once, so a timed-out check is stopped, not left running beside the next
  const abort = new AbortController()
  const http = countRequests(createHttp(target, abort.signal), resources.counters)
  const notes: string[] = []
  const screenshots: { name: string; png: string }[] = []
  const contexts: BrowserContext[] = []
  // whether the check opened a browser context of its own (the run counts such checks)
  let droveBrowser = false
  // the check's place in the browser pool, taken with its first browser context
  let slot: Slot | undefined
  let timedOut = false
  // the limit as extendTimeout moved it (0: not moved)
  let extendedMs = 0
  // time spent waiting for a resource other checks hold (the browser pool, a shared session):
  // not counted against the check, up to `cap`; `waits` in progress since `waitingSince`
  let creditedMs = 0
  let waits = 0
  let waitingSince = 0
  // no limit, scaled, extended or credited, goes past this (a hung check still ends)
  const cap = timeoutMs * MAX_EXTENSION
  const started = performance.now()
  // failures of sub-cases (ctx.subcase), in the order found, each with its cause: the exchange
  // its expectation judged, else what the exchanges made until then say (never later ones)
  const failures: Judged[] = []
  const judgedNow = (message: string, err: unknown): Judged => {
    const failure = err instanceof CheckFailure ? err : undefined
    const before = http.exchanges.slice()
    return {
      message,
      cause: causeOf(message, before, failure?.exchange),
      aside: failure?.aside ?? asideOf(message, before, failure?.exchange),
      subject: failure?.subject,
      should: failure?.should ?? false,
    }
  }
  // a MUST check whose every failure is at SHOULD in its source (expect.ts atShould) warns
  const failedAs = (all: readonly Judged[]): Verdict =>
    req.level === 'MUST' && all.length > 0 && all.every((f) => f.should)
      ? 'warn'
      : failedVerdict[req.level]
  const result = (
    verdict: Verdict,
    message: string | undefined,
    judged?: {
      cause?: string | undefined
      aside?: Aside | undefined
      subjects?: readonly string[] | undefined
    },
    more?: readonly string[],
  ): CheckResult => {
    // an endpoint the check used at the interface's path because discovery did not say: noted
    for (const [name, why] of Object.entries(endpoints.fallbacks) as [EndpointName, string][]) {
      const note = fallbackNote(name, why)
      const path = endpointOf(endpoints.urls[name])
      if (!notes.includes(note) && http.exchanges.some((x) => endpointOf(x.url) === path))
        notes.push(note)
    }
    return redactResult({
      id,
      ...req,
      verdict,
      message,
      ...(judged?.cause ? { cause: judged.cause } : {}),
      ...(judged?.aside && verdict !== 'error' ? { aside: judged.aside } : {}),
      ...(judged?.subjects && verdict !== 'error' ? { subjects: judged.subjects } : {}),
      ...(more && more.length > 0 ? { more } : {}),
      notes,
      exchanges: http.exchanges,
      screenshots,
      durationMs: Math.round(performance.now() - started),
    })
  }
  if (!entry) return result('skip', 'no check is registered for this requirement')
  if (entry.embeddedOnly && !target.embedded) return result('skip', entry.embeddedOnly)
  // the limit at the run's measured speed: the default scaled by how much slower than nominal
  // its browser rounds are, and at least the rounds the check declares (pace.ts); an explicit
  // --check-timeout (scaleLimits false) holds as given
  const pace = resources.scaleLimits === false ? undefined : resources.pace
  const scaledMs = (): number => {
    if (!pace) return timeoutMs
    const round = pace.roundMs()
    const byRounds =
      entry.browserRounds !== undefined && round !== undefined
        ? entry.browserRounds * round * ROUND_MARGIN
        : 0
    return Math.min(cap, Math.max(timeoutMs * pace.scale(), byRounds))
  }
  const ownLimitMs = (): number => Math.max(scaledMs(), extendedMs)
  const creditMs = (): number =>
    Math.min(cap, creditedMs + (waits > 0 ? performance.now() - waitingSince : 0))
  const waitingFor = async <T>(what: Promise<T>): Promise<T> => {
    if (waits++ === 0) waitingSince = performance.now()
    arm()
    try {
      return await what
    } finally {
      if (--waits === 0) creditedMs += performance.now() - waitingSince
      arm()
    }
  }
  const ctx: CheckContext = {
    id,
    target: targetFor(id, target, entry.exclusive),
    http,
    note: (m) => notes.push(m),
    skip: (reason) => {
      throw new Skip(reason)
    },
    async screenshot(name, page, options) {
      try {
        const png = await page.screenshot({ fullPage: options?.fullPage ?? false, timeout: 5000 })
        screenshots.push({ name, png: png.toString('base64') })
      } catch (err) {
        notes.push(`no screenshot of ${name}: ${describe(err).split('\n')[0] ?? ''}`)
      }
    },
    timeLeftMs: () => Math.max(0, ownLimitMs() + creditMs() - (performance.now() - started)),
    extendTimeout(ms) {
      const wanted = Math.min(performance.now() - started - creditMs() + ms, cap)
      if (wanted <= ownLimitMs() || timedOut) return
      extendedMs = wanted
      arm()
    },
    waitingFor,
    async subcase(what, fn, options) {
      try {
        await (options?.subject === undefined ? fn() : on(options.subject, fn))
      } catch (err) {
        const judged = classify(err)
        if (judged.kind !== 'failure') throw err
        const message = judged.message ?? describe(err)
        failures.push({
          ...judgedNow(message, err),
          message: message.startsWith(`${what}:`) ? message : `${what}: ${message}`,
        })
      }
    },
    // a check about the page, the session or logout drives the browser itself; an exclusive one
    // moves the clock or the limits, so it may replay a session but never establish one (on a
    // twin of its own, the twin's sessions are its own)
    sessions: drivesBrowser(id)
      ? undefined
      : entry.exclusive && !resources.ownTarget
        ? resources.sessions?.borrowed()
        : resources.sessions,
    async newBrowserContext(options) {
      const running = (): void => {
        if (timedOut) throw new CheckTimeout('the check was stopped: it timed out')
      }
      running()
      if (!options?.outsidePool) {
        slot ??= resources.browserSlots?.acquire()
        // the time in the queue is not the check's: other checks hold the places
        if (slot) await waitingFor(slot.ready)
        // it may have timed out while it waited for its place
        running()
      }
      const context = await (await resources.browser()).newContext({ ignoreHTTPSErrors: false })
      // the sign-in that establishes a shared session (outside the pool) is not the check's own
      if (!options?.outsidePool && !droveBrowser) {
        droveBrowser = true
        resources.counters.browserChecks++
      }
      resources.counters.browserContexts++
      countIn(context, resources.counters)
      if (resources.pace) paceIn(context, resources.pace)
      if (resources.throttle) throttleIn(context, resources.throttle)
      contexts.push(context)
      return context
    },
  }
  let timer: NodeJS.Timeout | undefined
  let expire: (err: CheckTimeout | Escaped | Interrupted) => void = () => undefined
  // whether the check has ended (an error escaping after that is the run's, not the check's)
  let ended = false
  const interrupt = (): void =>
    expire(new Interrupted(stop ? reasonOf(stop) : 'the run was stopped'))
  // (re)starts the timer for what is left of the check's limit (extendTimeout, the run's pace
  // and the waits for shared resources move it); while a wait is in progress, the most it may
  // be credited is counted, so a wait that never ends still ends the check
  const arm = (): void => {
    if (timedOut || ended) return
    clearTimeout(timer)
    const deadline = ownLimitMs() + (waits > 0 ? cap : creditMs())
    timer = setTimeout(
      () => {
        timedOut = true
        const own = Math.round(ownLimitMs())
        const waited = Math.round(creditMs())
        const scaled = scaledMs()
        const why =
          own === timeoutMs
            ? '--check-timeout'
            : extendedMs > scaled
              ? "its limit scaled by the target's measured speed"
              : `--check-timeout ${timeoutMs} ms scaled by this run's measured speed: one browser round took ${Math.round(pace?.roundMs() ?? 0)} ms`
        const message = `timed out after ${own} ms (${why})${waited > 0 ? `, not counting ${waited} ms spent waiting for the browser or a shared session that other checks held` : ''}`
        abort.abort(new CheckTimeout(message))
        expire(new CheckTimeout(message))
      },
      Math.max(0, deadline - (performance.now() - started)),
    )
  }
  // a round measured anywhere in the run moves the limit of the checks running
  const unlisten = pace?.onChange(arm)
  try {
    await Promise.race([
      new Promise<never>((_, reject) => {
        expire = reject
        arm()
        stop?.addEventListener('abort', interrupt, { once: true })
      }),
      inCheckScope(
        {
          id,
          escaped: (err) => {
            if (ended) return false
            expire(
              new Escaped(
                `an error escaped the check's awaits (an unhandled rejection or exception): ${describe(err)}`,
              ),
            )
            return true
          },
        },
        () => entry.body(ctx),
      ),
    ])
    // sub-cases that failed: the first is the headline, the others follow in `more`
    const [first, ...rest] = failures
    if (first !== undefined)
      return result(
        failedAs(failures),
        first.message,
        { cause: first.cause, aside: allAside(failures), subjects: subjectsOf(failures) },
        rest.map((f) => f.message),
      )
    return result('pass', undefined)
  } catch (err) {
    if (err instanceof Interrupted)
      return {
        ...notRunResult(id, err.message, Math.round(performance.now() - started)),
        notes: [
          ...notes,
          'the check was stopped while it ran: what it had found so far is dropped',
        ],
      }
    if (err instanceof Skip && failures.length === 0) return result('skip', err.message)
    // what the browser showed when the check failed is often the quickest explanation
    for (const context of contexts)
      for (const page of context.pages())
        await ctx.screenshot(`page when the check failed: ${redactUrl(page.url())}`, page, {
          fullPage: true,
        })
    const judged = classify(err)
    // a check whose time ran out while the browser was on a page of the provider says which
    // page, as a flow stopped there does ("could not get past"), never a bare "timed out"
    const on = err instanceof CheckTimeout ? await pageAt(contexts, target) : undefined
    // a connection that failed says which way: a certificate not trusted (--ca) or a target
    // that cannot be reached, never a bare "fetch failed"
    const message =
      (err instanceof Skip
        ? err.message
        : (judged.message ?? transportProblem(err)?.message ?? describe(err))) +
      (on
        ? `: the suite could not get past "${on.title}" at ${on.address} (the page the browser was on when the check's time ran out)`
        : '')
    // the exchanges until the failure (a check's clean-up may add more before this point)
    const judgedAt = judgedNow(message, err)
    // deviations already found by sub-cases stand: the end of the check is reported after them
    if (failures.length > 0) {
      const [first, ...rest] = failures as [(typeof failures)[number], ...typeof failures]
      const last =
        judged.kind === 'failure'
          ? message
          : err instanceof Skip
            ? `the rest was skipped: ${message}`
            : `the rest was inconclusive: ${message}`
      const all = judged.kind === 'failure' ? [...failures, judgedAt] : failures
      return result(
        failedAs(all),
        first.message,
        { cause: first.cause, aside: allAside(all), subjects: subjectsOf(all) },
        [...rest.map((f) => f.message), last],
      )
    }
    if (judged.kind === 'failure')
      return result(failedAs([judgedAt]), message, {
        ...judgedAt,
        subjects: subjectsOf([judgedAt]),
      })
    const why =
      judged.kind === 'control'
        ? `inconclusive: a positive control failed, so the check's negative cases prove nothing: ${message}`
        : `inconclusive: the harness could not drive the target: ${message}`
    return result('error', why, judged.kind === 'control' ? { cause: judgedAt.cause } : undefined)
  } finally {
    ended = true
    unlisten?.()
    stop?.removeEventListener('abort', interrupt)
    clearTimeout(timer)
    abort.abort()
    // bounded: a browser that hangs (or was stopped mid-run) does not hold the check's end
    await settledWithin(
      Promise.all(contexts.map((c) => c.close().catch(() => undefined))),
      CLOSE_WITHIN_MS,
    )
    slot?.release()
    if (entry.exclusive) target.controls?.reset()
  }
}

/** How long the title of the page a timed-out check's browser was on is waited for. */
const TITLE_WITHIN_MS = 2000

/**
 * The page of the provider the check's browser was last on (the newest context's newest page
 * still open at an http(s) address that is no client's: a flow that reached its client is not
 * stuck), with its title (or first heading) and its address, its secrets redacted.
 */
async function pageAt(
  contexts: readonly BrowserContext[],
  target: Pick<Target, 'clients'>,
): Promise<{ title: string; address: string } | undefined> {
  // the client origins, read once a page is there to judge (a check that never drove the
  // browser needs none)
  let clients: ReadonlySet<string> | undefined
  for (const context of [...contexts].reverse()) {
    for (const page of [...context.pages()].reverse()) {
      if (page.isClosed()) continue
      const url = page.url()
      let origin: string
      try {
        origin = new URL(url).origin
      } catch {
        continue
      }
      clients ??= new Set(clientOrigins(target))
      if (!/^https?:/i.test(url) || clients.has(origin)) continue
      let timer: NodeJS.Timeout | undefined
      const title = await Promise.race([
        page
          .evaluate(
            () => document.title.trim() || document.querySelector('h1, h2')?.textContent.trim(),
          )
          .catch(() => undefined),
        new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), TITLE_WITHIN_MS)
        }),
      ]).finally(() => clearTimeout(timer))
      return {
        title: title?.replace(/\s+/g, ' ').slice(0, 120) || '(untitled page)',
        address: redactUrl(url),
      }
    }
  }
  return undefined
}

/**
 * A check's failures are aside from its subject only when every one is (the first one's kind):
 * one failure on the subject, headline or not, is the check failing on what it is for.
 */
const allAside = (failures: readonly { aside: Aside | undefined }[]): Aside | undefined =>
  failures.every((f) => f.aside) ? failures[0]?.aside : undefined

/** A failure found by a check: its message, its cause, whether it is aside, what it is about. */
interface Judged {
  readonly message: string
  readonly cause: string
  readonly aside: Aside | undefined
  readonly subject: string | undefined
  /** A SHOULD of a MUST check's source (expect.ts atShould). */
  readonly should: boolean
}

/**
 * What a failed check's failures on its subject are about (CheckResult.subjects): the `on`
 * name of each failure that is not aside, WHOLE_SUBJECT for one without a name. Undefined when
 * no failure has a name: every failure is about the check's whole subject, as before parts.
 */
export function subjectsOf(
  failures: readonly Omit<Judged, 'message' | 'cause'>[],
): string[] | undefined {
  if (failures.every((f) => f.subject === undefined)) return undefined
  return [...new Set(failures.filter((f) => !f.aside).map((f) => f.subject ?? WHOLE_SUBJECT))]
}

/** How long the end of a check waits for its browser contexts to close. */
const CLOSE_WITHIN_MS = 10_000

/** Counts the requests a check's client sends (the benchmark's HTTP requests). */
function countRequests(http: Http, counters: RunCounters): Http {
  const request = http.request.bind(http)
  http.request = (pathOrUrl, options) => {
    counters.httpRequests++
    return request(pathOrUrl, options)
  }
  return http
}

/**
 * What a thrown error means for the verdict. A CheckFailure is a conformance failure; so is
 * an error openid-client or jose raised about the target's own response (a refused token, an
 * error answer, a challenge), reworded in plain words. A failed control, a timeout, a
 * navigation or network error or a bug of the harness (a TypeError) is inconclusive.
 */
export function classify(err: unknown): {
  kind: 'failure' | 'control' | 'harness'
  message?: string
} {
  if (err instanceof CheckFailure) return { kind: 'failure' }
  if (err instanceof ControlFailure) return { kind: 'control' }
  if (!(err instanceof Error)) return { kind: 'harness' }
  const e = err as Error & {
    code?: unknown
    status?: unknown
    error?: unknown
    error_description?: unknown
    cause?: unknown
  }
  const code = typeof e.code === 'string' ? e.code : ''
  if (code === 'OAUTH_WWW_AUTHENTICATE_CHALLENGE') {
    const challenges = Array.isArray(e.cause)
      ? (e.cause as { scheme?: string; parameters?: Record<string, string> }[])
      : []
    const said = challenges
      .map((c) =>
        `${c.scheme ?? ''} ${Object.entries(c.parameters ?? {})
          .map(([k, v]) => `${k}="${v}"`)
          .join(', ')}`.trim(),
      )
      .join('; ')
    return {
      kind: 'failure',
      message: `the IdP refused the request with HTTP ${String(e.status)} and the challenge WWW-Authenticate: ${said || '(none)'}`,
    }
  }
  if (code === 'OAUTH_RESPONSE_BODY_ERROR')
    return {
      kind: 'failure',
      message: `the IdP answered HTTP ${String(e.status)} with error=${String(e.error)}${typeof e.error_description === 'string' ? ` (${e.error_description})` : ''}`,
    }
  if (code === 'OAUTH_AUTHORIZATION_RESPONSE_ERROR')
    return {
      kind: 'failure',
      message: `the authorization response carried error=${String(e.error)}${typeof e.error_description === 'string' ? ` (${e.error_description})` : ''}`,
    }
  // oauth4webapi's checks of what the target sent (a non-conform or non-JSON response, a claim
  // that does not match, a timestamp out of range): the target's doing, in its own words
  if (
    /^OAUTH_(RESPONSE_IS_NOT_CONFORM|RESPONSE_IS_NOT_JSON|INVALID_RESPONSE|JSON_ATTRIBUTE_COMPARISON_FAILED|JWT_CLAIM_COMPARISON_FAILED|JWT_TIMESTAMP_CHECK_FAILED|INVALID_SERVER_METADATA|MISSING_SERVER_METADATA|PARSE_ERROR|KEY_SELECTION_FAILED|JWT_USERINFO_EXPECTED)$/.test(
      code,
    )
  )
    return {
      kind: 'failure',
      message: `the IdP's response was refused by openid-client: ${e.message}`,
    }
  // jose refusing a token the target issued (signature, claims, expiry, algorithm)
  if (/^ERR_J(WT|WS|WKS?|WE|OSE)_/.test(code) && code !== 'ERR_JOSE_NOT_SUPPORTED')
    return { kind: 'failure', message: `a token from the IdP was refused: ${e.message}` }
  return { kind: 'harness' }
}

/** What causeOf reads of an exchange. */
type Answered = Pick<Exchange, 'method' | 'url' | 'status'> &
  Partial<Pick<Exchange, 'responseBody' | 'responseHeaders' | 'error'>>

/** The path of a URL (a recorded one is redacted, and may not parse: then as it is). */
const endpointOf = (url: string): string => {
  try {
    return new URL(url, 'https://x').pathname
  } catch {
    return url
  }
}

/**
 * The error code an answer carried: the JSON body's "error" (INTERFACE.md §7), the Bearer
 * challenge's error (RFC 6750 §3) or an error redirect's error parameter (RFC 6749 §4.1.2.1).
 */
export function errorCodeOf(x: Answered): string | undefined {
  const code = (v: unknown): string | undefined =>
    typeof v === 'string' && /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$/.test(v) ? v : undefined
  try {
    const body = JSON.parse(x.responseBody ?? '') as unknown
    if (body && typeof body === 'object' && 'error' in body) {
      const found = code(body.error)
      if (found) return found
    }
  } catch {
    // not JSON: the headers may still say
  }
  const headers = x.responseHeaders ?? {}
  const challenge = /\berror="?([^",\s]+)/i.exec(headers['www-authenticate'] ?? '')
  if (challenge) return code(challenge[1])
  const location = headers.location
  if (location && x.status !== undefined && x.status >= 300 && x.status < 400)
    try {
      return code(new URL(location, x.url).searchParams.get('error') ?? undefined)
    } catch {
      return undefined
    }
  return undefined
}

/** How an endpoint answered: method, path, status and error code (what causes group by). */
export function answered(x: Answered): string {
  const request = `${x.method} ${endpointOf(x.url)}`
  if (x.status === undefined)
    return `${request} got no answer${x.error ? ` (${normalise(x.error)})` : ''}`
  const code = errorCodeOf(x)
  const description = code ? descriptionOf(x) : undefined
  return `${request} answered HTTP ${x.status}${code ? ` error=${code}` : ''}${description ? ` (${description})` : ''}`
}

/**
 * The error_description of a JSON error answer (RFC 6749 §5.2), its volatile parts (URLs'
 * queries, random values, timings) taken out and cut short: two answers with one status and
 * error code that say different things ("no access token provided", "origin … not allowed")
 * are two causes (blind round 5).
 */
function descriptionOf(x: Answered): string | undefined {
  try {
    const body = JSON.parse(x.responseBody ?? '') as unknown
    if (body && typeof body === 'object' && 'error_description' in body) {
      const d = body.error_description
      if (typeof d === 'string' && d.trim()) return normalise(d.trim(), 120)
    }
  } catch {
    // not JSON: no description
  }
  return undefined
}

/** The failure is about the answer's status or its error code, not about its content. */
const aboutStatusOrCode = (message: string): boolean =>
  /expected HTTP [\d or]+, got \d+ from /.test(message) ||
  /(^|: )error: expected [\w. -]+(?: or [\w.-]+)*, got /.test(message)

/** "what: expected X, got Y" without the check's own words for the request. */
const expectation = (message: string): string | undefined =>
  /^(?:[^:]{1,120}: )*?(expected .*)$/s.exec(message)?.[1]

/**
 * The cause a failure comes down to, the same for every check that ran into it. With the
 * exchange its expectation judged (`subject`), or failing that the exchange the message names
 * among those made until the failure (`exchanges`, in order): a wrong status or error code is
 * that endpoint answering that way (method, path, status and error code, whichever check sent
 * it and whatever it expected); another assertion about an answer is that answer and the
 * assertion's expectation. Otherwise the message with its volatile parts (URLs' queries, random
 * values, timings) taken out: never the check's latest exchange, which may be another request.
 */
export function causeOf(
  message: string,
  exchanges: readonly Answered[] = [],
  subject?: Answered,
): string {
  const judged = judgedExchange(message, exchanges, subject)
  if (judged) {
    if (aboutStatusOrCode(message) || refusedBy(message)) return answered(judged)
    return `${answered(judged)}: ${normalise(expectation(message) ?? message)}`
  }
  const status = /expected HTTP [\d or]+, got (\d+) from (\S+)/.exec(message)
  if (status) return `${endpointOf(status[2] ?? '')} answered HTTP ${status[1]}`
  // about no answer it can name (a claim of a token, a value parsed earlier): the latest
  // exchange may be another request altogether, so the message is the cause, as it is
  return normalise(message)
}

/** openid-client's report of an error the IdP answered (classify), with its status. */
const refusedBy = (message: string): string | undefined =>
  /^the IdP (?:refused the request with|answered) HTTP (\d+)/.exec(message)?.[1]

/**
 * The answer a failure judged: the one its expectation was given (`subject`), else the latest
 * until the failure with the endpoint and status its message names, or, for an error the IdP
 * answered as openid-client reported it, the latest with that status.
 */
function judgedExchange(
  message: string,
  exchanges: readonly Answered[],
  subject: Answered | undefined,
): Answered | undefined {
  if (subject) return subject
  const before = [...exchanges].reverse()
  const status = /expected HTTP [\d or]+, got (\d+) from (\S+)/.exec(message)
  if (status)
    return before.find(
      (x) => endpointOf(x.url) === endpointOf(status[2] ?? '') && String(x.status) === status[1],
    )
  const refused = refusedBy(message)
  return refused === undefined ? undefined : before.find((x) => String(x.status) === refused)
}

/**
 * Whether a failure is 'refused' (CheckResult.aside): the answer it judged refused the request
 * (a 4xx status, or an error code such as an error redirect's), so whatever the check expected
 * instead, the request it played did not get through. A wanted 429 or 503 is the exception: a throttle that does not
 * answer so is the subject of the checks that expect one, however the target refused otherwise.
 */
export function asideOf(
  message: string,
  exchanges: readonly Answered[] = [],
  subject?: Answered,
): Aside | undefined {
  const judged = judgedExchange(message, exchanges, subject)
  if (!judged || judged.status === undefined) return undefined
  if (/expected HTTP [\d or]*\b(429|503)\b/.test(message)) return undefined
  // a 5xx is the server failing, not refusing: it is the subject of the checks that judge it
  if (judged.status >= 500) return undefined
  const refusal = judged.status >= 400 || errorCodeOf(judged) !== undefined
  return refusal ? 'refused' : undefined
}

const normalise = (text: string, max = 300): string =>
  cutAtWord(
    text
      .replace(/https?:\/\/[^\s?#"]+(\?[^\s#"]*)?(#[^\s"]*)?/g, (u) => u.split(/[?#]/)[0] ?? u)
      .replace(/[A-Za-z0-9_-]{20,}/g, '…')
      .replace(/\d+ ?ms\b/g, '… ms'),
    max,
  )

/**
 * `text` cut to at most `max` characters (and an ellipsis) at a space, never inside a word or a
 * URL: a cause cut at a fixed length read "… at https:" (blind round 5).
 */
export function cutAtWord(text: string, max: number): string {
  if (text.length <= max) return text
  const head = text.slice(0, max)
  const space = head.lastIndexOf(' ')
  return `${(space > max / 2 ? head.slice(0, space) : head).trimEnd()} …`
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const cause = (err as Error & { cause?: unknown }).cause
  const base = err.message.length > 2000 ? `${err.message.slice(0, 2000)}…` : err.message
  return cause instanceof Error ? `${base} (${cause.message})` : base
}
