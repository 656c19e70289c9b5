import type { Frame, Page, Response } from '@playwright/test'
import {
  loginDetector,
  loginFormVisible,
  loginFrame,
  loginScope,
  scopeOf,
  submitLogin,
} from './browser.ts'
import { originOf } from './idp-origins.ts'
import type { LoginConfig, TargetUser } from './target.ts'

// One failed sign-in driven in the browser, for the checks that send wrong credentials on
// purpose (SEC-02, RATE-*, LOGIN-06). A login over several pages (identifier first, then the
// password; a one-time code after the password) has steps that only follow a success: after a
// refusal the browser never reaches them, so the attempt ends with the provider's answer to the
// credential, not with a step that times out waiting for a page that never comes.

/**
 * Whether a request body carries `secret`: verbatim, URL-encoded (a form post) or escaped as a
 * JSON string (a script's fetch/XHR call).
 */
export function bodyCarries(body: string | null, secret: string): boolean {
  if (!body || !secret) return false
  if (body.includes(secret) || body.includes(encodeURIComponent(secret))) return true
  if (body.includes(JSON.stringify(secret).slice(1, -1))) return true
  // a form's encoding writes a space as "+"
  return body.includes(new URLSearchParams({ s: secret }).toString().slice(2))
}

/** How a failed attempt ended. */
export interface FailedAttempt {
  /**
   * The provider's answer: to the request that carried the password, or, when the steps stopped
   * before the password was sent (the provider refused the user name at its own step), to the
   * last request the sign-in posted.
   */
  readonly response: Response
  /** Whether `response` answers the request that carried the password. */
  readonly carriedPassword: boolean
  /**
   * Ends what is left of the attempt: steps that only follow a success and still wait for
   * their page are stopped by closing the page (so nothing runs on unobserved). Resolves once
   * the steps have settled; `closed` says whether the page had to be closed.
   */
  end(): Promise<{ readonly closed: boolean }>
}

/**
 * A POST the sign-in sends: a navigation (a form, in the page or a frame), or a script's call to
 * the page's origin or that of the frame holding the form.
 */
function isSignInPost(response: Response, origins: ReadonlySet<string | undefined>): boolean {
  const req = response.request()
  if (req.method() !== 'POST') return false
  if (req.isNavigationRequest()) return true
  const script = req.resourceType() === 'fetch' || req.resourceType() === 'xhr'
  return script && origins.has(originOf(req.url()))
}

/**
 * Submits the login page `page` with `user` (credentials the provider is meant to refuse), by
 * the configured steps or the usual form (on the page, or in the frame of the page's own origin
 * or one of `frameOrigins` that holds it, found as the browser sign-in finds it: loginScope),
 * and resolves with the provider's answer once the request carrying the password is answered
 * (and the page it leads to, in the page or in that frame, if any, has loaded).
 * When the steps stop before that (a step's page never came) after the sign-in posted something,
 * the provider refused at that earlier step (no progress) and the last answer is the attempt's.
 * Throws when the sign-in sent nothing within `timeoutMs` (the browser's own validation blocked
 * it, or a step never matched): the attempt could not be driven. The caller must call `end()`.
 */
export async function failedSignIn(
  page: Page,
  user: TargetUser,
  login: LoginConfig | undefined,
  timeoutMs: number,
  frameOrigins: ReadonlySet<string> = new Set(),
): Promise<FailedAttempt> {
  // where the usual form is; configured steps address their frames themselves
  const scope = login?.steps ? page : await loginScope(page, login, frameOrigins)
  const origins = new Set([originOf(page.url()), originOf(scope.url())])
  const answers: Response[] = []
  // how many pages had loaded when each answer came (the page it leads to loads after it)
  const loadsAt = new Map<Response, number>()
  // a frame's answer: how many documents that frame had committed when the answer came
  const navigations = new Map<Frame, number>()
  const navigationsAt = new Map<Response, number>()
  // set by the listener (an object: the type checker does not follow assignments in callbacks)
  const got: { secret: Response | undefined } = { secret: undefined }
  let wake: () => void = () => undefined
  let changed = new Promise<void>((resolve) => (wake = resolve))
  const signal = (): void => {
    wake()
    changed = new Promise<void>((resolve) => (wake = resolve))
  }
  let loads = 0
  const onLoad = (): void => {
    loads++
    signal()
  }
  const onNavigated = (frame: Frame): void => {
    if (frame === page.mainFrame()) return
    navigations.set(frame, (navigations.get(frame) ?? 0) + 1)
    signal()
  }
  const frameOf = (response: Response): Frame | undefined => {
    try {
      return response.frame()
    } catch {
      // a service worker's request has no frame
      return undefined
    }
  }
  const onResponse = (response: Response): void => {
    if (!isSignInPost(response, origins)) return
    answers.push(response)
    loadsAt.set(response, loads)
    const frame = frameOf(response)
    if (frame) navigationsAt.set(response, navigations.get(frame) ?? 0)
    if (!got.secret && bodyCarries(response.request().postData(), user.password))
      got.secret = response
    signal()
  }
  page.on('response', onResponse)
  page.on('load', onLoad)
  page.on('framenavigated', onNavigated)
  const steps: { settled: boolean; error?: unknown } = { settled: false }
  // observed at once: a step that fails after the attempt ended must not reject unobserved
  const submitted = submitLogin(page, user, login, undefined, scope).then(
    () => {
      steps.settled = true
      signal()
    },
    (error: unknown) => {
      steps.settled = true
      steps.error = error
      signal()
    },
  )
  const end = async (): Promise<{ closed: boolean }> => {
    page.off('response', onResponse)
    page.off('load', onLoad)
    page.off('framenavigated', onNavigated)
    const closed = !steps.settled
    if (closed) await page.close().catch(() => undefined)
    await submitted
    return { closed }
  }
  const deadline = performance.now() + timeoutMs
  let timer: NodeJS.Timeout | undefined
  const waitForChange = async (until = deadline): Promise<boolean> => {
    const left = Math.min(until, deadline) - performance.now()
    if (left <= 0) return false
    return Promise.race([
      changed.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), left))),
    ]).finally(() => clearTimeout(timer))
  }
  try {
    // the answer to the password's request, or the steps settling without one
    while (!got.secret && !steps.settled) if (!(await waitForChange())) break
    if (!got.secret && steps.settled && !steps.error) {
      // the steps are done (a click returns before its request is answered): the next answer
      const seen = answers.length
      const answered = (): boolean => got.secret !== undefined || answers.length > seen
      while (!answered()) if (!(await waitForChange())) break
    }
    const response = got.secret ?? answers.at(-1)
    if (!response) {
      const why = steps.error
        ? (steps.error as Error).message.split('\n')[0]
        : `nothing was posted within ${Math.round(timeoutMs / 1000)} s`
      throw new Error(`the sign-in with a wrong password could not be sent: ${why ?? ''}`)
    }
    // a form's answer is a page: wait for it to load (bounded), so it is judged as shown
    if (response.request().isNavigationRequest()) {
      const bound = Math.min(10_000, Math.max(0, deadline - performance.now()))
      const until = performance.now() + bound
      const frame = frameOf(response)
      if (frame && frame !== page.mainFrame()) {
        // a form in a frame: that frame's next document, then its load
        const before = navigationsAt.get(response) ?? 0
        const committed = (): boolean => (navigations.get(frame) ?? 0) > before
        while (!committed()) if (!(await waitForChange(until))) break
        const left = until - performance.now()
        if (committed() && left > 0)
          await frame.waitForLoadState('load', { timeout: left }).catch(() => undefined)
      } else {
        const before = loadsAt.get(response) ?? loads
        while (loads === before) if (!(await waitForChange(until))) break
      }
    }
    const carriedPassword = response === got.secret
    return { response, carriedPassword, end }
  } catch (err) {
    await end()
    throw err
  }
}

/**
 * Whether `page` shows the sign-in's first page, where the login steps (or the usual form) begin:
 * the first required step's control is visible (in the frame the step names), or the usual form
 * is, on the page or in a frame of the page's origin or one of `frameOrigins` (loginFrame). A
 * login over several pages leaves the browser on a later one after a refusal (the password page
 * says the password was wrong).
 */
export async function onFirstLoginPage(
  page: Page,
  login: LoginConfig | undefined,
  frameOrigins: ReadonlySet<string> = new Set(),
): Promise<boolean> {
  if (page.isClosed()) return false
  if (!login?.steps) {
    if (await loginFormVisible(page)) return true
    // the usual form in a frame (a hosted widget), found as the browser sign-in finds it
    const frame = await loginFrame(page, loginDetector(login), frameOrigins)
    return frame !== undefined && loginFormVisible(frame)
  }
  const first = login.steps.find((s) => !('goto' in s) && !('optional' in s && s.optional))
  if (!first || 'goto' in first) return false
  const selector =
    'fill' in first
      ? first.fill
      : 'click' in first
        ? first.click
        : 'press' in first
          ? first.press
          : first.waitFor
  // in the frame the step names, as the step itself looks for it
  return scopeOf(page, first, undefined)
    .locator(selector)
    .first()
    .isVisible()
    .catch(() => false)
}
