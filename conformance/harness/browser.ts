import { createHash, type X509Certificate } from 'node:crypto'
import { existsSync } from 'node:fs'
import { connect, rootCertificates } from 'node:tls'
import {
  chromium,
  type Browser,
  type BrowserContext,
  type Frame,
  type FrameLocator,
  type Locator,
  type Page,
  type Request,
} from '@playwright/test'
import type { Http } from './http.ts'
import {
  APPROVE_LABEL,
  CANCEL_CONTROL,
  CONSENT_WORDS,
  DENY_LABEL,
  LOGOUT_LABEL,
  REFUSE_LABEL,
} from './interaction-words.ts'
import { countSignIn } from './session.ts'
import { recordRound, scaleIn } from './pace.ts'
import { isThrottle, throttleOf } from './throttle.ts'
import { idpOrigins, originOf } from './idp-origins.ts'
import { redactHeaders, redactUrl, rememberIssuedUrl } from './redact.ts'
import type {
  InteractionConfig,
  InteractionStep,
  LoginConfig,
  Target,
  TargetClient,
  TargetUser,
} from './target.ts'

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

/** Where a browser flow that did not reach a client URI stopped, and why. */
export interface BrowserStop {
  /**
   * `error-page`: a page of the provider the driver recognises as an error (an HTTP error
   * status, or an error said in its rendered text): the provider's verdict.
   * `unrecognised`: a page no interaction recognises and that does not move by itself.
   * `elsewhere`: the browser could not load where the provider sent it (a host that does not
   * resolve, a connection reset): the provider's doing.
   * `login-again`: the login page came back after the sign-in was submitted, and stayed: the
   * page settled (no request in flight or sent, its address and text unchanged, for QUIET_MS)
   * still showing it at the same address.
   * `unsettled`: after the sign-in, a login form was still shown when the watch ended, but the
   * page had not settled (a script page between routes, still fetching or re-rendering): whether
   * it is the login page again could not be told.
   * `loop`: the same interaction came back at the same address three times.
   * `limit`: the step or time bound ran out.
   * `unsettled`, `loop`, `limit` and `unrecognised` are the suite's own limits: inconclusive.
   */
  readonly kind:
    'error-page' | 'elsewhere' | 'unrecognised' | 'login-again' | 'unsettled' | 'loop' | 'limit'
  /** The page's title (or its first heading), as the user sees it. */
  readonly title: string
  /** The page's address, its query and fragment left out (they hold one-time values). */
  readonly url: string
  /**
   * The page's full address, query included, its secrets redacted (redact.ts redactUrl): the
   * address the browser was on, for messages (a redirect that added `?ui_locales=en`).
   */
  readonly address?: string | undefined
  /** The HTTP status of the page's document, when the browser saw it. */
  readonly status: number | undefined
  /** The start of the page's rendered text. */
  readonly text: string
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
  /**
   * The browser's own credential request: the first POST the page sent once the sign-in was
   * submitted, a form post (`form`) or a script's `fetch`/XHR call (`script`), with the status
   * of its answer (a redirect's own status, not where it led).
   */
  readonly loginRequest?:
    | {
        readonly via: 'form' | 'script'
        readonly url: string
        readonly status: number | undefined
        /** The answer's Retry-After header, when it had one. */
        readonly retryAfter?: string | undefined
      }
    | undefined
  /**
   * The sign-in was throttled (its credential request, or the page it led to, answered 429, or
   * 503 with Retry-After) and the flow did not get past it, waiting and retrying once when the
   * check's time allowed (`timeLeftMs`): `message` says so, for an inconclusive verdict.
   */
  readonly throttled?:
    | {
        /** The throttle's status, when this flow met it (not when it only waited for it). */
        readonly status?: number | undefined
        readonly retryAfter?: string | undefined
        readonly message: string
      }
    | undefined
  /**
   * The waits for the IdP's sign-in throttle on the way (before signing in, or after a sign-in
   * that met it), each said as for a note: the check's time they took.
   */
  readonly throttleWaits?: readonly string[] | undefined
  /** What the driver answered on the way, in order ("consent (built-in) at /consent"). */
  readonly interactions?: readonly string[] | undefined
  /**
   * The origins of the main frame's navigations (redirect hops included), in the order first
   * seen, the clients' origins left out: where the IdP sent the browser on its way (a login app
   * on an origin of its own; idp-origins.ts learns them once the flow ends with a code).
   */
  readonly origins?: readonly string[] | undefined
  /**
   * Why the flow stopped at the IdP, when it did without being asked to (a flow asked to stop
   * at the login page, or to cancel there, has none).
   */
  readonly stopped?: BrowserStop | undefined
  /** For a flow asked to cancel: where it cancelled (the page and the control's label). */
  readonly cancelledAt?: string | undefined
}

export interface BrowserFlowOptions {
  /** Sign in with this user when a login form appears; omit to stop at the form. */
  readonly user?: TargetUser | undefined
  /**
   * Cancel at the first page of the flow that offers it: the login page's cancel control
   * (`login.cancel`, else a built-in one) instead of signing in, else a deny control of a page
   * after the login (a consent page's "Cancel"), signing in with `user` first. Nothing is
   * approved on the way (configured interactions are answered) and nothing after the cancel.
   */
  readonly cancel?: boolean
  /** Called with the login page before it is filled (evidence). */
  readonly onLoginPage?: (page: Page) => Promise<void>
  /** Called after each login step with what it did (the dry run's log and screenshots). */
  readonly onLoginStep?: LoginStepListener
  /**
   * Called with every page the driver meets (what it recognised it as, before answering) and
   * after each answer: the dry run's log and screenshots.
   */
  readonly onPage?: (event: string, page: Page, kind: 'login' | 'answer') => Promise<void>
  readonly timeoutMs?: number
  /**
   * How long signing in may take once the login page is submitted: the submit's own wait for
   * the navigation it starts, and the wait for the next page or the credential request's
   * answer (a loaded provider's password hash). A check gives what is left of its time; by
   * default Playwright's 30 s for the submit and `timeoutMs` for the next page.
   */
  readonly signInTimeoutMs?: number
  /**
   * What is left of the check's time. Given, a sign-in waits out the run's sign-in throttle
   * (throttle.ts) before it submits, and a sign-in that meets a throttle (429, or 503 with
   * Retry-After) waits and retries once, each only as far as this time allows; without it the
   * flow never waits, and a throttled sign-in ends the flow (`throttled`).
   */
  readonly timeLeftMs?: () => number
}

/** Origins of every client URI of the target: navigation there is intercepted, never sent. */
export function clientOrigins(target: Pick<Target, 'clients'>): string[] {
  const clients = Object.values(target.clients as Record<string, TargetClient | undefined>)
  const uris = clients.flatMap((c) => (c ? [c.redirectUri, c.postLogoutRedirectUri] : []))
  return [...new Set(uris.filter((u): u is string => Boolean(u)).map((u) => new URL(u).origin))]
}

/** The user each browser context holds an IdP session of (signed in there, or given one). */
const sessionUsers = new WeakMap<BrowserContext, TargetUser>()

/**
 * Records that `context` holds `user`'s IdP session: a later flow there that signs nobody in
 * (`user` omitted: stop at the login form) still answers an account chooser with that user, as
 * the person at that browser would.
 */
export function rememberSessionUser(context: BrowserContext, user: TargetUser): void {
  sessionUsers.set(context, user)
}

/** The most pages one flow answers before it gives up (a provider that keeps asking). */
const MAX_INTERACTIONS = 12

/**
 * Opens `url` in `context` and follows it to a client URI, answering the provider's pages on
 * the way: the login page (signed in at, or stopped at or cancelled as asked), configured
 * interactions, and the common pages recognised on the rendered page (a consent page's approve
 * button, a one-button "continue" interstitial, an account chooser naming the user). Bounded
 * by MAX_INTERACTIONS answers and by `timeoutMs` per wait. The redirect to the client is
 * caught at the DevTools level (Fetch.requestPaused), because Playwright's route() does not see
 * redirect hops, and is answered locally so nothing leaves the machine.
 */
export async function browse(
  context: BrowserContext,
  target: Pick<Target, 'clients' | 'login' | 'interactions'> &
    Partial<Pick<Target, 'baseUrl' | 'idpOrigins' | 'endpoints'>>,
  url: string,
  http: Http,
  options: BrowserFlowOptions = {},
): Promise<BrowserOutcome> {
  const timeout = options.timeoutMs ?? 15_000
  // whom an account chooser is answered for: the user signing in, else the context's session's
  const account = (): TargetUser | undefined => options.user ?? sessionUsers.get(context)
  // the round's duration, when it reaches the client, is the run's measure of its speed (pace.ts)
  const begun = performance.now()
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
  // the main frame's latest document: its status, and whether it came with a Refresh header
  const doc = {
    refresh: false,
    status: undefined as number | undefined,
    retryAfter: undefined as string | undefined,
  }
  page.on('response', (res) => {
    const req = res.request()
    if (!req.isNavigationRequest()) return
    if (req.frame() === page.mainFrame()) {
      doc.refresh = 'refresh' in res.headers()
      doc.status = res.status()
      doc.retryAfter = res.headers()['retry-after']
    }
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
  const callbackReached = reachedCallback.then(() => 'callback' as const)
  const traffic = watchTraffic(page)
  // the credential request: the first POST of the page after the sign-in is submitted
  const credential: { watching: boolean; request: Request | undefined } = {
    watching: false,
    request: undefined,
  }
  page.on('request', (req) => {
    if (credential.watching && !credential.request && req.method() === 'POST')
      credential.request = req
  })
  // the main frame's navigations (each redirect hop is a request of its own)
  const clientSide = new Set(clientOrigins(target))
  const origins: string[] = []
  page.on('request', (req) => {
    if (!req.isNavigationRequest() || req.frame() !== page.mainFrame()) return
    let origin: string
    try {
      origin = new URL(req.url()).origin
    } catch {
      return
    }
    if (!clientSide.has(origin) && !origins.includes(origin)) origins.push(origin)
  })

  let loginShown = false
  let signedIn = false
  let cancelledAt: string | undefined
  const answered: string[] = []
  const counts = new Map<string, number>()
  const loginRequest = async (): Promise<BrowserOutcome['loginRequest']> => {
    const req = credential.request
    if (!req) return undefined
    let timer: NodeJS.Timeout | undefined
    const res = await Promise.race([
      req.response().catch(() => null),
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 5000))),
    ]).finally(() => clearTimeout(timer))
    return {
      via: req.isNavigationRequest() ? 'form' : 'script',
      url: redactUrl(req.url()),
      status: res?.status(),
      retryAfter: res?.headers()['retry-after'],
    }
  }
  // the run's one "sign-ins throttled until T" (throttle.ts), shared by every check's contexts
  const throttle = throttleOf(context)
  /** What said "throttled" since the sign-in was submitted: its credential request, or the page. */
  const throttledBy = async (): Promise<
    { status: number; retryAfter: string | undefined; what: string } | undefined
  > => {
    if (!signedIn) return undefined
    const request = await loginRequest()
    if (request?.status !== undefined && isThrottle(request.status, request.retryAfter))
      return {
        status: request.status,
        retryAfter: request.retryAfter,
        what: `the sign-in's credential request (${request.via === 'script' ? "the page script's call" : 'the form post'} to ${request.url})`,
      }
    if (doc.status !== undefined && isThrottle(doc.status, doc.retryAfter))
      return {
        status: doc.status,
        retryAfter: doc.retryAfter,
        what: `the page after the sign-in (${redactUrl(page.url())})`,
      }
    return undefined
  }
  let throttled: BrowserOutcome['throttled']
  const throttleWaits: string[] = []
  let retried = false
  /**
   * The sign-in was throttled: the run learns until when; the flow waits that out and signs in
   * again once (true), when the check's time allows, else it ends inconclusive (false).
   */
  const retryThrottled = async (): Promise<boolean> => {
    const by = await throttledBy()
    if (!by) return false
    throttle?.note(by.status, by.retryAfter)
    const said = `${by.what} was answered HTTP ${String(by.status)}${by.retryAfter === undefined ? '' : ` (Retry-After: ${by.retryAfter})`}`
    const why = throttle?.describe() ?? 'the IdP throttled sign-ins'
    const waited =
      !retried && options.timeLeftMs && throttle
        ? await throttle.waitOut(options.timeLeftMs())
        : undefined
    if (waited === undefined) {
      throttled = {
        status: by.status,
        retryAfter: by.retryAfter,
        message: `${said}: ${why}; ${retried ? 'it was throttled again after one wait and retry' : options.timeLeftMs ? "the check's remaining time does not cover the wait" : 'this flow does not wait'}: a throttled sign-in judges nothing`,
      }
      return false
    }
    retried = true
    signedIn = false
    credential.watching = false
    credential.request = undefined
    const wait = `${said}: waited ${String(Math.round(waited / 1000))} s (${why}) and signed in again`
    answered.push(wait)
    throttleWaits.push(wait)
    return true
  }
  const outcome = async (stopped?: BrowserStop): Promise<BrowserOutcome> => {
    const request = await loginRequest()
    if (arrived()) recordRound(context, performance.now() - begun)
    if (!arrived() && !throttled) {
      const by = await throttledBy()
      if (by) {
        throttle?.note(by.status, by.retryAfter)
        throttled = {
          status: by.status,
          retryAfter: by.retryAfter,
          message: `${by.what} was answered HTTP ${String(by.status)}${by.retryAfter === undefined ? '' : ` (Retry-After: ${by.retryAfter})`}: ${throttle?.describe() ?? 'the IdP throttled sign-ins'}: a throttled sign-in judges nothing`,
        }
      }
    }
    return {
      callback: seen.callback,
      page,
      loginShown,
      // the credential form post's own answer (not a later consent or "continue" post)
      loginPostStatus: request?.via === 'form' ? request.status : undefined,
      loginRequest: request,
      interactions: answered,
      origins: [...origins],
      ...(throttled && !arrived() ? { throttled } : {}),
      ...(throttleWaits.length > 0 ? { throttleWaits } : {}),
      ...(stopped && !arrived() ? { stopped } : {}),
      ...(cancelledAt !== undefined ? { cancelledAt } : {}),
    }
  }

  await Promise.race([callbackReached, page.goto(url, { timeout }).catch(() => undefined)])
  for (let step = 0; !arrived(); step++) {
    if (step >= MAX_INTERACTIONS)
      return await outcome(await describeStop(page, 'limit', doc.status))
    const found = await recognise(page, target, account(), callbackReached, doc, timeout, {
      renderWaitMs: RENDER_WAIT_MS * scaleIn(context),
      frameOrigins: target.baseUrl
        ? idpOrigins({ ...target, baseUrl: target.baseUrl })
        : new Set<string>(),
      traffic,
      // a login form seen after the sign-in is judged only once the page settled
      afterSignIn: signedIn,
    })
    if (arrived()) break
    if (found.kind === 'moved') continue
    if (found.kind === 'unsettled')
      return await outcome(await describeStop(page, 'unsettled', doc.status))
    if (found.kind === 'none') {
      const kind = !loaded(page.url())
        ? 'elsewhere'
        : (await looksLikeError(page, doc.status))
          ? 'error-page'
          : 'unrecognised'
      // the sign-in's answer was a throttle's page: once waited out, back to the login page
      if (kind !== 'elsewhere' && (await retryThrottled())) {
        await Promise.race([callbackReached, page.goBack({ timeout }).catch(() => undefined)])
        continue
      }
      return await outcome(await describeStop(page, kind, doc.status))
    }
    // the page's full address as the user saw it (its secrets redacted); its path identifies it
    const where = redactUrl(page.url())
    const key = `${found.name}@${pathOf(page.url())}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
    if ((counts.get(key) ?? 0) >= 3)
      return await outcome(await describeStop(page, 'loop', doc.status))
    await options.onPage?.(`${found.label} at ${where}`, page, found.kind)
    // a flow asked to cancel stops at the first page after its cancel, and cancels at the
    // first page that offers it: the login page's cancel, else a page's deny control
    if (options.cancel && cancelledAt !== undefined) return await outcome()
    const cancel = options.cancel
      ? found.kind === 'login'
        ? await shownControl(
            await cancelControl(page, found.frame, target.login?.cancel ?? DEFAULT_CANCEL),
          )
        : await denyControl(page)
      : undefined
    const signingIn = found.kind === 'login' && !signedIn && !cancel && !!options.user
    const signInMs = signingIn ? options.signInTimeoutMs : undefined
    const navigated =
      signInMs !== undefined
        ? signInNavigation(page, Math.max(timeout, signInMs), timeout)
        : nextNavigation(page, timeout)
    if (found.kind === 'login') {
      if (signedIn) {
        // the login page again because the sign-in was throttled: once waited out, again here
        if (await retryThrottled()) {
          counts.delete(key)
          continue
        }
        return await outcome(await describeStop(page, 'login-again', doc.status))
      }
      loginShown = true
      await options.onLoginPage?.(page)
      if (cancel) {
        // the form's own cancel when the form is in a frame (a hosted widget), else the page's
        await cancel.click({ timeout })
        answered.push(`cancelled the login at ${where}`)
        cancelledAt = `the login page at ${where}`
      } else if (options.user) {
        // a throttle the run met before (throttle.ts) is waited out before the credentials go:
        // a sign-in sent into it is refused, and may lengthen it
        if (throttle && options.timeLeftMs && throttle.remainingMs() > 0) {
          const waited = await throttle.waitOut(options.timeLeftMs())
          if (waited === undefined) {
            throttled = {
              message: `${throttle.describe()}; the check's remaining time does not cover the wait, so it did not sign in: a throttled sign-in judges nothing`,
            }
            return await outcome()
          }
          const wait = `waited ${String(Math.round(waited / 1000))} s for the run's sign-in throttle (${throttle.describe(Date.now() - waited)}) before signing in at ${where}`
          answered.push(wait)
          throttleWaits.push(wait)
        }
        credential.watching = true
        // the submit's wait for its navigation (the sign-in's answer) gets the sign-in's time
        if (signInMs !== undefined) page.setDefaultTimeout(signInMs)
        const moved = await movedOn(
          found.interaction
            ? runSteps(page, found.interaction, options.user, options.onLoginStep)
            : found.frame && !target.login?.steps
              ? fillLogin(found.frame, options.user).then(() =>
                  options.onLoginStep?.(
                    `fill the usual username/password form in the frame at ${redactUrl(found.frame?.url() ?? '')} and submit it`,
                    page,
                  ),
                )
              : submitLogin(page, options.user, target.login, options.onLoginStep),
        )
        // the page moved on by itself while a step waited: signed in only if the credentials left
        if (moved) {
          answered.push(`${found.label} at ${where}: ${moved.message}`)
          if (!credential.request) continue
        }
        countSignIn(context)
        rememberSessionUser(context, options.user)
        signedIn = true
        if (moved) continue
        answered.push(`signed in at ${where}`)
      } else {
        return await outcome()
      }
    } else {
      if (cancel) {
        const label = await cancel.innerText().catch(() => '')
        await cancel.click({ timeout })
        answered.push(`cancelled at ${found.label} at ${where} ("${label}")`)
        cancelledAt = `${found.name} at ${where} ("${label}")`
        await Promise.race([callbackReached, navigated])
        continue
      }
      // a flow asked to cancel never approves anything: it answers configured interactions (a
      // push wait, a language) but no consent, and stops at a built-in answer it cannot cancel
      if (options.cancel && (!found.interaction || found.interaction.kind === 'consent'))
        return await outcome()
      if (found.interaction) {
        // a page that moved on by itself while a step waited (a push approved meanwhile) is
        // looked at again, within the flow's bounds, rather than failing the interaction
        const moved = await movedOn(runSteps(page, found.interaction, account()))
        if (moved) {
          answered.push(`${found.label} at ${where}: ${moved.message}`)
          continue
        }
      } else await found.answer()
      answered.push(`${found.label} at ${where}`)
    }
    await Promise.race([callbackReached, navigated])
    await options.onPage?.(`after ${found.label}`, page, found.kind)
  }
  return await outcome()
}

/**
 * Whether the browser shows a page it loaded over http(s): not an error page the browser made
 * up for a load that failed (a redirect to a host that does not resolve, a connection reset).
 * A page at another origin is still the deployment's (login pages often live on their own host).
 */
function loaded(url: string): boolean {
  return /^https?:/i.test(url)
}

/** The path of a URL (no query or fragment: they hold one-time values). */
const pathOf = (url: string): string => {
  try {
    const u = new URL(url)
    return `${u.origin}${u.pathname}`
  } catch {
    return url
  }
}

/** The PageMovedOn a run of steps ended with, undefined when it completed; other errors throw. */
async function movedOn(run: Promise<unknown>): Promise<PageMovedOn | undefined> {
  try {
    await run
    return undefined
  } catch (err) {
    if (err instanceof PageMovedOn) return err
    throw err
  }
}

/** The main frame's next navigation, or undefined after `timeout` (never rejects). */
function nextNavigation(page: Page, timeout: number): Promise<unknown> {
  return page
    .waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame(), timeout })
    .then(() => page.waitForLoadState('load', { timeout }))
    .catch(() => undefined)
}

/**
 * After a sign-in is submitted: the main frame's next navigation, waited for up to `signInMs`
 * (a loaded provider's password hash may take most of a minute), or `timeout` past the answer
 * to the first POST it sent (a script's sign-in that stays on its page, refused, ends there).
 * Never rejects.
 */
function signInNavigation(page: Page, signInMs: number, timeout: number): Promise<unknown> {
  return Promise.race([
    nextNavigation(page, signInMs),
    page
      .waitForResponse((res) => res.request().method() === 'POST', { timeout: signInMs })
      .then(() => nextNavigation(page, timeout))
      .catch(() => undefined),
  ])
}

/** What the page in the browser was recognised as. */
type Recognised =
  | { readonly kind: 'moved' }
  | { readonly kind: 'none' }
  /** After the sign-in: a login form still shown on a page that never settled in the watch. */
  | { readonly kind: 'unsettled' }
  | {
      readonly kind: 'login' | 'answer'
      readonly name: string
      readonly label: string
      /** The configured interaction that matched, if one did. */
      readonly interaction?: InteractionConfig | undefined
      /** The child frame the built-in login recognition found the login form in. */
      readonly frame?: Frame | undefined
      /** Answers a built-in page. */
      readonly answer: () => Promise<void>
    }

/**
 * How long a page that has scripts (or a meta refresh, a Refresh header, a frame) is watched
 * for something to answer, or for a navigation of its own, before it is called unrecognised,
 * at the nominal pace: scaled by the run's pace (pace.ts, up to MAX_SCALE times).
 */
export const RENDER_WAIT_MS = 5000

/**
 * A page watched for that long is called unrecognised sooner only once its network went idle
 * and it sent no request for this long: a page that polls (a push sign-in waiting for the
 * phone) is watched for the whole wait.
 */
const QUIET_MS = 2000

/** The requests a page has in flight, and when it last sent one (any of its frames). */
interface Traffic {
  readonly inFlight: ReadonlySet<Request>
  readonly lastSentAt: () => number
}

/** Follows `page`'s requests for its whole life (a request sent before a look counts too). */
function watchTraffic(page: Page): Traffic {
  const inFlight = new Set<Request>()
  let sentAt = performance.now()
  page.on('request', (req) => {
    sentAt = performance.now()
    inFlight.add(req)
  })
  const done = (req: Request): void => {
    inFlight.delete(req)
  }
  page.on('requestfinished', done)
  page.on('requestfailed', done)
  return { inFlight, lastSentAt: () => sentAt }
}

/**
 * Looks at the page as the user sees it: a configured interaction, the login page, or a
 * built-in one. A page that may still render or move by itself is polled until it shows
 * something known, navigates, goes quiet (network idle and two more looks) or RENDER_WAIT_MS
 * pass; a page without scripts is looked at once.
 *
 * After the sign-in (`afterSignIn`), a login form is not taken at first sight for the login page
 * again: a script page between routes still shows the old form at its new address (a hash route
 * changed to `#/choose`, its content re-rendered once a fetch answers). Such a page is watched
 * until it settles, no request in flight or sent and its address and text unchanged for
 * QUIET_MS, and is the login page again only if it then still shows the form; what it renders
 * meanwhile (an account chooser) is answered, a route change is looked at afresh, and a page
 * that never settles within the watch is `unsettled`, which judges nothing.
 */
async function recognise(
  page: Page,
  target: Pick<Target, 'login' | 'interactions'>,
  user: TargetUser | undefined,
  callbackReached: Promise<'callback'>,
  doc: { readonly refresh: boolean; readonly status: number | undefined },
  timeout: number,
  watch: {
    readonly renderWaitMs: number
    readonly frameOrigins: ReadonlySet<string>
    readonly traffic: Traffic
    readonly afterSignIn: boolean
  },
): Promise<Recognised> {
  await Promise.race([
    callbackReached,
    page.waitForLoadState('load', { timeout }).catch(() => undefined),
  ])
  const startUrl = page.url()
  const nav = { moved: false }
  const onNavigated = (frame: unknown): void => {
    if (frame === page.mainFrame()) nav.moved = true
  }
  page.on('framenavigated', onNavigated)
  const { traffic } = watch
  // when the page last sent a request, counted from this look's start at the earliest
  const begun = performance.now()
  const sentAt = (): number => Math.max(traffic.lastSentAt(), begun)
  // a login form after the sign-in waits for the page to settle; anything else is taken at once
  const settling = (found: Recognised): boolean => watch.afterSignIn && found.kind === 'login'
  // the page moved on by itself (while it was looked at, too): the page it landed on is looked
  // at afresh, never judged by what the last one showed
  const movedOn = (): boolean => nav.moved || page.url() !== startUrl
  const landed = async (): Promise<Recognised> => {
    await Promise.race([
      callbackReached,
      page.waitForLoadState('load', { timeout }).catch(() => undefined),
    ])
    return { kind: 'moved' }
  }
  try {
    const first = await lookAt(page, target, user, doc.status, watch.frameOrigins)
    if (first && !settling(first)) return first
    if (movedOn()) return await landed()
    // a page that cannot change by itself is as settled as it will be
    if (!doc.refresh && !(await mayMoveByItself(page)))
      return movedOn() ? await landed() : (first ?? { kind: 'none' })
    const idle = { reached: false, looksAfter: 0 }
    void page
      .waitForLoadState('networkidle', { timeout: watch.renderWaitMs })
      .then(() => (idle.reached = true))
      .catch(() => (idle.reached = true))
    // what the page showed, and since when: its text (a re-render changes it)
    const shown = { text: await pageText(page), since: performance.now() }
    let last = first
    const deadline = performance.now() + watch.renderWaitMs
    while (performance.now() < deadline) {
      const waited = await Promise.race([
        callbackReached,
        new Promise<'tick'>((resolve) => setTimeout(() => resolve('tick'), 200)),
      ])
      if (waited === 'callback') return { kind: 'moved' }
      if (movedOn()) return await landed()
      const found = await lookAt(page, target, user, doc.status, watch.frameOrigins)
      if (found && !settling(found)) return found
      const text = await pageText(page)
      if (text !== shown.text) {
        shown.text = text
        shown.since = performance.now()
      }
      last = found
      const now = performance.now()
      const quiet = traffic.inFlight.size === 0 && now - sentAt() >= QUIET_MS
      // the login form again, on a page settled at the address the look began at
      if (found && quiet && now - shown.since >= QUIET_MS) return found
      if (!found && idle.reached && ++idle.looksAfter >= 3 && now - sentAt() >= QUIET_MS) break
    }
    if (movedOn()) return await landed()
    return last ? { kind: 'unsettled' } : { kind: 'none' }
  } finally {
    page.off('framenavigated', onNavigated)
  }
}

/** The page's visible text now ('' when it cannot be read: a page between documents). */
async function pageText(page: Page): Promise<string> {
  return page.evaluate(() => document.body.innerText).catch(() => '')
}

/** One look at the page: what it is, or undefined when nothing is recognised (yet). */
async function lookAt(
  page: Page,
  target: Pick<Target, 'login' | 'interactions'>,
  user: TargetUser | undefined,
  status: number | undefined,
  frameOrigins: ReadonlySet<string>,
): Promise<Recognised | undefined> {
  const url = page.url()
  for (const interaction of target.interactions ?? []) {
    if (!appliesTo(interaction, url, status)) continue
    if (interaction.detect && !(await visible(page, stepSelector(interaction.detect, user))))
      continue
    const kind = interaction.kind === 'login' ? 'login' : 'answer'
    return {
      kind,
      name: interaction.name,
      label: `${interaction.name} (configured)`,
      interaction,
      answer: () => Promise.resolve(),
    }
  }
  if (await visible(page, loginDetector(target.login)))
    return { kind: 'login', name: 'login', label: 'login', answer: () => Promise.resolve() }
  // a login form in a frame of the page's own origin or of the IdP's (a hosted login widget)
  const frame = await loginFrame(page, loginDetector(target.login), frameOrigins)
  if (frame) {
    return {
      kind: 'login',
      name: 'login',
      label: 'login (in a frame)',
      frame,
      answer: () => Promise.resolve(),
    }
  }
  const scan = await scanButtons(page)
  if (scan?.approve !== undefined) {
    const index = scan.approve
    return {
      kind: 'answer',
      name: scan.consent ? 'consent' : 'continue',
      label: `${scan.consent ? 'consent' : 'continue'} (built-in: "${scan.approveText}")`,
      answer: () => page.locator(BUTTONS).nth(index).click(),
    }
  }
  // no approve control: maybe an account chooser
  const account = user ? await accountControl(page, user) : undefined
  if (account) {
    return {
      kind: 'answer',
      name: 'account',
      label: `account chooser (built-in: "${account.text}")`,
      answer: () => account.control.click(),
    }
  }
  // the login page whose password field is there but hidden (an injected hint's markup covers
  // the form, a field shown on focus): still the login page, which nothing else is
  if (
    (await page
      .locator(loginDetector(target.login))
      .count()
      .catch(() => 0)) > 0
  )
    return { kind: 'login', name: 'login', label: 'login', answer: () => Promise.resolve() }
  return undefined
}

/**
 * Whether a configured interaction may answer the page at `url`, whose document came with HTTP
 * `status`, before its `detect` is looked for. A page served with an error status (4xx, 5xx) is
 * the provider's answer (README, Login steps and interactions), so an interaction recognised by
 * its `url` alone never applies to it: a provider often serves its error page at the address of
 * the page the interaction answers (a refused logout at the logout confirmation's URL). One with
 * a `detect` applies wherever its selector shows, whatever the status.
 */
export function appliesTo(
  interaction: Pick<InteractionConfig, 'url' | 'detect'>,
  url: string,
  status: number | undefined,
): boolean {
  if (interaction.url && !new RegExp(interaction.url).test(url)) return false
  return interaction.detect !== undefined || status === undefined || status < 400
}

/**
 * The nearest frame, shown on the page, at the page's own origin or one of `origins` (the
 * IdP's), where `selector` is visible now (no waiting): any descendant of the page (a hosted
 * widget framed inside a frame), looked at from the least nested, each shown only when its
 * `<iframe>` element and every enclosing frame's are visible. A frame of another origin (an
 * advertisement, a third party's widget) is never looked into: credentials are typed only into
 * the IdP's own pages.
 */
export async function loginFrame(
  page: Page,
  selector: string,
  origins: ReadonlySet<string>,
): Promise<Frame | undefined> {
  const own = originOf(page.url())
  const depth = (frame: Frame): number => {
    let n = 0
    for (let at = frame.parentFrame(); at; at = at.parentFrame()) n++
    return n
  }
  const candidates = page
    .frames()
    .filter((frame) => {
      if (frame === page.mainFrame()) return false
      const origin = originOf(frame.url())
      return origin !== undefined && (origin === own || origins.has(origin))
    })
    .map((frame) => ({ frame, depth: depth(frame) }))
    // a stable sort: frames of one depth stay in the page's order
    .sort((a, b) => a.depth - b.depth)
  for (const { frame } of candidates) {
    if (!(await frameShown(page, frame))) continue
    if (await visible(frame, selector)) return frame
  }
  return undefined
}

/** Whether a frame's `<iframe>` element and those of all the frames around it are visible. */
async function frameShown(page: Page, frame: Frame): Promise<boolean> {
  for (let at: Frame | null = frame; at && at !== page.mainFrame(); at = at.parentFrame()) {
    const element = await at.frameElement().catch(() => undefined)
    const shown = (await element?.isVisible().catch(() => false)) ?? false
    await element?.dispose().catch(() => undefined)
    if (!shown) return false
  }
  return true
}

/**
 * Where the login page's usual form is: the page when `login`'s detector shows on it, else the
 * frame `loginFrame` finds it in (as the browser sign-in recognises it), else the page.
 */
export async function loginScope(
  page: Page,
  login: LoginConfig | undefined,
  origins: ReadonlySet<string>,
): Promise<Page | Frame> {
  const detector = loginDetector(login)
  if (await visible(page, detector)) return page
  return (await loginFrame(page, detector, origins)) ?? page
}

/**
 * The login page's cancel control (`selector`): in the frame that holds the login form when it
 * shows there (a hosted widget's own cancel), else on the page, as a user sees it.
 */
export async function cancelControl(
  page: Page,
  frame: Frame | undefined,
  selector: string,
): Promise<Locator> {
  if (frame && (await visible(frame, selector))) return frame.locator(selector).first()
  return page.locator(selector).first()
}

/** The locator when it shows now (no waiting), else undefined. */
async function shownControl(control: Locator): Promise<Locator | undefined> {
  return (await control.isVisible().catch(() => false)) ? control : undefined
}

/**
 * What each element `elements` matches reads as to a user: an input's value, else its rendered
 * text, else its aria-label, whitespace collapsed. Empty when the page went away meanwhile.
 */
export function labelsOf(elements: Locator): Promise<string[]> {
  return elements
    .evaluateAll((els) =>
      els.map((el) =>
        (
          (el instanceof HTMLInputElement ? el.value : (el as HTMLElement).innerText) ||
          el.getAttribute('aria-label') ||
          ''
        )
          .replace(/\s+/g, ' ')
          .trim(),
      ),
    )
    .catch(() => [] as string[])
}

/**
 * A control on the page by which the user refuses the request (DENY_LABEL: a consent page's
 * "Cancel", "Deny", "Don't allow"): a button, a submit or button input, an ARIA button or a
 * link, shown now; never a sign-out control.
 */
export async function denyControl(page: Page): Promise<Locator | undefined> {
  const controls = page.locator(`${BUTTONS}, a[href]`).filter({ visible: true })
  const labels = await labelsOf(controls)
  const index = labels.findIndex((l) => DENY_LABEL.test(l) && !LOGOUT_LABEL.test(l))
  return index >= 0 ? controls.nth(index) : undefined
}

/** Whether a selector matches a visible element now (no waiting; a bad selector is no match). */
async function visible(page: Page | Frame, selector: string): Promise<boolean> {
  return page
    .locator(selector)
    .filter({ visible: true })
    .count()
    .then((n) => n > 0)
    .catch(() => false)
}

/** The controls a built-in answer may press. */
const BUTTONS = 'button, input[type=submit], input[type=button], [role=button]'
/**
 * Roles a chooser's account control has, whose accessible name Playwright computes from the
 * control's content or its aria-label: a <button>, an <a href>, a `role=button` card, a list
 * box option, a menu item, a radio. A control of another shape (an <a> without href, an
 * <li tabindex=0>, a <div> with a click listener) is found by its visible text instead.
 */
const ACCOUNT_ROLES = ['button', 'link', 'option', 'menuitem', 'menuitemradio', 'radio'] as const

/**
 * Words of a control that removes, forgets or disowns an account rather than choosing it
 * ("Remove alice", "Not alice@example.com?").
 */
const FORGET_LABEL = /\b(remove|forget|delete|not|sign ?out|log ?out)\b/i

/**
 * How long, at the nominal pace, a look reads a control it counted a moment before: a read
 * never waits for a control to (re)appear. Without its own bound a read waits the page's
 * default timeout, which a sign-in sets to the check's remaining time: a page that named the
 * user (a push page: "we sent a notification to alice@…") and moved on by itself between the
 * count and the read held the flow on the page it moved to until the check timed out (blind
 * round 6c, run 4). A read that runs out is no match.
 */
const READ_MS = 1000

/**
 * The control of an account chooser that picks `user`, as a user finds it on the rendered page:
 * the first visible control whose accessible name or text holds one of the names the user is
 * shown by (the user name, and the configured `email` and `name`) as a whole word, never a
 * control that refuses, switches or forgets ("Use another account", "Remove alice"). A chooser
 * that does not name the user gives undefined: the suite never picks an account it was not told.
 */
export async function accountControl(
  page: Page,
  user: TargetUser,
): Promise<{ control: Locator; text: string } | undefined> {
  const names = [user.username, user.email, user.name].filter((n): n is string => Boolean(n))
  if (names.length === 0) return undefined
  const escaped = names.map((n) => n.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  // a whole name: not part of a longer one (alice@example.com in malice@example.com)
  const naming = new RegExp(`(?<![\\w.@+-])(${escaped.join('|')})(?![\\w@+-]|\\.\\w)`, 'i')
  // the control's words besides the names (a name may hold "no" or "back")
  const besides = (text: string): string => text.replace(new RegExp(naming.source, 'gi'), ' ')
  const refuses = (text: string): boolean =>
    REFUSE_LABEL.test(besides(text)) || LOGOUT_LABEL.test(text) || FORGET_LABEL.test(besides(text))
  const timeout = Math.round(READ_MS * scaleIn(page.context()))
  // undefined when the control is gone (the page moved on): never taken unread
  const textOf = async (control: Locator): Promise<string | undefined> =>
    (
      await control
        .evaluate(
          (el) =>
            [el.getAttribute('aria-label') ?? '', (el as HTMLElement).innerText || ''].join(' '),
          undefined,
          { timeout },
        )
        .catch(() => undefined)
    )
      ?.replace(/\s+/g, ' ')
      .trim()
  // no more than a handful of candidates per look: a chooser lists a few accounts
  const LOOK = 8
  for (const role of ACCOUNT_ROLES) {
    const found = page.getByRole(role, { name: naming }).filter({ visible: true })
    const count = Math.min(await found.count().catch(() => 0), LOOK)
    for (let i = 0; i < count; i++) {
      const control = found.nth(i)
      if (!(await control.isEnabled({ timeout }).catch(() => false))) continue
      const text = await textOf(control)
      if (text !== undefined && !refuses(text)) return { control, text }
    }
  }
  // a card of another shape: the element that shows the name, or the nearest one around it a
  // user can click (a link without href, a focusable item, a click handler's pointer cursor)
  const shown = page.getByText(naming).filter({ visible: true })
  const count = Math.min(await shown.count().catch(() => 0), LOOK)
  for (let i = 0; i < count; i++) {
    const text = await shown
      .nth(i)
      .evaluate(
        (el) => {
          // no helper functions in here: the bundler would wrap them in a __name() the page lacks
          for (let at: Element | null = el; at && at !== document.body; at = at.parentElement) {
            if (at.tagName === 'FORM') return undefined
            if (
              at.tagName === 'A' ||
              at.tagName === 'BUTTON' ||
              at.tagName === 'LABEL' ||
              at.hasAttribute('tabindex') ||
              at.hasAttribute('onclick') ||
              /^(button|link|option|menuitem|radio|listitem)$/.test(
                at.getAttribute('role') ?? '',
              ) ||
              getComputedStyle(at).cursor === 'pointer'
            )
              return [at.getAttribute('aria-label') ?? '', (at as HTMLElement).innerText || '']
                .join(' ')
                .replace(/\s+/g, ' ')
                .trim()
          }
          return undefined
        },
        undefined,
        { timeout },
      )
      .catch(() => undefined)
    // the click on the name reaches the control around it, as a user's click would
    if (text !== undefined && !refuses(text)) return { control: shown.nth(i), text }
  }
  return undefined
}

/**
 * Reads the rendered page's visible controls: the first approve-like one (never one whose label
 * also says deny, cancel or sign out).
 */
async function scanButtons(page: Page): Promise<
  | {
      approve?: number | undefined
      approveText?: string | undefined
      consent: boolean
    }
  | undefined
> {
  const found = await page
    .evaluate(
      // no helper functions in here: the bundler would wrap them in a __name() the page lacks
      ([buttons]) => ({
        buttons: Array.from(document.querySelectorAll(buttons)).map((el) => ({
          text: (el instanceof HTMLInputElement ? el.value : (el as HTMLElement).innerText || '')
            .replace(/\s+/g, ' ')
            .trim(),
          shown:
            el.getClientRects().length > 0 &&
            getComputedStyle(el).visibility !== 'hidden' &&
            !(el as HTMLButtonElement).disabled,
        })),
        text: document.body.innerText.slice(0, 4000),
      }),
      [BUTTONS] as const,
    )
    .catch(() => undefined)
  if (!found) return undefined
  const refuses = (text: string): boolean => REFUSE_LABEL.test(text) || LOGOUT_LABEL.test(text)
  // a page with a sign-out button is a logout confirmation: none of its buttons is pressed
  const logout = found.buttons.some((b) => b.shown && LOGOUT_LABEL.test(b.text))
  const approve = logout
    ? -1
    : found.buttons.findIndex((b) => b.shown && APPROVE_LABEL.test(b.text) && !refuses(b.text))
  const refusal = found.buttons.some((b) => b.shown && refuses(b.text))
  return {
    ...(approve >= 0 ? { approve, approveText: found.buttons[approve]?.text } : {}),
    consent: refusal || CONSENT_WORDS.test(found.text),
  }
}

/**
 * Whether the page the flow stopped at is the provider's error page, as a user sees it: an
 * HTTP error status for its document, or an error said in its rendered text with no form to
 * fill (an "invalid request" page, an "unknown client" page).
 */
export async function looksLikeError(page: Page, status: number | undefined): Promise<boolean> {
  if (status !== undefined && status >= 400) return true
  const seen = await page
    .evaluate(() => ({
      text: `${document.title} ${document.body.innerText}`.slice(0, 4000),
      inputs: Array.from(document.querySelectorAll('input:not([type=hidden]), textarea')).filter(
        (el) => el.getClientRects().length > 0,
      ).length,
    }))
    .catch(() => undefined)
  if (!seen) return false
  return seen.inputs === 0 && ERROR_WORDS.test(seen.text)
}

/** Words of an error page. */
export const ERROR_WORDS =
  /\b(error|invalid|unknown client|not (?:allowed|permitted|registered|found|supported)|unauthori[sz]ed|forbidden|bad request|went wrong|failed|denied|expired|mismatch)\b/i

/** The stop, described as the user saw the page: title, address, status, text. */
async function describeStop(
  page: Page,
  kind: BrowserStop['kind'],
  status: number | undefined,
): Promise<BrowserStop> {
  const seen = await page
    .evaluate(() => ({
      title: document.title.trim() || document.querySelector('h1, h2')?.textContent.trim() || '',
      text: document.body.innerText.replace(/\s+/g, ' ').trim().slice(0, 300),
    }))
    .catch(() => ({ title: '', text: '' }))
  return {
    kind,
    title: seen.title.replace(/\s+/g, ' ').slice(0, 120) || '(untitled page)',
    url: redactUrl(pathOf(page.url())),
    address: redactUrl(page.url()),
    status,
    text: seen.text,
  }
}

/** How long an optional step's selector is waited for when the config gives no `optionalWaitMs`. */
export const OPTIONAL_WAIT_MS = 1000

/**
 * The wait for an optional step's selector: `optionalWaitMs` as the config gives it, else the
 * default scaled by the run's pace (`scale`, pace.ts), so a loaded machine or a slow page does
 * not skip a step that was about to show (blind round 5, b, FALSE 7).
 */
export function optionalWait(optionalWaitMs: number | undefined, scale: number): number {
  return optionalWaitMs ?? Math.round(OPTIONAL_WAIT_MS * scale)
}

/**
 * A step failed after the page moved on by itself since the step began (its address or its
 * document changed: a push sign-in approved while the one-time code was being typed). The
 * driver looks at the page again instead of failing the interaction.
 */
export class PageMovedOn extends Error {}

/**
 * Runs a configured interaction's steps. An optional step whose selector does not show within
 * `optionalWaitMs` (by default OPTIONAL_WAIT_MS at the run's pace) is skipped; any other step
 * that fails throws with its description (a PageMovedOn when the page moved on by itself
 * meanwhile).
 */
export async function runSteps(
  page: Page,
  interaction: Pick<InteractionConfig, 'name' | 'steps' | 'stepTimeoutMs' | 'optionalWaitMs'>,
  user: TargetUser | undefined,
  onStep?: LoginStepListener,
): Promise<void> {
  const timeout = interaction.stepTimeoutMs ?? 15_000
  for (const [index, step] of interaction.steps.entries()) {
    const what = `step ${index + 1}: ${describeStep(step)}`
    if (step.optional && !('goto' in step)) {
      const selector =
        'fill' in step
          ? step.fill
          : 'click' in step
            ? step.click
            : 'press' in step
              ? step.press
              : step.waitFor
      const shown = await scopeOf(page, step, user)
        .locator(stepSelector(selector, user))
        .first()
        .waitFor({ timeout: optionalWait(interaction.optionalWaitMs, scaleIn(page.context())) })
        .then(() => true)
        .catch(() => false)
      if (!shown) {
        await onStep?.(`${what} (optional, not shown: skipped)`, page)
        continue
      }
    }
    const began = { url: page.url(), navigated: false }
    const onNavigated = (frame: Frame): void => {
      if (frame === page.mainFrame()) began.navigated = true
    }
    page.on('framenavigated', onNavigated)
    try {
      await runStep(page, step, user, timeout)
    } catch (err) {
      const failed = `${interaction.name} ${what} failed: ${(err as Error).message.split('\n')[0] ?? ''}`
      if ('goto' in step || (!began.navigated && page.url() === began.url)) throw new Error(failed)
      throw new PageMovedOn(
        `${failed}; the page had moved on by itself to ${redactUrl(page.url())}, so it is looked at again`,
      )
    } finally {
      page.off('framenavigated', onNavigated)
    }
    await onStep?.(what, page)
  }
}

/**
 * Where a step's selector is looked for: the page, or the frame its `frame` names (one iframe's
 * selector, or those of the iframes to go through, outermost first).
 */
export function scopeOf(
  page: Page,
  step: InteractionStep,
  user: TargetUser | undefined,
): Page | FrameLocator {
  if (!('frame' in step) || !step.frame) return page
  let scope: Page | FrameLocator = page
  for (const frame of framePathOf(step.frame))
    scope = scope.locator(stepSelector(frame, user)).first().contentFrame()
  return scope
}

/** A step's `frame` as the list of iframe selectors to go through, outermost first. */
const framePathOf = (frame: string | readonly string[]): readonly string[] =>
  typeof frame === 'string' ? [frame] : frame

async function runStep(
  page: Page,
  step: InteractionStep,
  user: TargetUser | undefined,
  timeout: number,
): Promise<void> {
  const value = (v: string): string => (user ? stepValue(v, user) : v)
  const at = (selector: string) =>
    scopeOf(page, step, user).locator(stepSelector(selector, user)).first()
  if ('goto' in step) await page.goto(new URL(step.goto, page.url()).toString(), { timeout })
  else if ('fill' in step) await at(step.fill).fill(value(step.value), { timeout })
  else if ('click' in step) await at(step.click).click({ timeout })
  else if ('press' in step) await at(step.press).press(step.key, { timeout })
  else await at(step.waitFor).waitFor({ timeout })
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
const DEFAULT_CANCEL = CANCEL_CONTROL

/** The selector whose presence means the browser is on the login page. */
export function loginDetector(login: LoginConfig | undefined): string {
  return login?.detect ?? DEFAULT_DETECT
}

export type LoginStepListener = (step: string, page: Page) => Promise<void>

/** What a step does, for logs: credentials stay placeholders. */
export function describeStep(step: InteractionStep): string {
  if ('goto' in step) return `goto ${step.goto}`
  if ('frame' in step && step.frame) {
    const { frame, ...rest } = step
    return `${describeStep(rest)} in the frame ${[...framePathOf(frame)].reverse().join(' inside ')}`
  }
  if ('fill' in step) return `fill ${step.fill} with ${JSON.stringify(step.value)}`
  if ('click' in step) return `click ${step.click}`
  if ('press' in step) return `press ${step.key} in ${step.press}`
  return `wait for ${step.waitFor}`
}

/**
 * `{username}` in a selector (a step's, or an interaction's `detect`), replaced by the user's
 * name, with `\`, `'` and `"` escaped so it stays one quoted string (an account chooser names
 * the user: `div[role=button]:has-text('{username}')`). Never `{password}`: a selector is shown
 * in logs and reports, so the password is never put in one (it stays the literal text).
 */
export function stepSelector(selector: string, user: TargetUser | undefined): string {
  if (!user) return selector
  return selector.replace(/\{username\}/g, () => user.username.replace(/["'\\]/g, '\\$&'))
}

/** `{username}` and `{password}` in a step's value, replaced by the user's. */
export function stepValue(value: string, user: TargetUser): string {
  return value.replace(/\{(username|password)\}/g, (_, name: 'username' | 'password') => user[name])
}

/**
 * Signs `user` in on the login page: the configured steps, or the usual form (on the page, or in
 * `scope`, the frame `loginScope` found it in). A step that fails throws with the step's
 * description, so a report says which one broke.
 */
export async function submitLogin(
  page: Page,
  user: TargetUser,
  login: LoginConfig | undefined,
  onStep?: LoginStepListener,
  scope?: Page | Frame,
): Promise<void> {
  if (!login?.steps) {
    // the usual form where it was found: the page, or the frame holding it (loginScope)
    await fillLogin(scope ?? page, user)
    await onStep?.('fill the usual username/password form and submit it', page)
    return
  }
  // the login page's steps run as an interaction's: an optional step that does not show is skipped
  await runSteps(
    page,
    {
      name: 'login',
      steps: login.steps,
      stepTimeoutMs: login.stepTimeoutMs,
      optionalWaitMs: login.optionalWaitMs,
    },
    user,
    onStep,
  )
}

/** The usual login form's controls: user name, password and submit (not its cancel button). */
const LOGIN_CONTROLS = [
  'input[autocomplete=username], input[name=username], input[type=email], input[name=login]',
  'input[type=password]',
  'button[type=submit]:not([value=cancel]), input[type=submit]',
] as const

/** The default login steps: the usual username/password form. */
export async function fillLogin(page: Page | Frame, user: TargetUser): Promise<void> {
  const [username, password, submit] = LOGIN_CONTROLS
  // a page whose user-name field has none of the usual names (a script-rendered form with a
  // plain text field): its one visible text field
  const name =
    (await page.locator(username).count()) > 0 || (await page.locator(password).count()) === 0
      ? page.locator(username).first()
      : page.locator('input[type=text]:visible, input:not([type]):visible').first()
  // a user name the page holds and will not let be changed (a read-only or disabled field with a
  // value: the "re-enter your password" page of prompt=login) is left as it is; typing into it
  // would wait for it to become editable, which it never does (issue 29, blind round 4, S5)
  if (!(await fixedValue(name))) await name.fill(user.username)
  await page.locator(password).first().fill(user.password)
  if ((await page.locator(submit).count()) > 0) {
    await page.locator(submit).first().click()
    return
  }
  // no explicit submit control (a form rendered by script, signing in with fetch): its
  // sign-in button, never a cancel one; else Enter in the password field, as a user would
  const button = page
    .locator('button:visible, [role=button]:visible, input[type=button]:visible')
    .filter({ hasText: SIGN_IN_LABEL })
    .filter({ hasNotText: REFUSE_LABEL })
    .first()
  if ((await button.count()) > 0) await button.click()
  else await page.locator(password).first().press('Enter')
}

/** Whether a field is on the page, read-only or disabled, and already holds a value (no waiting). */
async function fixedValue(field: ReturnType<Page['locator']>): Promise<boolean> {
  if ((await field.count()) === 0) return false
  return field
    .evaluate((el) => {
      const input = el as HTMLInputElement
      return (input.readOnly || input.disabled) && input.value !== ''
    })
    .catch(() => false)
}

/** Labels of a sign-in button. */
const SIGN_IN_LABEL = /\b(sign ?in|log ?in|login|continue|next|submit|enter)\b/i

/** Whether the usual login form's controls are all on the page (or frame) and visible (no waiting). */
export async function loginFormVisible(page: Page | Frame): Promise<boolean> {
  for (const control of LOGIN_CONTROLS)
    if (!(await page.locator(control).first().isVisible())) return false
  return true
}
