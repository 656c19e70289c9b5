import { setupServer } from 'msw/node'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createRunResources, runCheck } from '../harness/check.ts'
import { startEmbedded, type Embedded } from '../harness/embedded.ts'
import { registeredChecks } from '../harness/runner.ts'
import type { Verdict } from '../harness/types.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import { sabotage } from './sabotage.ts'

const expected: Record<'MUST' | 'SHOULD' | 'MAY', Verdict> = {
  MUST: 'fail',
  SHOULD: 'warn',
  MAY: 'info',
}

// Every check is proven able to fail: against a deliberately broken target it must not pass.
describe('self-test: every check fails against a broken target', () => {
  const mock = setupServer()
  let shared: Embedded

  beforeAll(async () => {
    shared = await startEmbedded()
    mock.listen({ onUnhandledRequest: 'bypass' })
  })
  afterAll(async () => {
    mock.close()
    await shared.stop()
  })

  for (const id of registeredChecks()) {
    const s = sabotage[id]
    const level = requirements[id].level
    test(`${id} ${expected[level]}s when ${s.how}`, async () => {
      const result = await withSabotage(id)
      expect(result.verdict, result.message).toBe(expected[level])
      expect(result.message).toBeTruthy()
    })
  }

  async function withSabotage(id: RequirementId) {
    const s = sabotage[id]
    if ('handlers' in s) {
      mock.use(...s.handlers(shared.target))
      const resources = createRunResources(shared.target)
      try {
        return await runCheck(id, shared.target, resources)
      } finally {
        mock.resetHandlers()
        await resources.close()
      }
    }
    const broken = await startEmbedded({
      faults: s.faults,
      ...(s.config ? { config: s.config } : {}),
    })
    const resources = createRunResources(broken.target)
    try {
      return await runCheck(id, broken.target, resources)
    } finally {
      await resources.close()
      await broken.stop()
    }
  }
})
