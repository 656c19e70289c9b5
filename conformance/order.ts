import type { RequirementId } from './requirements.ts'
import { runChecks, shuffledOrder, type RunOptions } from './runner.ts'
import type { Target } from './harness/target.ts'
import type { Verdict } from './harness/types.ts'

/**
 * The areas whose checks misuse credentials on purpose (code replays, revocations, refresh
 * tokens presented by the wrong client or with wrong secrets) and the checks that hold tokens
 * beside them (issue 29 item 5).
 */
export const ORDER_AREAS = 'CODE,RT,REV,INTRO,AT'

/** One run of the order-independence test: its seed, its start order and its verdicts. */
export interface OrderedRun {
  readonly seed: number
  readonly order: readonly RequirementId[]
  readonly verdicts: ReadonlyMap<string, { verdict: Verdict; message: string | undefined }>
}

/**
 * Runs `ids` on a fresh target (`start` gives one, `stop` ends it) in the order shuffled from
 * each seed, one run after the other, for the test that verdicts do not depend on the order
 * the checks run in (issue 29 item 5: a check's misuse never reaches another check).
 */
export async function runInOrders(
  ids: readonly RequirementId[],
  seeds: readonly number[],
  start: () => Promise<{ target: Target; stop: () => Promise<void>; options?: RunOptions }>,
): Promise<OrderedRun[]> {
  const runs: OrderedRun[] = []
  for (const seed of seeds) {
    const { target, stop, options } = await start()
    try {
      const results = await runChecks(target, { ...options, ids, shuffle: seed })
      runs.push({
        seed,
        order: shuffledOrder(ids, seed),
        verdicts: new Map(results.map((r) => [r.id, { verdict: r.verdict, message: r.message }])),
      })
    } finally {
      await stop()
    }
  }
  return runs
}

/** Where two runs' verdicts differ: one line per check, with both messages. */
export function verdictDifferences(a: OrderedRun, b: OrderedRun): string[] {
  const lines: string[] = []
  for (const [id, x] of a.verdicts) {
    const y = b.verdicts.get(id)
    if (y?.verdict !== x.verdict)
      lines.push(
        `${id}: ${x.verdict} with seed ${a.seed} (${x.message ?? ''}), ${y?.verdict ?? 'missing'} with seed ${b.seed} (${y?.message ?? ''})`,
      )
  }
  return lines
}
