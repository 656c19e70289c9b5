import { randomBytes } from 'node:crypto'
import type { BrowserContext, Page } from '@playwright/test'
import { appliesTo, browse, clientOrigins, runSteps, type BrowserOutcome } from './browser.ts'
import type { CheckContext } from './check.ts'
import { expectEqual, expectThat } from './expect.ts'
import { idTokenOf, signIn } from './flows.ts'
import { LOGOUT_LABEL } from './interaction-words.ts'
import { endpointUrl } from './requests.ts'
import type { Target } from './target.ts'

// What the logout checks (logout-requests.ts, logout-session.ts) share: the RP-initiated
// logout request, the session it ends, and where the browser may and may not be sent.

/** The main client's registered post-logout URI, or the check is skipped. */
export function postLogoutUri(ctx: CheckContext): string {
  const uri = ctx.target.clients.main.postLogoutRedirectUri
  if (!uri)
    ctx.skip(
      `client ${ctx.target.clients.main.id} has no postLogoutRedirectUri in the target config`,
    )
  return uri
}

/** A state value of `length` URL-safe characters. */
export const randomState = (length: number): string =>
  randomBytes(Math.ceil((length * 3) / 4))
    .toString('base64url')
    .slice(0, length)

/** The end-session endpoint's URL with `params` in its query. */
export const logoutUrl = (ctx: CheckContext, params: Record<string, string>): string => {
  const query = new URLSearchParams(params).toString()
  const endpoint = endpointUrl(ctx.target, 'end_session_endpoint')
  return query ? `${endpoint}${endpoint.includes('?') ? '&' : '?'}${query}` : endpoint
}

/**
 * A session of its own in `context`, and its ID token: the subject is the logout that follows,
 * so the login form is posted over HTTP (the browser when it cannot be; LOGIN-* test the page).
 */
export async function signedIn(ctx: CheckContext, context: BrowserContext): Promise<string> {
  return idTokenOf(await signIn(ctx, { context, byFormPost: true }))
}

/**
 * The URL must be `uri` with exactly the parameters `params` added (RP-Initiated Logout §3:
 * state echoed, nothing else; OIDF CheckForUnexpectedParametersInPostLogoutRedirect).
 */
export function expectPostLogoutUrl(
  actual: string | undefined,
  uri: string,
  params: Record<string, string>,
  what: string,
): void {
  expectThat(actual, `${what}: the IdP never redirected to ${uri}`)
  const got = new URL(actual)
  const want = new URL(uri)
  for (const [k, v] of Object.entries(params)) want.searchParams.append(k, v)
  expectEqual(
    `${got.origin}${got.pathname}`,
    `${want.origin}${want.pathname}`,
    `${what}: the post-logout redirect target`,
  )
  const sorted = (u: URL) =>
    [...u.searchParams]
      .map(([k, v]) => `${k}=${v}`)
      .sort()
      .join('&')
  expectEqual(sorted(got), sorted(want), `${what}: the parameters of the post-logout redirect`)
  expectThat(
    got.hash === '' && !/[?&]$/.test(actual),
    `${what}: the post-logout redirect has a stray fragment or separator: ${actual}`,
  )
}

/** The browser must stay at the IdP: no navigation to a client URI. */
export function expectStayed(ctx: CheckContext, outcome: BrowserOutcome, what: string): void {
  expectThat(
    outcome.callback === undefined,
    `${what}: expected an error or confirmation page, but the browser was sent to ${outcome.callback ?? ''}`,
  )
  const at = outcome.page.url()
  expectThat(
    at.startsWith(ctx.target.baseUrl),
    `${what}: expected the browser to stay at the IdP, it is at ${at}`,
  )
}

/**
 * The target without its configured `logout` interactions: for a check whose subject is
 * whether the provider asks the user to confirm a logout, the browser must stop at the
 * confirmation, never answer it (the built-in recognisers never press a sign-out control).
 */
export function withoutLogoutAnswers<T extends Pick<Target, 'interactions'>>(target: T): T {
  return {
    ...target,
    interactions: target.interactions?.filter((i) => i.kind !== 'logout'),
  }
}

/** A sign-out control's label that keeps the session ("No, stay signed in", "Cancel"). */
const KEEPS_SESSION = /\b(stay|no|not now|cancel|keep|back)\b/i

/**
 * Answers the logout confirmation the browser shows (RP-Initiated Logout 1.0 §2: the OP SHOULD
 * ask the End-User whether to log out, and MUST without a valid id_token_hint): with the
 * configured `logout` interaction whose `url`/`detect` match the page (served with `status`),
 * else with the page's one visible sign-out control ("Yes, sign me out", "Log out"; never one
 * that keeps the session). Returns how it answered (`answered`, undefined when nothing was
 * pressed) and whether the page asks (`asks`: a configured logout interaction or a visible
 * sign-out control), so a caller tells a confirmation it cannot answer from any other page.
 */
export async function answerLogoutConfirmation(
  ctx: Pick<CheckContext, 'target'>,
  page: Page,
  status: number | undefined,
): Promise<{ readonly answered: string | undefined; readonly asks: boolean }> {
  for (const interaction of ctx.target.interactions ?? []) {
    if (interaction.kind !== 'logout' || !appliesTo(interaction, page.url(), status)) continue
    if (
      interaction.detect &&
      !(await page
        .locator(interaction.detect)
        .filter({ visible: true })
        .count()
        .then((n) => n > 0)
        .catch(() => false))
    )
      continue
    const moved = nextDocument(page)
    await runSteps(page, interaction, undefined)
    await moved
    return { answered: `${interaction.name} (configured)`, asks: true }
  }
  if (status !== undefined && status >= 400) return { answered: undefined, asks: false }
  const controls = page.locator(
    'button, input[type=submit], input[type=button], [role=button], a[href]',
  )
  const labels = await controls
    .evaluateAll((els) =>
      els.map((el) => ({
        text: (el instanceof HTMLInputElement ? el.value : (el as HTMLElement).innerText || '')
          .replace(/\s+/g, ' ')
          .trim(),
        shown: el.getClientRects().length > 0,
      })),
    )
    .catch(() => [])
  const signOut = labels.flatMap((l, index) =>
    l.shown && LOGOUT_LABEL.test(l.text) && !KEEPS_SESSION.test(l.text) ? [index] : [],
  )
  // one sign-out control, or the suite would be guessing which one the page means
  const asks = labels.some((l) => l.shown && LOGOUT_LABEL.test(l.text))
  if (signOut.length !== 1 || signOut[0] === undefined) return { answered: undefined, asks }
  const label = labels[signOut[0]]?.text ?? ''
  const moved = nextDocument(page)
  await controls.nth(signOut[0]).click({ timeout: 10_000 })
  await moved
  return { answered: `built-in: "${label}"`, asks }
}

/**
 * Opens the logout request `url` in `context` for a check that needs the logout to go through
 * (a positive part, or the positive control of a negative one): where the provider stops at a
 * logout confirmation (RP-Initiated Logout 1.0 §2: the OP SHOULD ask the End-User whether to log
 * out, even with a valid id_token_hint), the user's answer is given as LOGOUT-06 gives it (the
 * configured `logout` interaction, else the page's one sign-out control), noted, and the
 * browser followed to the client URI it is then sent to. A confirmation the suite cannot answer
 * leaves the check inconclusive (an Error, never a failure of the provider); any other page is
 * returned as it is, for the caller to judge.
 */
export async function browseLogout(
  ctx: Pick<CheckContext, 'target' | 'http' | 'note'>,
  context: BrowserContext,
  url: string,
  what: string,
): Promise<BrowserOutcome> {
  const outcome = await browse(context, ctx.target, url, ctx.http)
  const page = outcome.page
  // a configured logout interaction is answered by the driver itself, on the way
  if (outcome.interactions?.length)
    ctx.note(
      `${what}: the OP showed pages on the way (RP-Initiated Logout 1.0 §2 lets it ask the user); answered: ${outcome.interactions.join('; ')}`,
    )
  if (outcome.callback !== undefined || !page.url().startsWith(ctx.target.baseUrl)) return outcome
  const answer = await answerLogoutConfirmation(ctx, page, outcome.stopped?.status)
  if (answer.answered === undefined) {
    if (answer.asks)
      throw new Error(
        `${what}: the logout stopped at a logout confirmation (RP-Initiated Logout 1.0 §2: the OP SHOULD ask the user) that the suite cannot answer, at ${page.url()}: configure a logout interaction (README, Login steps and interactions)`,
      )
    return outcome
  }
  ctx.note(
    `${what}: the OP asked the user to confirm the logout (RP-Initiated Logout 1.0 §2); answered: ${answer.answered}`,
  )
  const origins = new Set(clientOrigins(ctx.target))
  const reached = await page
    .waitForURL((u) => origins.has(u.origin), { timeout: 15_000 })
    .then(() => true)
    .catch(() => false)
  return reached ? { ...outcome, callback: page.url(), stopped: undefined } : outcome
}

/** The main frame's next document, loaded; at most 10 s each (never rejects). */
async function nextDocument(page: Page): Promise<void> {
  await page
    .waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame(), timeout: 10_000 })
    .then(() => page.waitForLoadState('load', { timeout: 10_000 }))
    .catch(() => undefined)
}
