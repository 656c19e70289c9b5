import '../checks/index.ts'
import type { RequirementId } from '../requirements.ts'
import { createRunResources, registeredChecks, runCheck } from './check.ts'
import type { Target } from './target.ts'
import type { CheckResult } from './types.ts'

export interface RunOptions {
  /** Only these checks (default: every registered check). */
  readonly ids?: readonly RequirementId[]
  /** Called as each check finishes (live progress). */
  readonly onResult?: (result: CheckResult) => void
}

/** Runs the checks one after another against one target. */
export async function runChecks(target: Target, options: RunOptions = {}): Promise<CheckResult[]> {
  const ids = options.ids ?? registeredChecks()
  const results: CheckResult[] = []
  const resources = createRunResources(target)
  try {
    for (const id of ids) {
      const result = await runCheck(id, target, resources)
      results.push(result)
      options.onResult?.(result)
    }
  } finally {
    await resources.close()
  }
  return results
}

export { registeredChecks }
