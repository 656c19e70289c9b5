import { defineConfig } from 'vitest/config'

// npm run test:scale: several real server processes on one database, kill -9, workers.
export default defineConfig({
  test: {
    reporters: ['default', ['json', { outputFile: 'reports/vitest-scale.json' }]],
    include: ['server/scale/**/*.scale.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    // processes and ports of their own; one file at a time keeps the 2 cores honest
    fileParallelism: false,
  },
})
