import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { selectChecks } from '../../conformance/cli.ts'
import { embeddedOnlyReason } from '../../conformance/harness/needs.ts'
import { resolveTarget, type TargetConfig } from '../../conformance/harness/target.ts'
import { ORDER_AREAS, runInOrders, verdictDifferences } from '../../conformance/order.ts'
import { startSpaProvider } from './provider.ts'

const file = JSON.parse(readFileSync(new URL('target.json', import.meta.url), 'utf8')) as Omit<
  TargetConfig,
  'baseUrl' | 'ca'
>

// The checks that misuse credentials, and those beside them, in two shuffled orders against
// node-oidc-provider with rotated refresh tokens whose reuse revokes the grant and ends the
// session (its grant is the session's: every code of a session shares it), each run on a fresh
// provider: the verdicts are the same, so no check's misuse reaches another check's tokens.
describe('verdicts do not depend on the order the checks run in (node-oidc-provider, revoke on reuse)', () => {
  test('two shuffled orders of the code, refresh, revocation, introspection and access-token checks', async () => {
    const ids = selectChecks(ORDER_AREAS).filter((id) => !embeddedOnlyReason(id))
    const runs = await runInOrders(ids, [29, 2026], async () => {
      const provider = await startSpaProvider(0, { revokeOnReuse: true })
      const target = resolveTarget({ ...file, baseUrl: provider.baseUrl, ca: provider.ca })
      return {
        target,
        stop: async () => {
          await target.dispatcher.close()
          await provider.stop()
        },
        options: { concurrency: 2 },
      }
    })
    const [a, b] = runs
    if (!a || !b) throw new Error('two runs expected')
    expect(a.order).not.toEqual(b.order)
    expect(verdictDifferences(a, b)).toEqual([])
    // the harness drove every check: an inconclusive one would prove nothing about the order.
    // A positive control the provider fails (its introspection calls its JWT access tokens
    // inactive: INTRO-03/07, REV-01/03, expected-verdicts.json) was driven, and is the provider's
    expect(
      [...a.verdicts].filter(
        ([, v]) => v.verdict === 'error' && !/a positive control failed/.test(v.message ?? ''),
      ),
    ).toEqual([])
  }, 900_000)
})
