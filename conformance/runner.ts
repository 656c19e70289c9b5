import './checks/index.ts'
import type { RequirementId } from './requirements.ts'
import {
  type Check,
  createRunResources,
  drivesBrowser,
  isExclusive as registeredExclusive,
  notRunResult,
  registeredChecks,
  runCheck,
  type RunResources,
} from './harness/check.ts'
import { guardRun } from './harness/guard.ts'
import { runPool } from './harness/pool.ts'
import { SharedSessions, type RunCounters } from './harness/session.ts'
import type { Target } from './harness/target.ts'
import { speedOf, type Pace, type RunSpeed } from './harness/pace.ts'
import type { CheckResult } from './harness/types.ts'

export interface RunOptions {
  /** Only these checks (default: every registered check). */
  readonly ids?: readonly RequirementId[]
  /** Called as each check finishes (live progress). */
  readonly onResult?: (result: CheckResult) => void
  /**
   * How many checks run at once (default 1). Exclusive checks always run alone: the run
   * waits for the checks in flight, runs the exclusive one, then goes on.
   */
  readonly concurrency?: number
  /**
   * How long one check may take before it is stopped as inconclusive (default CHECK_TIMEOUT_MS).
   * Scaled by the run's measured speed unless `scaleCheckTimeout` is false (pace.ts).
   */
  readonly checkTimeoutMs?: number
  /**
   * Whether each check's limit scales with the run's measured speed (the browser rounds' median
   * against NOMINAL_ROUND_MS, and the rounds a check declares); default true. The CLI sets it
   * false when --check-timeout is given: an explicit limit holds as given.
   */
  readonly scaleCheckTimeout?: boolean
  /** The run's pace (a test seeds one; the CLI may seed it with the preflight's sign-in). */
  readonly pace?: Pace
  /**
   * Whether codes for checks that are not about the login page come from a replay of the
   * user's IdP session (default true); false signs in through the browser every time.
   */
  readonly reuseSessions?: boolean
  /** Told at once of something the whole run should know (sign-ins fell back to the browser). */
  readonly onNotice?: (message: string) => void
  /** Called once the run is over, with what it counted and how sign-ins went. */
  readonly onFinished?: (info: RunInfo) => void
  /**
   * Starts a twin of the target: another instance of the same server with the same
   * configuration and certificate (the embedded reference server can; a deployment cannot).
   * Given, and with a concurrency above 1, the exclusive checks run on the twin, one at a time
   * in their own lane, beside the rest of the run instead of stopping it: what they change (the
   * clock, the limits, the throttles) is the twin's alone. Without it they run alone on the
   * target, as before. A twin that does not start is noted, and the run falls back to that.
   */
  readonly twin?: () => Promise<Twin>
  /**
   * Starts the checks in an order shuffled from this seed (a 32-bit unsigned integer) instead
   * of the catalogue's: the same seed gives the same order (`shuffledOrder`), so a run whose
   * verdicts depend on the order can be replayed. Results still come back in the order of `ids`.
   */
  readonly shuffle?: number
  /**
   * Stops the run when aborted (a signal, the run's time limit; its reason says which): the
   * checks in flight end at once and the rest do not start, each reported as not run.
   */
  readonly stop?: AbortSignal
  /**
   * Checks to run in place of the registered ones for these IDs: a test's own checks (one that
   * lets a rejection escape, one that kills the browser), run by the same runner as the suite's.
   */
  readonly checks?: Partial<Record<RequirementId, Check>>
}

/** A second instance of the target (see RunOptions.twin). */
export interface Twin {
  readonly target: Target
  stop(): Promise<void>
}

export interface RunInfo {
  readonly counters: RunCounters
  /** Why the IdP session could not be reused, when it could not. */
  readonly sessionUnusable: string | undefined
  /** The run's measured speed, and whether check limits were scaled by it. */
  readonly speed?: RunSpeed
}

/**
 * Runs the checks against one target, in catalogue order, up to `concurrency` at a time;
 * the results come back in the order of `ids` whatever order they finished in.
 */
export async function runChecks(target: Target, options: RunOptions = {}): Promise<CheckResult[]> {
  const ids = options.ids ?? registeredChecks()
  // the order the checks start in; results are reported in the order of `ids` either way
  const order = options.shuffle === undefined ? ids : shuffledOrder(ids, options.shuffle)
  const checks = new Map(Object.entries(options.checks ?? {}) as [RequirementId, Check][])
  const isExclusive = (id: RequirementId): boolean =>
    checks.get(id)?.exclusive ?? registeredExclusive(id)
  const resources: RunResources = {
    ...createRunResources(target, {
      ...(options.reuseSessions === undefined ? {} : { reuseSessions: options.reuseSessions }),
      ...(options.onNotice ? { onNotice: options.onNotice } : {}),
      ...(options.pace ? { pace: options.pace } : {}),
      scaleLimits: options.scaleCheckTimeout ?? true,
    }),
    checks,
  }
  const concurrency = options.concurrency ?? 1
  const run = (id: RequirementId, on: Target, with_: RunResources) =>
    runCheck(id, on, with_, options.checkTimeoutMs, options.stop)
  let twin: Twin | undefined
  // for the run's duration, an error nobody caught ends the check it came from as inconclusive
  // (or is noted, when no running check owns it) instead of the process
  const unguard = guardRun((message) => options.onNotice?.(message))
  try {
    const exclusive = order.filter(isExclusive)
    // the browser starts while the twin does, when a check that drives it is in the run (a
    // failed launch is the checks' to report, as it would be on first use)
    if (ids.some((id) => drivesBrowser(id))) resources.browser().catch(() => undefined)
    if (options.twin && concurrency > 1 && exclusive.length > 0)
      twin = await options.twin().catch((err: unknown) => {
        options.onNotice?.(
          `the exclusive checks run alone on the target: its twin did not start (${(err as Error).message})`,
        )
        return undefined
      })
    if (!twin) {
      const done = await runPool(order, {
        concurrency,
        alone: isExclusive,
        run: (id) => run(id, target, resources),
        onDone: options.onResult,
      })
      const byId = new Map(done.map((r) => [r.id, r]))
      return ids.map((id) => byId.get(id) as CheckResult)
    }
    const onTwin = twin.target
    // the run's browser and counters; the twin's own sessions (its users sign in there once);
    // no place in the browser pool to wait for: the lane drives at most one check at a time
    const lane: RunResources = {
      ...resources,
      sessions: resources.sessions && new SharedSessions(resources.counters),
      browserSlots: undefined,
      ownTarget: true,
    }
    const [rest, alone] = await Promise.all([
      runPool(browserEarly(order.filter((id) => !isExclusive(id))), {
        concurrency,
        alone: () => false,
        run: (id) => run(id, target, resources),
        onDone: options.onResult,
      }),
      runPool(exclusive, {
        concurrency: 1,
        alone: () => false,
        run: async (id) => {
          const result = await run(id, onTwin, lane)
          return {
            ...result,
            notes: [
              ...result.notes,
              `ran on a twin of the embedded server (same configuration), one exclusive check at a time beside the rest of the run: the clock and limits it changed were the twin's alone`,
            ],
          }
        },
        onDone: options.onResult,
      }),
    ])
    const byId = new Map([...rest, ...alone].map((r) => [r.id, r]))
    return ids.map((id) => byId.get(id) as CheckResult)
  } finally {
    try {
      options.onFinished?.({
        counters: { ...resources.counters },
        sessionUnusable: resources.sessions?.unusable,
        ...(resources.pace
          ? { speed: speedOf(resources.pace, resources.scaleLimits !== false) }
          : {}),
      })
      await resources.close()
      await twin?.stop()
    } finally {
      unguard()
    }
  }
}

/**
 * The order in which the checks beside the twin start: the checks that drive the browser
 * (the longest of a run) interleaved with the others from the start, one of each in turn, so
 * that the browser pool is busy from the first second and no long browser check is left to
 * start last, while the HTTP checks fill the run's other places. Only the start order changes:
 * results are still reported in the order asked.
 */
export function browserEarly(ids: readonly RequirementId[]): RequirementId[] {
  const browser = ids.filter((id) => drivesBrowser(id))
  const rest = ids.filter((id) => !drivesBrowser(id))
  const order: RequirementId[] = []
  for (let i = 0; i < Math.max(browser.length, rest.length); i++) {
    const [b, r] = [browser[i], rest[i]]
    if (b) order.push(b)
    if (r) order.push(r)
  }
  return order
}

/**
 * `ids` in an order drawn from `seed` (Fisher-Yates over mulberry32): the same seed and ids
 * always give the same order, any other seed most likely another.
 */
export function shuffledOrder(ids: readonly RequirementId[], seed: number): RequirementId[] {
  let state = seed >>> 0
  const random = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const order = [...ids]
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[order[i], order[j]] = [order[j] as RequirementId, order[i] as RequirementId]
  }
  return order
}

export { notRunResult, registeredChecks }
