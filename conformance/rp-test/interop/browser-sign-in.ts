import type { Browser, Page } from '@playwright/test'
import { fillLogin } from '../../harness/browser.ts'
import type { SignIn, SignInResult } from '../runner.ts'

/**
 * A sign-in through a real browser: open the app's /login for the test issuer, fill the hosted
 * login page, and follow the redirects back to the app's callback (then log out, or refresh, when
 * asked).
 * Signed in when the app shows its signed-in page, refused when it shows its refusal page;
 * anything else (the browser failed, a page was not recognised, a wait expired, the app broke)
 * could not run: inconclusive.
 */
export function browserSignIn(
  browser: Browser,
  appUrl: string,
  user: { username: string; password: string },
  timeoutMs = 30_000,
): SignIn {
  /**
   * After the sign-in, when the runner asks (RP_TEST_LOGOUT=1): the app's /logout, through the
   * issuer's end_session_endpoint, back to its /logged-out page. Logged out (exit 0) when the app
   * shows that page, refused when it turned the redirect back down; an app that offers no logout
   * stays signed in (the judge then says the test was not exercised).
   */
  const logOut = async (page: Page, signedIn: string): Promise<SignInResult> => {
    await page.goto(`${appUrl}/logout`)
    const title = await page.title()
    const output = `${signedIn}\n${await page.locator('body').innerText()}`
    if (title === 'no-logout') return { outcome: 'signed-in', output }
    const at = new URL(page.url())
    if (at.href.startsWith(`${appUrl}/logged-out`)) {
      if (title === 'logged-out') return { outcome: 'signed-in', output }
      if (title === 'refused') return { outcome: 'refused', output }
    }
    return {
      outcome: 'could-not-run',
      output,
      why: `the logout ended at ${at.origin}${at.pathname} on a page titled ${JSON.stringify(title.slice(0, 80))}, not the app's logged-out page`,
    }
  }
  /**
   * After the sign-in, when the runner asks (RP_TEST_REFRESH=1): the app's /refresh, which
   * redeems the refresh token and calls user-info with the new access token. Refreshed (exit 0)
   * when the app shows that page, refused when it turned the refresh down; an app that cannot
   * refresh stays signed in (the judge then says the test was not exercised).
   */
  const refresh = async (page: Page, signedIn: string): Promise<SignInResult> => {
    await page.goto(`${appUrl}/refresh`)
    const title = await page.title()
    const output = `${signedIn}\n${await page.locator('body').innerText()}`
    if (title === 'refreshed' || title === 'no-refresh') return { outcome: 'signed-in', output }
    if (title === 'refused') return { outcome: 'refused', output }
    return {
      outcome: 'could-not-run',
      output,
      why: `the refresh answered a page titled ${JSON.stringify(title.slice(0, 80))}, not the app's refreshed page`,
    }
  }
  return async (env) => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      page.setDefaultTimeout(timeoutMs)
      await page.goto(`${appUrl}/login?issuer=${encodeURIComponent(env.RP_TEST_ISSUER)}`)
      // the app answered before sending the browser anywhere (its library refused discovery, …)
      if (!page.url().startsWith(`${appUrl}/`)) {
        await fillLogin(page, user)
        await page.waitForURL((u) => u.href.startsWith(`${appUrl}/callback`))
        await page.waitForLoadState()
      }
      const title = await page.title()
      const output = await page.locator('body').innerText()
      if (title === 'signed-in' && env.RP_TEST_LOGOUT === '1') return await logOut(page, output)
      if (title === 'signed-in' && env.RP_TEST_REFRESH === '1') return await refresh(page, output)
      if (title === 'signed-in') return { outcome: 'signed-in', output }
      if (title === 'refused') return { outcome: 'refused', output }
      return {
        outcome: 'could-not-run',
        output,
        why: `the app answered a page titled ${JSON.stringify(title.slice(0, 80))}, neither signed-in nor refused`,
      }
    } catch (err) {
      const why = `browser: ${(err as Error).message.split('\n')[0] ?? ''}`
      return { outcome: 'could-not-run', output: why, why }
    } finally {
      await context.close()
    }
  }
}
