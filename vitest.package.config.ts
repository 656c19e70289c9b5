import { defineConfig } from 'vitest/config'

// npm run test:package (.ci/run): packs the project, installs the tarball in an empty directory
// and runs what a user would. Minutes, not seconds: not part of `npm test`.
export default defineConfig({
  test: {
    include: ['scripts/package.pack.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    reporters: ['default', ['json', { outputFile: 'reports/vitest-package.json' }]],
  },
})
