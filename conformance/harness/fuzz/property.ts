import fc from 'fast-check'
import type { CheckContext } from '../check.ts'
import { CheckFailure, ControlFailure } from '../expect.ts'

/*
 * Property-based checks that are safe against a production deployment: a small, fixed number
 * of generated cases (IDP_PROPERTY_RUNS raises it), a fixed seed recorded in the notes
 * (IDP_PROPERTY_SEED sets another), a hard cap on the requests that shrinking may add, and
 * nothing that could hurt a server beyond an error answer (no compressed bodies, nothing over
 * 16 KiB, no header over 8 KiB).
 */

/** The seed unless IDP_PROPERTY_SEED names another: the same cases, hence verdict, every run. */
const DEFAULT_PROPERTY_SEED = 19

/** The run count and seed of a property check, noted on the result. */
export function propertyBudget(
  ctx: Pick<CheckContext, 'note'>,
  env: NodeJS.ProcessEnv = process.env,
): { runs: number; seed: number } {
  const runs = Math.min(10_000, Math.max(1, Math.floor(Number(env.IDP_PROPERTY_RUNS) || 25)))
  // a fixed default: a negative check gives the same verdict every run (IDP_PROPERTY_SEED varies it)
  const seed = Number.isInteger(Number(env.IDP_PROPERTY_SEED ?? 'x'))
    ? Number(env.IDP_PROPERTY_SEED)
    : DEFAULT_PROPERTY_SEED
  ctx.note(
    `${String(runs)} generated cases (IDP_PROPERTY_RUNS), seed ${String(seed)} (IDP_PROPERTY_SEED=${String(seed)} replays, another seed varies the cases)`,
  )
  return { runs, seed }
}

/** Extra requests shrinking may make after a failure; then the smallest case so far is kept. */
export const SHRINK_BUDGET = 40

/**
 * Runs a property against the target; fails with the shrunk counterexample and its seed. Past
 * `runs + shrinkBudget` cases the predicate stops sending (and holds), which ends shrinking.
 */
export async function holds<T>(
  what: string,
  arb: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  runs: number,
  seed: number,
  show: (value: T) => string,
  options: {
    /** Cases run first, whatever the seed (counted in `runs`). */
    readonly examples?: [T][]
    /** Extra cases shrinking may send (default SHRINK_BUDGET): fewer where each case costs. */
    readonly shrinkBudget?: number
  } = {},
): Promise<void> {
  let sent = 0
  const { examples = [], shrinkBudget = SHRINK_BUDGET } = options
  const details = await fc.check(
    fc.asyncProperty(arb, async (value) => {
      if (++sent > runs + shrinkBudget) return
      await predicate(value)
    }),
    { numRuns: runs, seed, examples },
  )
  if (!details.failed) return
  const [example] = details.counterexample ?? []
  const error = details.errorInstance
  // a control that failed (the harness could not set a case up) is inconclusive, not a finding
  if (error instanceof ControlFailure) throw error
  throw new CheckFailure(
    `${what}: ${error instanceof Error ? error.message : String(error)} — counterexample ` +
      `${example === undefined ? '?' : show(example)} (after ${String(details.numRuns)} cases, ` +
      `shrunk ${String(details.numShrinks)} times; seed ${String(details.seed)}, path ` +
      `${String(details.counterexamplePath)})`,
  )
}

export const visible = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
})
