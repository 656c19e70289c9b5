import { defineConfig } from '@playwright/test'
import { CHROMIUM_ARGS, chromiumExecutable } from './conformance/harness/browser.ts'

// Browser tests of the hosted pages and of report.html (`npm run test:pages`). The global setup starts the
// embedded reference server and sets PAGES_BASE_URL and PAGES_SPKI_PIN before the workers
// start; each worker loads this file again, so its launch options carry the pin of the
// server's verified certificate (TLS checks stay on: no ignoreHTTPSErrors).
const executablePath = chromiumExecutable()
const pin = process.env.PAGES_SPKI_PIN

export default defineConfig({
  // the hosted pages and the suite's HTML report; only *.spec.ts: vitest owns *.test.ts
  testDir: '.',
  testMatch: ['server/views/**/*.spec.ts', 'conformance/report/**/*.spec.ts'],
  globalSetup: './server/views/pages.setup.ts',
  outputDir: 'test-results/pages',
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  workers: 2,
  // a password hash on every sign-in: generous on a loaded 2-core CI machine
  timeout: 60_000,
  expect: { timeout: 5_000 },
  reporter: [
    ['list'],
    // .ci/run adds these counts to vitest's in its closing totals line
    ['json', { outputFile: 'reports/playwright.json' }],
    ['html', { open: 'never', outputFolder: 'reports/playwright-html' }],
  ],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: {
      ...(executablePath ? { executablePath } : {}),
      args: [...CHROMIUM_ARGS, ...(pin ? [`--ignore-certificate-errors-spki-list=${pin}`] : [])],
    },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
  },
  projects: [
    { name: 'phone', use: { viewport: { width: 375, height: 812 } } },
    { name: 'desktop', use: { viewport: { width: 1280, height: 800 } } },
  ],
})
