import './checks/index.ts'
import type { RequirementId } from './requirements.ts'
import { createRunResources, isExclusive, registeredChecks, runCheck } from './harness/check.ts'
import { runPool } from './harness/pool.ts'
import type { RunCounters } from './harness/session.ts'
import type { Target } from './harness/target.ts'
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
  /** How long one check may take before it is stopped as inconclusive. */
  readonly checkTimeoutMs?: number
  /**
   * Whether codes for checks that are not about the login page come from a replay of the
   * user's IdP session (default true); false signs in through the browser every time.
   */
  readonly reuseSessions?: boolean
  /** Told at once of something the whole run should know (sign-ins fell back to the browser). */
  readonly onNotice?: (message: string) => void
  /** Called once the run is over, with what it counted and how sign-ins went. */
  readonly onFinished?: (info: RunInfo) => void
}

export interface RunInfo {
  readonly counters: RunCounters
  /** Why the IdP session could not be reused, when it could not. */
  readonly sessionUnusable: string | undefined
}

/**
 * Runs the checks against one target, in catalogue order, up to `concurrency` at a time;
 * the results come back in the order of `ids` whatever order they finished in.
 */
export async function runChecks(target: Target, options: RunOptions = {}): Promise<CheckResult[]> {
  const ids = options.ids ?? registeredChecks()
  const resources = createRunResources(target, {
    ...(options.reuseSessions === undefined ? {} : { reuseSessions: options.reuseSessions }),
    ...(options.onNotice ? { onNotice: options.onNotice } : {}),
  })
  try {
    return await runPool(ids, {
      concurrency: options.concurrency ?? 1,
      alone: isExclusive,
      run: (id) => runCheck(id, target, resources, options.checkTimeoutMs),
      onDone: options.onResult,
    })
  } finally {
    options.onFinished?.({
      counters: { ...resources.counters },
      sessionUnusable: resources.sessions?.unusable,
    })
    await resources.close()
  }
}

export { registeredChecks }
