import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import { registeredChecks, runChecks } from './harness/runner.ts'
import type { CheckResult } from './harness/types.ts'
import { checkName, requirementIds } from './requirements.ts'

// The whole suite against the embedded reference server, four checks at a time (exclusive ones
// alone): every check must pass there. Running them in parallel is itself under test: a check
// that disturbs another would fail one of them here, whatever the CLI's default on this machine.
describe('conformance suite against the embedded reference server', () => {
  let embedded: Embedded
  const results = new Map<string, CheckResult>()
  beforeAll(async () => {
    embedded = await startEmbedded()
    for (const result of await runChecks(embedded.target, { concurrency: 4 }))
      results.set(result.id, result)
  }, 900_000)
  afterAll(async () => {
    await embedded.stop()
  })

  test('every catalogue row has a registered check', () => {
    expect(registeredChecks()).toEqual(requirementIds)
  })

  for (const id of registeredChecks()) {
    test(checkName(id), () => {
      const result = results.get(id)
      expect({ verdict: result?.verdict, message: result?.message }).toEqual({
        verdict: 'pass',
        message: undefined,
      })
    })
  }
})
