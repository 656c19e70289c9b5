import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // two test files at a time on the 2-core machine (vitest's default leaves one core to the
    // rest: one file at a time here): the self-test's halves, the suite run and node-oidc-
    // provider's run each spend much of their time waiting on a browser or a server
    maxWorkers: 2,
    // the JSON report gives .ci/run its closing "N passed, M failed" line
    reporters: ['default', ['json', { outputFile: 'reports/vitest.json' }]],
    projects: [
      {
        test: {
          name: 'server',
          include: ['server/**/*.test.ts', 'fixtures/**/*.test.ts', 'scripts/**/*.test.ts'],
          // real server processes, killed and restarted: npm run test:scale; the packed and
          // installed package: npm run test:package
          exclude: ['server/scale/**', 'scripts/package.pack.test.ts'],
          testTimeout: 30_000,
          // starting a listening app (keys, TLS, SQLite file) took over vitest's 10 s default
          // at a load average of 20-30; a bound still, as for the other projects
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'conformance',
          include: ['conformance/**/*.test.ts'],
          exclude: ['conformance/self-test/**'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          // the whole suite against node-oidc-provider, a provider the project did not write
          name: 'examples',
          include: ['examples/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 1_200_000,
        },
      },
      {
        test: {
          name: 'self-test',
          include: ['conformance/self-test/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // msw patches the process's fetch and http modules, so a file's msw sabotages run one
          // at a time; each file is a process of its own, so the files run side by side
          // the sabotages on broken servers of their own (no msw) run this many at a time
          maxConcurrency: 3,
        },
      },
    ],
  },
})
