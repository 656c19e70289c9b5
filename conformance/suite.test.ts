import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import { registeredChecks } from './harness/runner.ts'
import { createRunResources, runCheck, type RunResources } from './harness/check.ts'
import { checkName, requirementIds } from './requirements.ts'

// The whole suite against the embedded reference server: every check must pass there.
describe('conformance suite against the embedded reference server', () => {
  let embedded: Embedded
  let resources: RunResources
  beforeAll(async () => {
    embedded = await startEmbedded()
    resources = createRunResources(embedded.target)
  })
  afterAll(async () => {
    await resources.close()
    await embedded.stop()
  })

  test('every catalogue row has a registered check', () => {
    expect(registeredChecks()).toEqual(requirementIds)
  })

  for (const id of registeredChecks()) {
    test(checkName(id), async () => {
      const result = await runCheck(id, embedded.target, resources)
      expect({ verdict: result.verdict, message: result.message }).toEqual({
        verdict: 'pass',
        message: undefined,
      })
    })
  }
})
