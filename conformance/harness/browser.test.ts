import type { Browser } from '@playwright/test'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { chromiumExecutable, fillLogin, launchBrowser } from './browser.ts'

describe('chromiumExecutable', () => {
  const only =
    (...present: string[]) =>
    (path: string) =>
      present.includes(path)

  test('CHROMIUM_PATH wins over whatever is installed', () => {
    expect(
      chromiumExecutable(
        { CHROMIUM_PATH: '/opt/chrome' },
        only('/usr/bin/chromium-headless-shell'),
      ),
    ).toBe('/opt/chrome')
  })

  test("Debian's headless shell first, then its full Chromium", () => {
    const both = only('/usr/bin/chromium-headless-shell', '/usr/bin/chromium')
    expect(chromiumExecutable({}, both)).toBe('/usr/bin/chromium-headless-shell')
    expect(chromiumExecutable({}, only('/usr/bin/chromium'))).toBe('/usr/bin/chromium')
  })

  test("neither installed: Playwright's own browser (undefined)", () => {
    expect(chromiumExecutable({}, only())).toBeUndefined()
  })
})

describe('the built-in login filler (fillLogin)', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchBrowser({ baseUrl: 'https://127.0.0.1', ca: undefined })
  }, 60_000)
  afterAll(async () => {
    await browser.close()
  })

  // the form posts to a javascript-free target: the submit is read from the page it leaves
  const form = (username: string) =>
    `<!doctype html><title>Sign in</title><form method="get" action="about:blank" id="f" onsubmit="event.preventDefault(); document.title = new URLSearchParams(new FormData(this)).toString()">${username}<input type="password" name="password"><button type="submit">Sign in</button></form>`

  const submitted = async (username: string): Promise<URLSearchParams> => {
    const page = await browser.newPage()
    try {
      await page.setContent(form(username))
      // bounded: a field the filler waits on would time out here, not after 30 s
      page.setDefaultTimeout(3000)
      await fillLogin(page, { username: 'jdoe', password: 'pw' })
      await page.waitForFunction(() => document.title !== 'Sign in', undefined, { timeout: 3000 })
      return new URLSearchParams(await page.title())
    } finally {
      await page.close()
    }
  }

  test('a read-only user name that already holds a value is left as it is (blind round 4, S5)', async () => {
    const sent = await submitted('<input readonly value="jdoe" name="username">')
    expect(sent.get('username')).toBe('jdoe')
    expect(sent.get('password')).toBe('pw')
  }, 30_000)

  test('a disabled user name with a value is left as it is; an editable one is filled', async () => {
    // a disabled field is not submitted: only the password is
    const disabled = await submitted('<input disabled value="jdoe" name="username">')
    expect(disabled.get('username')).toBeNull()
    expect(disabled.get('password')).toBe('pw')
    const editable = await submitted('<input value="someone" name="username">')
    expect(editable.get('username')).toBe('jdoe')
  }, 30_000)
})
