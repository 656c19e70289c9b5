import type { Browser } from '@playwright/test'
import { fillLogin } from '../../harness/browser.ts'
import type { SignIn } from '../runner.ts'

/**
 * A sign-in through a real browser: open the app's /login for the test issuer, fill the hosted
 * login page, and follow the redirects back to the app's callback. Exit code 0 when the app
 * shows a signed-in page, 1 when it shows a refusal (or the flow never got back to it).
 */
export function browserSignIn(
  browser: Browser,
  appUrl: string,
  user: { username: string; password: string },
  timeoutMs = 30_000,
): SignIn {
  return async (env) => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      page.setDefaultTimeout(timeoutMs)
      await page.goto(`${appUrl}/login?issuer=${encodeURIComponent(env.RP_TEST_ISSUER)}`)
      // the app refused before sending the browser anywhere (discovery failed, …)
      if (page.url().startsWith(`${appUrl}/`))
        return { exitCode: 1, output: await page.locator('body').innerText() }
      await fillLogin(page, user)
      await page.waitForURL((u) => u.href.startsWith(`${appUrl}/callback`))
      await page.waitForLoadState()
      const title = await page.title()
      const text = await page.locator('body').innerText()
      return { exitCode: title === 'signed-in' ? 0 : 1, output: text }
    } catch (err) {
      return { exitCode: 1, output: `browser: ${(err as Error).message.split('\n')[0] ?? ''}` }
    } finally {
      await context.close()
    }
  }
}
