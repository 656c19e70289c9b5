import { afterEach, describe, expect, test, vi } from 'vitest'
import { testApp } from './test-helpers.ts'

// The self-test's faults (deps.ts) break the server on purpose, one accepts unsigned access
// tokens: createServer must refuse them outside the test harness and in production.
afterEach(() => {
  vi.unstubAllEnvs()
})

describe('test-only faults', () => {
  test('are refused outside the test harness', async () => {
    vi.stubEnv('VITEST', '')
    await expect(testApp({}, { faults: ['access-token-alg-none'] })).rejects.toThrow(
      /faults are refused outside the test harness.*access-token-alg-none/,
    )
  })

  test('are refused with NODE_ENV=production, even inside the harness', async () => {
    vi.stubEnv('NODE_ENV', 'production')
    await expect(testApp({}, { faults: ['access-token-alg-none'] })).rejects.toThrow(
      /NODE_ENV=production/,
    )
  })

  test('are accepted inside the harness, and a server without faults starts anywhere', async () => {
    const broken = await testApp({}, { faults: ['access-token-alg-none'] })
    expect(broken.deps.faults.has('access-token-alg-none')).toBe(true)
    await broken.stop()
    vi.stubEnv('VITEST', '')
    vi.stubEnv('NODE_ENV', 'production')
    const plain = await testApp()
    expect(plain.deps.faults.size).toBe(0)
    await plain.stop()
  })
})
