import type { BrowserContext, Page } from '@playwright/test'
import { browse, mayMoveByItself } from '../harness/browser.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { logout as catalogue } from '../catalogue/logout.ts'
import { CheckFailure, expectControl, expectThat, show } from '../harness/expect.ts'
import { authorize, codeOf, whereLeft } from '../harness/flows.ts'
import { endpointUrl } from '../harness/requests.ts'
import { forgeTampered } from '../harness/jwt.ts'
import {
  answerLogoutConfirmation,
  browseLogout,
  expectPostLogoutUrl,
  expectStayed,
  logoutUrl,
  postLogoutUri,
  randomState,
  signedIn,
  withoutLogoutAnswers,
} from '../harness/logout.ts'

/**
 * Whether the browser context still has a session: prompt=none must return a code with one
 * and login_required without (OIDC Core §3.1.2.6).
 */
async function sessionOf(
  ctx: CheckContext,
  context: BrowserContext,
  what: string,
): Promise<'alive' | 'ended'> {
  const result = await authorize(ctx, { context, user: null, params: { prompt: 'none' } })
  expectThat(
    result.callback,
    `${what}: prompt=none did not redirect back to the client (page at ${result.outcome.page.url()})`,
  )
  const error = result.callback.searchParams.get('error')
  if (result.callback.searchParams.get('code') && !error) return 'alive'
  // OIDC Core §3.1.2.6: consent_required and account_selection_required are answers for a
  // signed-in End-User who must still consent or choose (login_required is the one for none), so
  // they show a live session (an OP may remember consent in a grant another check revoked:
  // blind round 4, S7); interaction_required does not say which, so it decides nothing
  if (error === 'consent_required' || error === 'account_selection_required') {
    ctx.note(
      `${what}: prompt=none answered error=${error}, an answer for a signed-in user (OIDC Core §3.1.2.6): the session is alive`,
    )
    return 'alive'
  }
  expectControl(
    error !== 'interaction_required',
    `${what}: prompt=none answered error=interaction_required, which does not say whether the user is still signed in (OIDC Core §3.1.2.6), so the session cannot be shown alive or ended`,
  )
  expectThat(
    error === 'login_required',
    `${what}: prompt=none answered error=${show(error)}; expected a code, login_required, or consent_required / account_selection_required for a signed-in user (OIDC Core §3.1.2.6)`,
  )
  return 'ended'
}

async function expectSession(
  ctx: CheckContext,
  context: BrowserContext,
  expected: 'alive' | 'ended',
  what: string,
): Promise<void> {
  const state = await sessionOf(ctx, context, what)
  expectThat(
    state === expected,
    expected === 'ended'
      ? `${what}: the session survived the logout (prompt=none still returned a code)`
      : `${what}: the session was ended without the user confirming (prompt=none got login_required)`,
  )
}

/**
 * The session must be over in this browser and at the server: the cookies `before` the logout,
 * replayed in a fresh context, must not sign anyone in (a logout that only deletes the cookie
 * leaves a stolen or cached copy working).
 */
async function expectLoggedOut(
  ctx: CheckContext,
  context: BrowserContext,
  before: Awaited<ReturnType<BrowserContext['cookies']>>,
  what: string,
): Promise<void> {
  await expectSession(ctx, context, 'ended', what)
  const replay = await ctx.newBrowserContext()
  await replay.addCookies(
    before.map((c) => ({
      name: c.name,
      value: c.value,
      url: ctx.target.baseUrl,
      secure: c.secure,
      httpOnly: c.httpOnly,
      sameSite: c.sameSite,
    })),
  )
  await expectSession(ctx, replay, 'ended', `${what}: the session cookie from before replayed`)
}

/**
 * Signs in again in a context whose session ended: the login page must show (INTERFACE.md
 * §4.1). The form is posted over HTTP, as for `signedIn`; a session that lived on would send
 * the request to the client without a form, and the browser then shows whether it did.
 */
async function signInAgain(ctx: CheckContext, context: BrowserContext, what: string) {
  const result = await authorize(ctx, { context, byFormPost: true })
  expectThat(result.outcome.loginShown, `${what}: signing in again did not show the login page`)
  codeOf(result)
}

/**
 * Presses the confirmation button of a logout page, when the page asks; returns whether it
 * did. The wait covers the form post and the page it leads to.
 */
async function confirmIfAsked(page: Page): Promise<boolean> {
  if ((await page.locator('input[type=password]').count()) > 0) return false
  const button = page
    // a button may sit outside its form and name it (the form attribute), as
    // node-oidc-provider's logout page has it
    .locator(
      'form button[type=submit], form button:not([type]), form input[type=submit], button[form]:not([type=button]), input[type=submit][form]',
    )
    .first()
  if ((await button.count()) === 0) return false
  const posted = page
    .waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'POST', {
      timeout: 10_000,
    })
    .catch(() => undefined)
  await button.click()
  await posted
  await page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined)
  return true
}

const LOGOUT_01 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  const context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)
  // the session cookies as they were, to replay after the logout
  const before = await context.cookies(ctx.target.baseUrl)
  const state = randomState(128)
  const redirect = 'logout with a valid hint'
  // the logout must go through: a confirmation the OP asks first (RP-Initiated Logout 1.0 §2) is
  // answered as the user would
  const outcome = await browseLogout(
    ctx,
    context,
    logoutUrl(ctx, { id_token_hint: idToken, post_logout_redirect_uri: uri, state }),
    redirect,
  )
  // the redirect and the end of the session are sub-cases: a server wrong in both is told both
  // RP-Initiated Logout §3: redirect to the registered URI with state and nothing else
  await ctx.subcase(redirect, () => expectPostLogoutUrl(outcome.callback, uri, { state }, redirect))
  await ctx.subcase('after logout', async () => {
    await expectLoggedOut(ctx, context, before, 'after logout')
    const again = await authorize(ctx, { context, user: null })
    expectThat(
      again.outcome.loginShown,
      `a new authorization showed no login page (${whereLeft(again)})`,
    )
  })
})

const LOGOUT_05 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  let context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)

  // each logout is a sub-case, and so are the redirect and the end of the session of the first:
  // a server wrong in several of them is told each
  // no state: the registered URI exactly, with no state parameter (RP-Initiated Logout §3); a
  // confirmation the OP asks first (§2) is answered, as the logout must go through
  const first = 'logout without state'
  const outcome = await browseLogout(
    ctx,
    context,
    logoutUrl(ctx, { id_token_hint: idToken, post_logout_redirect_uri: uri }),
    first,
  )
  await ctx.subcase(first, () => expectPostLogoutUrl(outcome.callback, uri, {}, first))
  // whether the last logout was seen to end the session, so the next starts from a fresh one
  const last = { ended: false }
  await ctx.subcase(first, async () => {
    await expectSession(ctx, context, 'ended', first)
    last.ended = true
  })

  const steps: [string, Record<string, string>][] = [
    ['logout without post_logout_redirect_uri', { id_token_hint: idToken }],
    ['logout with no parameters', {}],
    ['logout with only state', { state: randomState(16) }],
  ]
  for (const [what, params] of steps) {
    // after a logout that ended the session, signing in again must show the login page; after
    // one that failed, the next logout starts in a fresh browser, signed in there
    if (last.ended) await signInAgain(ctx, context, `before ${what}`)
    else {
      context = await ctx.newBrowserContext()
      await signedIn(ctx, context)
    }
    last.ended = false
    await ctx.subcase(what, async () => {
      const outcome = await browse(context, ctx.target, logoutUrl(ctx, params), ctx.http)
      expectStayed(ctx, outcome, what)
      // RP-Initiated Logout §2: the OP may ask the user first; the logout must still happen. The
      // user's answer: the configured logout interaction or the page's one sign-out control,
      // else the confirmation form's first submit control
      const answer = await answerLogoutConfirmation(ctx, outcome.page, outcome.stopped?.status)
      if (answer.answered !== undefined)
        ctx.note(`${what}: the user was asked to confirm; answered: ${answer.answered}`)
      else if (answer.asks)
        throw new Error(
          `${what}: the logout stopped at a logout confirmation (RP-Initiated Logout 1.0 §2) that the suite cannot answer, at ${outcome.page.url()}: configure a logout interaction (README, Login steps and interactions)`,
        )
      else if (await confirmIfAsked(outcome.page))
        ctx.note(`${what}: the user was asked to confirm`)
      expectThat(
        outcome.page.url().startsWith(ctx.target.baseUrl),
        `${what}: expected the logged-out page, the browser went to ${outcome.page.url()}`,
      )
      await ctx.screenshot(what, outcome.page)
      await expectSession(ctx, context, 'ended', what)
      last.ended = true
    })
  }
})

const LOGOUT_06 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  const context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)
  const before = await context.cookies(ctx.target.baseUrl)
  const state = randomState(128)
  // the form is posted from a page at the client's origin, as a relying party posts it
  const rpPage = `${new URL(uri).origin}/conformance-rp-logout-form`
  const outcome = await browse(context, ctx.target, rpPage, ctx.http)
  expectThat(outcome.callback, `could not open a page at ${rpPage} in the browser`)
  const page = outcome.page
  await page.waitForURL(rpPage, { timeout: 10_000 })
  const fields = { id_token_hint: idToken, post_logout_redirect_uri: uri, state }
  // the HTTP status of the main frame's latest document (an error page is the OP's answer)
  const documentStatus: { value: number | undefined } = { value: undefined }
  page.on('response', (r) => {
    if (r.request().isNavigationRequest() && r.request().frame() === page.mainFrame())
      documentStatus.value = r.status()
  })
  // done when the browser reaches the URI, or settles on a page of the IdP instead: a page
  // that cannot move by itself (no script, meta refresh, handler or frame), or one that stays
  // put for 3 s after it loaded (a page that submits itself moves on before)
  const arrived = page
    .waitForURL((u) => u.href !== rpPage && u.href.startsWith(uri), { timeout: 20_000 })
    .then(() => true)
    .catch(() => false)
  const settle = async (): Promise<false> => {
    for (;;) {
      const at = page.url()
      await page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined)
      if (page.url() === at && !(await mayMoveByItself(page))) return false
      await new Promise((r) => setTimeout(r, 3000))
      if (page.url() === at && at.startsWith(ctx.target.baseUrl)) return false
      if (page.isClosed()) return false
    }
  }
  const settled = page
    .waitForResponse(
      (r) =>
        r.request().isNavigationRequest() &&
        r.url().startsWith(ctx.target.baseUrl) &&
        (r.status() < 300 || r.status() >= 400),
      { timeout: 15_000 },
    )
    .then(settle)
    .catch(() => false)
  // RP-Initiated Logout §2: the OP MUST support POST (form-encoded)
  await page.evaluate(
    ({ action, fields }) => {
      const form = document.createElement('form')
      form.method = 'POST'
      form.action = action
      for (const [name, value] of Object.entries(fields)) {
        const input = document.createElement('input')
        input.type = 'hidden'
        input.name = name
        input.value = value
        form.appendChild(input)
      }
      document.body.appendChild(form)
      form.submit()
    },
    { action: endpointUrl(ctx.target, 'end_session_endpoint'), fields },
  )
  if (!(await Promise.race([arrived, settled]))) {
    await page.waitForLoadState('load', { timeout: 5_000 }).catch(() => undefined)
    await ctx.screenshot('after the logout POST', page)
    // RP-Initiated Logout 1.0 §2: the OP SHOULD ask the End-User whether to log out; the user's
    // answer (the configured logout interaction, or the page's one sign-out control) is given
    const confirmation = page.url().startsWith(ctx.target.baseUrl)
      ? await answerLogoutConfirmation(ctx, page, documentStatus.value)
      : { answered: undefined, asks: false }
    if (confirmation.answered === undefined) {
      if (confirmation.asks)
        throw new Error(
          `the POST logout stopped at a logout confirmation (RP-Initiated Logout 1.0 §2: the OP SHOULD ask the user) that the suite cannot answer, at ${page.url()}: configure a logout interaction (README, Login steps and interactions)`,
        )
      throw new CheckFailure(
        `the form-encoded POST logout did not redirect to ${uri}; the browser is at ${page.url()}`,
      )
    }
    ctx.note(
      `the OP asked the user to confirm the POST logout (RP-Initiated Logout 1.0 §2); answered: ${confirmation.answered}`,
    )
    const confirmed = await page
      .waitForURL((u) => u.href.startsWith(uri), { timeout: 15_000 })
      .then(() => true)
      .catch(() => false)
    if (!confirmed) {
      await ctx.screenshot('after confirming the logout', page)
      throw new CheckFailure(
        `the form-encoded POST logout did not redirect to ${uri} once the user confirmed (${confirmation.answered}); the browser is at ${page.url()}`,
      )
    }
  }
  expectPostLogoutUrl(page.url(), uri, { state }, 'POST logout')
  await expectLoggedOut(ctx, context, before, 'after the POST logout')
})

const LOGOUT_07 = check(async (ctx) => {
  const uri = postLogoutUri(ctx)
  let context = await ctx.newBrowserContext()
  const idToken = await signedIn(ctx, context)
  // RP-Initiated Logout §6: a request anyone could forge must not end the session silently
  const forged: [string, Record<string, string>][] = [
    ['a logout request without a hint', {}],
    [
      'a logout request with an invalid hint',
      { id_token_hint: forgeTampered(idToken), post_logout_redirect_uri: uri },
    ],
  ]
  // the browser stops at a confirmation: the configured logout interaction is the user's
  // answer, which this check judges the provider for asking, so it never gives it unasked
  const unanswered = withoutLogoutAnswers(ctx.target)
  // each forged request, and the confirmation, is a sub-case: every deviation is reported
  for (const [what, params] of forged)
    await ctx.subcase(what, async () => {
      const outcome = await browse(context, unanswered, logoutUrl(ctx, params), ctx.http)
      let left: Error | undefined
      try {
        expectStayed(ctx, outcome, what)
      } catch (err) {
        left = err instanceof Error ? err : new Error(String(err))
      }
      await ctx.screenshot(what, outcome.page)
      const state = await sessionOf(ctx, context, what)
      // a session the request ended: the next part starts signed in again, in a fresh browser
      if (state === 'ended') {
        context = await ctx.newBrowserContext()
        await signedIn(ctx, context)
      }
      if (left !== undefined) throw left
      expectThat(
        state === 'alive',
        `${what}: the session was ended without the user confirming (prompt=none got login_required)`,
      )
    })
  // and the page really is a confirmation: confirming ends the session
  const confirming = 'confirming the logout'
  await ctx.subcase(confirming, async () => {
    const outcome = await browse(context, unanswered, logoutUrl(ctx, {}), ctx.http)
    // the user confirms: the configured logout interaction (or the page's one sign-out
    // control), else the page's first submit control
    const answer = await answerLogoutConfirmation(ctx, outcome.page, outcome.stopped?.status)
    if (answer.answered) ctx.note(`confirmed the logout: ${answer.answered}`)
    expectThat(
      answer.answered !== undefined || (await confirmIfAsked(outcome.page)),
      `the logout page without a hint offers no confirmation (page at ${outcome.page.url()})`,
    )
    await expectSession(ctx, context, 'ended', 'after confirming the logout')
  })
})

/**
 * The logout checks of the session's end: by GET and POST with a valid hint, without state or
 * URI (the logged-out page), and only once the user confirms a request without a valid hint (the
 * other rows of catalogue/logout.ts: logout-requests.ts).
 */
export const logoutSessionChecks = {
  'LOGOUT-01': LOGOUT_01,
  'LOGOUT-05': LOGOUT_05,
  'LOGOUT-06': LOGOUT_06,
  'LOGOUT-07': LOGOUT_07,
} satisfies Partial<AreaChecks<typeof catalogue>>
