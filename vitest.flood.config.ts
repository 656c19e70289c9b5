import { defineConfig } from 'vitest/config'

// npm run test:flood: issue 33's latency target under a sign-in flood. Not in `.ci/run`: it
// compares latencies, which any other work on the machine moves, and the target is not yet met
// reliably on a loaded machine (README, Benchmarks); run it alone, on a quiet machine.
export default defineConfig({
  test: {
    reporters: ['default', ['json', { outputFile: 'reports/vitest-flood.json' }]],
    include: ['server/scale/**/*.flood.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
})
