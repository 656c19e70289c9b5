import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { embeddedOnlyReason } from '../../conformance/harness/needs.ts'
import { registeredChecks, runChecks } from '../../conformance/runner.ts'
import { resolveTarget, type Target, type TargetConfig } from '../../conformance/harness/target.ts'
import type { CheckResult, Verdict } from '../../conformance/harness/types.ts'
import { checkName } from '../../conformance/requirements.ts'
import type { ExampleProvider } from './provider.ts'

/**
 * The whole suite against an example provider, judged by the example's expected-verdicts.json
 * (check ID → the verdict and why; a check not listed passes): every verdict must be the one
 * the file documents, so a check that starts failing for the harness's own reasons (or stops
 * finding a documented deviation) fails here. Checks that run only on the embedded server are
 * left out, as the CLI leaves them out of a run against a deployment. `dir` is the example's
 * directory (its target.json and expected-verdicts.json).
 */
export function describeExpectedRun(
  title: string,
  dir: URL,
  start: () => Promise<ExampleProvider>,
): void {
  const expected = JSON.parse(
    readFileSync(new URL('expected-verdicts.json', dir), 'utf8'),
  ) as Record<string, { verdict: Verdict; reason: string }>

  describe(title, () => {
    let provider: ExampleProvider
    let target: Target
    const results = new Map<string, CheckResult>()
    const ids = registeredChecks().filter((id) => !embeddedOnlyReason(id))

    beforeAll(async () => {
      provider = await start()
      const file = JSON.parse(readFileSync(new URL('target.json', dir), 'utf8')) as Omit<
        TargetConfig,
        'baseUrl' | 'ca'
      >
      target = resolveTarget({ ...file, baseUrl: provider.baseUrl, ca: provider.ca })
      for (const r of await runChecks(target, { ids, concurrency: 2 })) results.set(r.id, r)
    }, 1_200_000)
    afterAll(async () => {
      await (target as Target | undefined)?.dispatcher.close()
      await (provider as ExampleProvider | undefined)?.stop()
    })

    test('every expected verdict names a check that runs here, with a reason', () => {
      for (const [id, entry] of Object.entries(expected)) {
        expect(ids as string[], `expected-verdicts.json names ${id}`).toContain(id)
        expect(entry.reason.length, `${id} has a reason`).toBeGreaterThan(20)
      }
    })

    for (const id of ids) {
      test(checkName(id), () => {
        const result = results.get(id)
        const want = expected[id]?.verdict ?? 'pass'
        expect(
          { verdict: result?.verdict },
          `${id}: ${result?.message ?? ''}${expected[id] ? `\nexpected because: ${expected[id].reason}` : ''}`,
        ).toEqual({ verdict: want })
      })
    }
  })
}
