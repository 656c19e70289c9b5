import { createHash, type X509Certificate } from 'node:crypto'
import { existsSync } from 'node:fs'
import { connect, rootCertificates } from 'node:tls'
import { chromium, type Browser, type BrowserContext, type Page } from '@playwright/test'
import type { Http } from './http.ts'
import { countSignIn } from './session.ts'
import { redactHeaders, redactUrl, rememberIssuedUrl } from './redact.ts'
import type { LoginConfig, LoginStep, Target, TargetClient, TargetUser } from './target.ts'

/**
 * Debian's Chromium builds, in the order they are preferred: the headless shell (package
 * chromium-headless-shell, the "old headless" build that Playwright itself runs for headless
 * Chromium) does the same navigation, cookies, TLS and scripts as the full browser without its
 * UI layers; on the 2-core machine it halved the CPU and the wall time of the browser checks.
 */
export const DEBIAN_CHROMIUMS = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'] as const

/**
 * The Chromium to drive: `CHROMIUM_PATH`, else Debian's headless shell or its full Chromium,
 * else Playwright's own browser (undefined) on machines that have one.
 */
export function chromiumExecutable(
  env: NodeJS.ProcessEnv = process.env,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH
  return DEBIAN_CHROMIUMS.find((path) => exists(path))
}

/** Flags that keep Chromium off the network and quiet in a sandboxed CI. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
]

/**
 * The SPKI pin of the target's certificate, for targets that use a private CA. The leaf is
 * first verified in Node against that CA; only then is its key pinned in Chromium, so TLS
 * checks are never switched off wholesale.
 */
export async function spkiPin(target: Pick<Target, 'baseUrl' | 'ca'>): Promise<string | undefined> {
  if (!target.ca) return undefined
  const url = new URL(target.baseUrl)
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const cert = await new Promise<X509Certificate>((resolve, reject) => {
    const socket = connect({
      host,
      port: Number(url.port || 443),
      servername: /^[\d.]+$|:/.test(host) ? undefined : host,
      ca: [...rootCertificates, target.ca ?? ''],
      rejectUnauthorized: true,
    })
    socket.once('secureConnect', () => {
      const peer = socket.getPeerX509Certificate()
      socket.end()
      if (peer) resolve(peer)
      else reject(new Error('no peer certificate'))
    })
    socket.once('error', reject)
  })
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' })
  return createHash('sha256').update(spki).digest('base64')
}

/** Launches the run's one browser, trusting the target's verified certificate. */
export async function launchBrowser(target: Pick<Target, 'baseUrl' | 'ca'>): Promise<Browser> {
  const pin = await spkiPin(target)
  const executablePath = chromiumExecutable()
  return chromium.launch({
    headless: true,
    ...(executablePath ? { executablePath } : {}),
    args: [...CHROMIUM_ARGS, ...(pin ? [`--ignore-certificate-errors-spki-list=${pin}`] : [])],
  })
}

/** Where a browser flow ended: the URL at a client URI (never fetched), or a page at the IdP. */
export interface BrowserOutcome {
  /** The full URL of the client URI the IdP sent the browser to, if it did. */
  readonly callback: string | undefined
  /** The page left open (at the IdP when there was no callback). */
  readonly page: Page
  /** Whether a login form was shown and filled. */
  readonly loginShown: boolean
  /** Status of the response to the login form post, when there was one. */
  readonly loginPostStatus: number | undefined
}

export interface BrowserFlowOptions {
  /** Sign in with this user when a login form appears; omit to stop at the form. */
  readonly user?: TargetUser | undefined
  /** Press the form's cancel control instead of signing in. */
  readonly cancel?: boolean
  /** Called with the login page before it is filled (evidence). */
  readonly onLoginPage?: (page: Page) => Promise<void>
  /** Called after each login step with what it did (the dry run's log and screenshots). */
  readonly onLoginStep?: LoginStepListener
  readonly timeoutMs?: number
}

/** Origins of every client URI of the target: navigation there is intercepted, never sent. */
export function clientOrigins(target: Pick<Target, 'clients'>): string[] {
  const clients = Object.values(target.clients as Record<string, TargetClient | undefined>)
  const uris = clients.flatMap((c) => (c ? [c.redirectUri, c.postLogoutRedirectUri] : []))
  return [...new Set(uris.filter((u): u is string => Boolean(u)).map((u) => new URL(u).origin))]
}

/**
 * Opens `url` in `context` and follows it: fills the login form when one appears, and stops
 * when the IdP redirects to a client URI. The redirect is caught at the DevTools level
 * (Fetch.requestPaused), because Playwright's route() does not see redirect hops, and is
 * answered locally so nothing leaves the machine.
 */
export async function browse(
  context: BrowserContext,
  target: Pick<Target, 'clients' | 'login'>,
  url: string,
  http: Http,
  options: BrowserFlowOptions = {},
): Promise<BrowserOutcome> {
  const timeout = options.timeoutMs ?? 15_000
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  // a holder, because the DevTools handler sets it behind the type checker's back
  const seen: { callback: string | undefined } = { callback: undefined }
  const arrived = (): boolean => seen.callback !== undefined
  let resolveCallback: (url: string) => void = () => undefined
  const reachedCallback = new Promise<string>((resolve) => (resolveCallback = resolve))
  cdp.on(
    'Fetch.requestPaused',
    (event: { requestId: string; resourceType: string; request: { url: string } }) => {
      if (event.resourceType !== 'Document') {
        // a subresource at a client origin (the branding logo): answered locally, not a callback
        void cdp
          .send('Fetch.fulfillRequest', { requestId: event.requestId, responseCode: 404, body: '' })
          .catch(() => undefined)
        return
      }
      seen.callback = event.request.url
      rememberIssuedUrl(event.request.url)
      resolveCallback(event.request.url)
      void cdp
        .send('Fetch.fulfillRequest', {
          requestId: event.requestId,
          responseCode: 200,
          responseHeaders: [{ name: 'content-type', value: 'text/html' }],
          body: Buffer.from(
            '<!doctype html><title>client</title><p>reached the client</p>',
          ).toString('base64'),
        })
        .catch(() => undefined)
    },
  )
  await cdp.send('Fetch.enable', {
    patterns: clientOrigins(target).map((origin) => ({
      urlPattern: `${origin}/*`,
      requestStage: 'Request' as const,
    })),
  })
  let loginPostStatus: number | undefined
  // whether the main frame's latest document came with a Refresh header (a redirect to a browser)
  const refresh = { header: false }
  page.on('response', (res) => {
    const req = res.request()
    if (!req.isNavigationRequest()) return
    if (req.frame() === page.mainFrame()) refresh.header = 'refresh' in res.headers()
    if (req.method() === 'POST' && loginPostStatus === undefined) loginPostStatus = res.status()
    http.record({
      method: req.method(),
      url: redactUrl(req.url()),
      requestHeaders: {},
      requestBody: req.method() === 'POST' ? '[browser form, redacted]' : undefined,
      status: res.status(),
      responseHeaders: redactHeaders(res.headers()),
      responseBody: undefined,
      error: undefined,
      durationMs: 0,
    })
  })

  const navigation = page.goto(url, { timeout }).catch(() => undefined)
  const detect = loginDetector(target.login)
  const form = page
    .waitForSelector(detect, { timeout })
    .then(() => 'form' as const)
    .catch(() => 'none' as const)
  const first = await Promise.race([
    reachedCallback.then(() => 'callback' as const),
    form,
    navigation.then(() => 'loaded' as const),
  ])
  let loginShown = false
  if (first === 'loaded' && !arrived() && (await page.locator(detect).count()) === 0)
    await followSelfSubmitting(page, reachedCallback, timeout, refresh)
  if (first !== 'callback' && !arrived()) {
    const hasForm = first === 'form' || (await page.locator(detect).count()) > 0
    if (hasForm) {
      loginShown = true
      await options.onLoginPage?.(page)
      if (options.cancel) {
        await page
          .locator(target.login?.cancel ?? DEFAULT_CANCEL)
          .first()
          .click({ timeout })
      } else if (options.user) {
        // the navigation the sign-in starts: listened for before the click, since a redirect
        // chain through the IdP (303 to a resume URL, then to the client) may take a while
        const navigated = page
          .waitForEvent('framenavigated', {
            predicate: (frame) => frame === page.mainFrame(),
            timeout,
          })
          .catch(() => undefined)
        await submitLogin(page, options.user, target.login, options.onLoginStep)
        countSignIn(context)
        await Promise.race([reachedCallback, navigated])
      } else {
        return { callback: seen.callback, page, loginShown, loginPostStatus }
      }
      await Promise.race([
        reachedCallback,
        page.waitForLoadState('load', { timeout }).catch(() => undefined),
      ])
      if (!arrived()) await followSelfSubmitting(page, reachedCallback, timeout, refresh)
    }
  }
  return { callback: seen.callback, page, loginShown, loginPostStatus }
}

/**
 * A page that moves on by itself (a form that submits itself, a script or meta redirect) is a
 * redirect to a browser: while the page navigates again within 1.5 s of loading, wait for it,
 * up to five hops, or until the browser reaches a client URI. A page that has no means to move
 * (no script, meta refresh, Refresh header, inline event handler or frame: the plain error and
 * confirmation pages) is where the flow stopped, and is not waited on.
 */
async function followSelfSubmitting(
  page: Page,
  reachedCallback: Promise<string>,
  timeout: number,
  refresh: { readonly header: boolean },
): Promise<void> {
  for (let hop = 0; hop < 5; hop++) {
    if (!refresh.header && !(await mayMoveByItself(page))) return
    const moved = await Promise.race([
      reachedCallback.then(() => 'arrived' as const),
      page
        .waitForEvent('framenavigated', {
          predicate: (frame) => frame === page.mainFrame(),
          timeout: 1500,
        })
        .then(() => 'moved' as const)
        .catch(() => 'still' as const),
    ])
    if (moved !== 'moved') return
    await Promise.race([
      reachedCallback,
      page.waitForLoadState('load', { timeout }).catch(() => undefined),
    ])
  }
}

/**
 * Whether the page in the browser holds anything that can navigate it without the user: a
 * script, a meta refresh, an inline event handler, or a frame (whose content may move the top
 * page). A page being replaced while it is read counts as moving.
 */
export async function mayMoveByItself(page: Page): Promise<boolean> {
  return page
    .evaluate(
      // no helper functions in here: the bundler would wrap them in a __name() the page lacks
      () =>
        document.querySelector(
          'script, meta[http-equiv="refresh" i], iframe, frame, object, embed',
        ) !== null ||
        Array.from(document.querySelectorAll('*')).some((el) =>
          Array.from(el.attributes).some((a) => /^on/i.test(a.name)),
        ),
    )
    .catch(() => true)
}

const DEFAULT_DETECT = 'input[type=password]'
const DEFAULT_CANCEL = 'button[value=cancel], button:has-text("Cancel"), a:has-text("Cancel")'

/** The selector whose presence means the browser is on the login page. */
export function loginDetector(login: LoginConfig | undefined): string {
  return login?.detect ?? DEFAULT_DETECT
}

export type LoginStepListener = (step: string, page: Page) => Promise<void>

/** What a step does, for logs: credentials stay placeholders. */
export function describeStep(step: LoginStep): string {
  if ('goto' in step) return `goto ${step.goto}`
  if ('fill' in step) return `fill ${step.fill} with ${JSON.stringify(step.value)}`
  if ('click' in step) return `click ${step.click}`
  if ('press' in step) return `press ${step.key} in ${step.press}`
  return `wait for ${step.waitFor}`
}

/** `{username}` and `{password}` in a step's value, replaced by the user's. */
export function stepValue(value: string, user: TargetUser): string {
  return value.replace(/\{(username|password)\}/g, (_, name: 'username' | 'password') => user[name])
}

/**
 * Signs `user` in on the login page: the configured steps, or the usual form. A step that
 * fails throws with the step's description, so a report says which one broke.
 */
export async function submitLogin(
  page: Page,
  user: TargetUser,
  login: LoginConfig | undefined,
  onStep?: LoginStepListener,
): Promise<void> {
  if (!login?.steps) {
    await fillLogin(page, user)
    await onStep?.('fill the usual username/password form and submit it', page)
    return
  }
  const timeout = login.stepTimeoutMs ?? 15_000
  for (const [index, step] of login.steps.entries()) {
    const what = `step ${index + 1}: ${describeStep(step)}`
    try {
      if ('goto' in step) await page.goto(new URL(step.goto, page.url()).toString(), { timeout })
      else if ('fill' in step)
        await page.locator(step.fill).first().fill(stepValue(step.value, user), { timeout })
      else if ('click' in step) await page.locator(step.click).first().click({ timeout })
      else if ('press' in step) await page.locator(step.press).first().press(step.key, { timeout })
      else await page.locator(step.waitFor).first().waitFor({ timeout })
    } catch (err) {
      throw new Error(`login ${what} failed: ${(err as Error).message.split('\n')[0] ?? ''}`)
    }
    await onStep?.(what, page)
  }
}

/** The usual login form's controls: user name, password and submit (not its cancel button). */
const LOGIN_CONTROLS = [
  'input[autocomplete=username], input[name=username], input[type=email], input[name=login]',
  'input[type=password]',
  'button[type=submit]:not([value=cancel]), input[type=submit]',
] as const

/** The default login steps: the usual username/password form. */
export async function fillLogin(page: Page, user: TargetUser): Promise<void> {
  const [username, password, submit] = LOGIN_CONTROLS
  await page.locator(username).first().fill(user.username)
  await page.locator(password).first().fill(user.password)
  await page.locator(submit).first().click()
}

/** Whether the usual login form's controls are all on the page and visible (no waiting). */
export async function loginFormVisible(page: Page): Promise<boolean> {
  for (const control of LOGIN_CONTROLS)
    if (!(await page.locator(control).first().isVisible())) return false
  return true
}
