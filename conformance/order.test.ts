import { describe, expect, test } from 'vitest'
import { selectChecks } from './cli.ts'
import { startEmbedded } from './harness/embedded.ts'
import { ORDER_AREAS, runInOrders, verdictDifferences } from './order.ts'

// The same checks in two shuffled orders, each on a fresh embedded server (the twin hosting
// the exclusive ones, as in a CLI run), give the same verdicts: no check's misuse reaches
// another check's tokens or session, whichever runs first.
describe('verdicts do not depend on the order the checks run in (embedded server)', () => {
  test('two shuffled orders of the code, refresh, revocation, introspection and access-token checks', async () => {
    const ids = selectChecks(ORDER_AREAS)
    const runs = await runInOrders(ids, [29, 2026], async () => {
      const embedded = await startEmbedded()
      return {
        target: embedded.target,
        stop: () => embedded.stop(),
        options: { concurrency: 4, twin: () => embedded.twin() },
      }
    })
    const [a, b] = runs
    if (!a || !b) throw new Error('two runs expected')
    expect(a.order).not.toEqual(b.order)
    expect(verdictDifferences(a, b)).toEqual([])
    // every check here passes on the reference server, in either order
    expect([...a.verdicts].filter(([, v]) => v.verdict !== 'pass')).toEqual([])
  }, 600_000)
})
