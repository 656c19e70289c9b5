import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { expect, test } from '@playwright/test'
import { main } from '../cli.ts'
import { clients } from '../../fixtures/clients.ts'
import { users } from '../../fixtures/users.ts'

// report.html as a reader sees it, in a real Chromium: produced by the CLI against the
// embedded reference server (pages.setup.ts), with the service client's secret deliberately
// wrong so one check fails and its evidence has to be readable.

const WRONG_SECRET = 'wrong-secret-0123456789'

test.describe('report.html', () => {
  test.describe.configure({ mode: 'serial' })
  let reportUrl = ''
  let exitCode = -1

  // eslint-disable-next-line no-empty-pattern -- Playwright reads fixtures from this pattern
  test.beforeAll(async ({}, testInfo) => {
    if (testInfo.project.name !== 'desktop') return // the tests skip there (beforeEach)
    testInfo.setTimeout(180_000)
    const baseUrl = process.env.PAGES_BASE_URL
    const caFile = process.env.PAGES_CA_FILE
    if (!baseUrl || !caFile) throw new Error('pages.setup.ts did not start the reference server')
    const dir = mkdtempSync(join(tmpdir(), 'report-spec-'))
    const client = (id: string, secret?: string) => {
      const c = clients.find((x) => x.id === id)
      if (!c) throw new Error(`no fixture client ${id}`)
      return { id: c.id, secret: secret ?? c.secret, redirectUri: c.redirectUris[0] }
    }
    const [alice] = users
    writeFileSync(
      join(dir, 'target.json'),
      JSON.stringify({
        clients: {
          main: client('conformance-client'),
          // the scope it asks for with client_credentials, as a target configuration names it
          service: { ...client('service-client', WRONG_SECRET), scope: 'api:reports' },
        },
        users: { primary: { username: alice.username, password: alice.password } },
      }),
    )
    const out = { write: () => true, isTTY: false }
    exitCode = await main(
      [
        '--base-url',
        baseUrl,
        '--ca',
        caFile,
        '--config',
        join(dir, 'target.json'),
        '--only',
        // AUTHZ-17's authorization request is a 700-character URL: the page must wrap it
        'DISC-01,CC-01,IDT-02,AUTHZ-17',
        '--report-dir',
        dir,
      ],
      { out, err: out, env: {} },
    )
    reportUrl = pathToFileURL(join(dir, 'report.html')).toString()
  })

  // eslint-disable-next-line no-empty-pattern -- as above
  test.beforeEach(({}, testInfo) => {
    test.skip(testInfo.project.name !== 'desktop', 'one viewport is enough for a report')
  })

  test('the summary says the run failed, with the counts', async ({ page }) => {
    expect(exitCode).toBe(1)
    await page.goto(reportUrl)
    const summary = page.locator('#summary')
    await expect(summary).toContainText('FAILED')
    await expect(summary).toContainText('3 passed')
    await expect(summary).toContainText('1 failed')
    await expect(page.locator('details.check')).toHaveCount(4)
  })

  test('a failing check is one line and its message until opened, then shows its redacted HTTP transcript', async ({
    page,
  }) => {
    await page.goto(reportUrl)
    const failed = page.locator('details.check[data-verdict="fail"]')
    await expect(failed).toHaveCount(1)
    // collapsed by default: the reader opens the checks they want
    await expect(failed).not.toHaveAttribute('open')
    await expect(failed.locator('summary')).toContainText('CC-01')
    await expect(failed.locator('.msg')).toBeVisible()
    await expect(failed.locator('.x')).toHaveCount(0)
    await failed.locator('summary').click()
    const exchange = failed
      .locator('.x')
      .filter({ has: page.locator('.line', { hasText: /^POST \S+\/auth\/token / }) })
      .first()
    await expect(exchange.locator('.line')).toContainText('→ 401')
    // the secret is replaced whole: not even a prefix of it is kept
    await expect(exchange).toContainText('client_secret=%5Bredacted%5D')
    await expect(exchange).not.toContainText('client_secret=wron')
    await expect(exchange).toContainText('invalid_client')
    await expect(page.locator('body')).not.toContainText(WRONG_SECRET)
  })

  test('the page fits a 1,280 px window with every check open: no horizontal scroll', async ({
    page,
  }) => {
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.goto(reportUrl)
    const checks = page.locator('details.check')
    const n = await checks.count()
    for (let i = 0; i < n; i++) await checks.nth(i).locator('summary').click()
    // every transcript opened (each check of this run made requests)
    for (let i = 0; i < n; i++) await expect(checks.nth(i).locator('.x').first()).toBeVisible()
    const width = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }))
    expect(width.scroll).toBeLessThanOrEqual(width.client)
    await page.screenshot({ path: 'reports/pages/report-1280.png', fullPage: true })
  })

  test('a link to a check opens it', async ({ page }) => {
    await page.goto(`${reportUrl}#check-IDT-02`)
    await expect(page.locator('#check-IDT-02')).toHaveAttribute('open', '')
    await expect(page.locator('#check-IDT-02 .x').first()).toBeVisible()
  })

  test('a passing check shows the decoded JWT it received, signature redacted', async ({
    page,
  }) => {
    await page.goto(reportUrl)
    const at = page.locator('details.check').filter({ hasText: 'IDT-02' })
    await at.locator('summary').click()
    const jwt = at.locator('pre.jwt').first()
    await expect(jwt).toBeVisible()
    await expect(jwt).toContainText('"alg":"RS256"')
    await expect(jwt).toContainText('payload {')
    await expect(at).toContainText('[signature redacted]')
  })

  test('the verdict filters hide and show checks', async ({ page }) => {
    await page.goto(reportUrl)
    const passing = page.locator('details.check[data-verdict="pass"]')
    await expect(passing.first()).toBeVisible()
    await page.locator('#filters input[value="pass"]').uncheck()
    await expect(passing.first()).toBeHidden()
    await expect(page.locator('details.check[data-verdict="fail"]')).toBeVisible()
    await page.locator('#filters input[value="pass"]').check()
    await expect(passing.first()).toBeVisible()
  })
})
