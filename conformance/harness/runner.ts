import '../checks/index.ts'
import type { RequirementId } from '../requirements.ts'
import { createRunResources, isExclusive, registeredChecks, runCheck } from './check.ts'
import { runPool } from './pool.ts'
import type { Target } from './target.ts'
import type { CheckResult } from './types.ts'

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
}

/**
 * Runs the checks against one target, in catalogue order, up to `concurrency` at a time;
 * the results come back in the order of `ids` whatever order they finished in.
 */
export async function runChecks(target: Target, options: RunOptions = {}): Promise<CheckResult[]> {
  const ids = options.ids ?? registeredChecks()
  const resources = createRunResources(target)
  try {
    return await runPool(ids, {
      concurrency: options.concurrency ?? 1,
      alone: isExclusive,
      run: (id) => runCheck(id, target, resources, options.checkTimeoutMs),
      onDone: options.onResult,
    })
  } finally {
    await resources.close()
  }
}

export { registeredChecks }
