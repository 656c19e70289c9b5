import { createHash, type X509Certificate } from 'node:crypto'
import { existsSync } from 'node:fs'
import { connect, rootCertificates } from 'node:tls'
import { chromium, type Browser, type BrowserContext, type Page } from '@playwright/test'
import type { Http } from './http.ts'
import { redactHeaders, redactUrl } from './redact.ts'
import type { Target, TargetClient, TargetUser } from './target.ts'

/**
 * The Chromium to drive: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`, else Playwright's
 * own browser (undefined) on machines that have one.
 */
export function chromiumExecutable(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH
  return existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined
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
  target: Pick<Target, 'clients'>,
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
  page.on('response', (res) => {
    const req = res.request()
    if (!req.isNavigationRequest()) return
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
  const form = page
    .waitForSelector('input[type=password]', { timeout })
    .then(() => 'form' as const)
    .catch(() => 'none' as const)
  const first = await Promise.race([
    reachedCallback.then(() => 'callback' as const),
    form,
    navigation.then(() => 'loaded' as const),
  ])
  let loginShown = false
  if (first !== 'callback' && !arrived()) {
    const hasForm = first === 'form' || (await page.locator('input[type=password]').count()) > 0
    if (hasForm) {
      loginShown = true
      await options.onLoginPage?.(page)
      if (options.cancel) {
        await page
          .locator('button[value=cancel], button:has-text("Cancel"), a:has-text("Cancel")')
          .first()
          .click()
      } else if (options.user) {
        await fillLogin(page, options.user)
      } else {
        return { callback: seen.callback, page, loginShown, loginPostStatus }
      }
      await Promise.race([
        reachedCallback,
        page.waitForLoadState('load', { timeout }).catch(() => undefined),
      ])
      // the redirect may come a moment after the load state of an error page
      if (!arrived()) await Promise.race([reachedCallback, new Promise((r) => setTimeout(r, 300))])
    }
  }
  return { callback: seen.callback, page, loginShown, loginPostStatus }
}

/** The default login steps: the usual username/password form. */
export async function fillLogin(page: Page, user: TargetUser): Promise<void> {
  const username = page
    .locator(
      'input[autocomplete=username], input[name=username], input[type=email], input[name=login]',
    )
    .first()
  await username.fill(user.username)
  await page.locator('input[type=password]').first().fill(user.password)
  await page.locator('button[type=submit]:not([value=cancel]), input[type=submit]').first().click()
}
