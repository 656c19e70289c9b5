import type { BrowserContext, Page, Response as BrowserResponse } from '@playwright/test'
import { CookieJar } from 'tough-cookie'
import { appliesTo, clientOrigins, ERROR_WORDS, labelsOf, runSteps } from './browser.ts'
import type { CheckContext } from './check.ts'
import { CheckFailure, expectEqual, expectStatus, expectThat, show } from './expect.ts'
import type { HttpResponse } from './http.ts'
import { atIdp, describeOrigins, idpOrigins, originsNamed, unknownOrigin } from './idp-origins.ts'
import {
  APPROVE_LABEL,
  CANCEL_CONTROL,
  ERROR_HEADING,
  REFUSE_LABEL,
  SIGN_IN_LABEL,
} from './interaction-words.ts'
import type { TargetClient } from './target.ts'

/**
 * The IdP's own pages (login, error) and its redirects to the client, as raw responses show
 * them: the harness's "no redirect to an unverified URI" rule lives here.
 */

export const isRedirect = (res: HttpResponse): boolean => res.status >= 300 && res.status < 400

/** Every redirect and post-logout URI of the target's clients: none may be redirected to here. */
function clientUris(ctx: Pick<CheckContext, 'target'>): string[] {
  const clients = Object.values(ctx.target.clients as Record<string, TargetClient | undefined>)
  return clients.flatMap((c) =>
    c ? [c.redirectUri, c.postLogoutRedirectUri].filter((u): u is string => Boolean(u)) : [],
  )
}

/**
 * The cookies the raw client received on its way to a page (its redirects and the page itself):
 * a browser following the same redirects would hold them when it renders the page, and a
 * script-rendered page's own API calls need them (issue 29, blind round 2, fault 1).
 */
const cookieJars = new WeakMap<HttpResponse, CookieJar>()

async function keepCookies(res: HttpResponse, jar: CookieJar): Promise<void> {
  for (const line of res.headers.getSetCookie())
    await jar.setCookie(line, res.url, { ignoreError: true }).catch(() => undefined)
}

/**
 * Follows the IdP's own redirects (at most five), failing as soon as one points at a client
 * URI or leaves the IdP's origins (idp-origins.ts: the base URL's, the discovery document's
 * endpoints', the configured `idpOrigins` and those the suite's own sign-ins went through, such
 * as a login app on an origin of its own) for an origin the request named (its redirect URI)
 * or a client's: the harness's "no redirect" rule. A redirect to any other origin is not
 * judged (inconclusive, as ROBUST-03's page answers): without a sign-in of the suite's to learn
 * from (`--no-preflight`) nor `idpOrigins`, a login app of the provider's own is not known yet,
 * and RFC 6749 §4.1.2.1 forbids only the redirect to the URI the request carried.
 */
export async function followAtIdp(
  ctx: Pick<CheckContext, 'target' | 'http'>,
  first: HttpResponse,
  what: string,
): Promise<HttpResponse> {
  const origins = idpOrigins(ctx.target)
  // the origins the request named (the callers' requests are GETs: their query)
  const named = originsNamed(new URL(first.url).search)
  const clients = clientOrigins(ctx.target)
  const jar = new CookieJar()
  let res = first
  for (let hop = 0; isRedirect(res); hop++) {
    await keepCookies(res, jar)
    const raw = res.headers.get('location')
    expectThat(raw, `${what}: HTTP ${res.status} without a Location header`)
    const location = new URL(raw, res.url)
    for (const uri of clientUris(ctx)) {
      expectThat(
        !location.href.startsWith(uri),
        `${what}: redirected to the client URI ${location.href}`,
      )
    }
    if (!atIdp(origins, location) && !named.has(location.origin))
      if (!clients.includes(location.origin))
        throw new Error(
          `${what}: redirected to ${unknownOrigin(location, ctx.target.idpOrigins !== undefined)}; the IdP's origins as far as the suite knows: ${describeOrigins(origins)}`,
        )
    expectThat(
      atIdp(origins, location),
      `${what}: redirected off the IdP to ${location.href} (the IdP's origins: ${describeOrigins(origins)}; a login UI on another origin is declared with idpOrigins)`,
    )
    expectThat(hop < 5, `${what}: more than five redirects at the IdP`)
    const cookie = await jar.getCookieString(location.href)
    res = await ctx.http.request(location.href, {
      headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) },
    })
  }
  await keepCookies(res, jar)
  cookieJars.set(res, jar)
  return res
}

const SAME_SITE = { strict: 'Strict', lax: 'Lax', none: 'None' } as const

/** Puts the cookies the raw client received for `res` into a browser context. */
async function carryCookies(context: BrowserContext, res: HttpResponse): Promise<void> {
  const jar = cookieJars.get(res)
  if (!jar) return
  const { cookies } = await jar.serialize()
  const now = Date.now()
  const carried = cookies.flatMap((c) => {
    if (typeof c.key !== 'string' || typeof c.domain !== 'string' || typeof c.value !== 'string')
      return []
    const expires =
      typeof c.expires === 'string' && c.expires !== 'Infinity'
        ? Date.parse(c.expires) / 1000
        : undefined
    if (expires !== undefined && expires * 1000 < now) return []
    const sameSite =
      typeof c.sameSite === 'string'
        ? SAME_SITE[c.sameSite.toLowerCase() as keyof typeof SAME_SITE]
        : undefined
    return [
      {
        name: c.key,
        value: c.value,
        domain: c.domain,
        path: typeof c.path === 'string' ? c.path : '/',
        secure: Boolean(c.secure),
        httpOnly: Boolean(c.httpOnly),
        ...(expires !== undefined ? { expires } : {}),
        ...(sameSite ? { sameSite } : {}),
      },
    ]
  })
  if (carried.length > 0) await context.addCookies(carried)
}

/** Whether the served HTML has a password field (evidence; a script may still render one). */
export const hasPasswordField = (html: string): boolean =>
  /<input\b[^>]*\btype\s*=\s*["']?password\b/i.test(html)

/**
 * Whether the served HTML alone cannot say what the user sees: it has no password field but
 * has scripts (or frames) that may render one, or move the page. Server-rendered pages (the
 * reference server's) decide on their HTML and are never rendered: the suite stays fast.
 */
export const needsRendering = (res: HttpResponse): boolean =>
  !hasPasswordField(res.text) &&
  /^text\/html\b/i.test(res.headers.get('content-type') ?? 'text/html') &&
  /<(script|iframe|frame|object|embed)\b|<meta\b[^>]*http-equiv\s*=\s*["']?refresh/i.test(res.text)

/**
 * The configured selectors that recognise the login page on the rendered page (README, Login
 * steps and interactions): `login.detect` and the `detect` of interactions of kind `login`.
 * Empty without configuration: then a password field is the login page.
 */
export function loginSelectors(
  target: Pick<CheckContext['target'], 'login' | 'interactions'>,
): string[] {
  return [
    target.login?.detect,
    ...(target.interactions ?? []).filter((i) => i.kind === 'login').map((i) => i.detect),
  ].filter((d): d is string => Boolean(d))
}

/**
 * The configured interactions that may stand between the authorization request and the login
 * page (a language chooser, a cookie banner): every kind but the login and a logout
 * confirmation. A page they answer is never judged itself (issue 29, blind round 2, fault 3).
 */
export function beforeLoginInteractions(
  target: Pick<CheckContext['target'], 'interactions'>,
): NonNullable<CheckContext['target']['interactions']>[number][] {
  return (target.interactions ?? []).filter((i) => i.kind !== 'login' && i.kind !== 'logout')
}

/** The most configured interactions one rendering answers (a provider that keeps asking). */
const MAX_ANSWERS = 5

/** What a page showed once rendered in the browser, its scripts run. */
export interface RenderedPage {
  /** A visible password field. */
  readonly passwordField: boolean
  /** A configured login selector (loginSelectors) shows on the page. */
  readonly loginDetected: boolean
  /** Visible form fields (text inputs, text areas) a user could fill. */
  readonly inputs: number
  /** The rendered text (its start). */
  readonly text: string
  readonly title: string
  /** The visible headings' text (h1, h2, role=heading), joined. */
  readonly headings: string
  /** The visible text of alert or live regions (role=alert or status, aria-live), joined. */
  readonly alerts: string
  /** The visible controls' labels (buttons, submit and button inputs, role=button). */
  readonly controls: readonly string[]
  /** A client URI the page's scripts sent the browser to, if they did. */
  readonly toClient: string | undefined
  /** The configured interactions answered on the way, in order (their names). */
  readonly answered: readonly string[]
  /**
   * The document the browser ended at once it answered configured interactions (status,
   * headers, body as the browser received them); undefined when it answered none.
   */
  readonly document: HttpResponse | undefined
}

/** A browser's document response as the harness's HttpResponse. */
async function asHttpResponse(res: BrowserResponse): Promise<HttpResponse> {
  const headers = new Headers()
  for (const { name, value } of await res.headersArray()) headers.append(name, value)
  const text = await res.text().catch(() => '')
  return { status: res.status(), headers, text, json: undefined, url: res.url() }
}

/**
 * Renders a response as the user's browser would: the served document (status, headers and
 * body as the harness received them) at its own URL, with the cookies the harness received on
 * its way there, its scripts and subresources fetched from the IdP, until the network is quiet
 * (at most 5 s). Configured interactions before the login (beforeLoginInteractions) are
 * answered, at most MAX_ANSWERS, and the page they lead to is the one read. Navigation to a
 * client URI is caught, never sent. A page the browser cannot render leaves the raw HTML's
 * verdict (undefined).
 */
export async function renderPage(
  ctx: Pick<CheckContext, 'target' | 'newBrowserContext'>,
  res: HttpResponse,
): Promise<RenderedPage | undefined> {
  const context = await ctx.newBrowserContext()
  await carryCookies(context, res).catch(() => undefined)
  const page = await context.newPage()
  const clients = clientUris(ctx)
  let toClient: string | undefined
  const origins = [...new Set(clients.map((u) => new URL(u).origin))]
  for (const origin of origins)
    await context.route(`${origin}/**`, async (route) => {
      if (route.request().isNavigationRequest()) toClient ??= route.request().url()
      await route.fulfill({ status: 204, body: '' }).catch(() => undefined)
    })
  const headers: Record<string, string> = {}
  res.headers.forEach((value, name) => {
    if (!['content-length', 'content-encoding', 'transfer-encoding', 'set-cookie'].includes(name))
      headers[name] = value
  })
  await page.route(
    (u) => u.href === res.url,
    (route) =>
      route.fulfill({ status: res.status, headers, body: res.text }).catch(() => undefined),
    { times: 1 },
  )
  // the main frame's documents as the browser received them, the last one read
  let lastDocument: BrowserResponse | undefined
  page.on('response', (r) => {
    if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) lastDocument = r
  })
  const answered: string[] = []
  const settle = async (): Promise<void> => {
    await page.waitForLoadState('load', { timeout: 15_000 }).catch(() => undefined)
    await page.waitForLoadState('networkidle', { timeout: 5000 }).catch(() => undefined)
  }
  try {
    await page.goto(res.url, { timeout: 15_000 })
    await settle()
    const interactions = beforeLoginInteractions(ctx.target)
    // a configured step may name the primary user ({{username}}); a bare target may have none
    const user = (ctx.target.users as Partial<CheckContext['target']['users']> | undefined)?.primary
    answering: while (answered.length < MAX_ANSWERS && !toClient) {
      const status = lastDocument?.status() ?? res.status
      for (const interaction of interactions) {
        if (!appliesTo(interaction, page.url(), status)) continue
        if (interaction.detect && !(await shows(page, interaction.detect))) continue
        const navigated = page
          .waitForEvent('framenavigated', {
            predicate: (f) => f === page.mainFrame(),
            timeout: interaction.stepTimeoutMs ?? 15_000,
          })
          .catch(() => undefined)
        await runSteps(page, interaction, user)
        await navigated
        await settle()
        answered.push(interaction.name)
        continue answering
      }
      break
    }
    // Playwright's CSS locators pierce open shadow roots, as the login driver's do: a login
    // form inside a web component is the page's login form (blind round 4, S2)
    const seen = {
      passwordField: await shows(page, 'input[type=password]'),
      inputs: await page
        .locator('input:not([type=hidden]):not([type=submit]), textarea')
        .filter({ visible: true })
        .count()
        .catch(() => 0),
      ...(await page.evaluate(() => ({
        text: document.body.innerText.replace(/\s+/g, ' ').trim().slice(0, 300),
        title: document.title,
      }))),
    }
    const textsOf = (selector: string): Promise<string[]> =>
      labelsOf(page.locator(selector).filter({ visible: true }))
    const headings = (await textsOf('h1, h2, [role=heading]')).join(' ')
    const alerts = (await textsOf('[role=alert], [role=status], [aria-live]')).join(' ')
    const controls = await textsOf(
      'button, input[type=submit], input[type=button], input[type=image], [role=button]',
    )
    let loginDetected = false
    for (const selector of loginSelectors(ctx.target)) loginDetected ||= await shows(page, selector)
    const documentSeen =
      answered.length > 0 && lastDocument ? await asHttpResponse(lastDocument) : undefined
    return {
      ...seen,
      headings,
      alerts,
      controls,
      loginDetected,
      toClient,
      answered,
      document: documentSeen,
    }
  } catch (err) {
    // the page navigated away while read (to a client URI, caught above) or would not load
    if (toClient)
      return {
        passwordField: false,
        loginDetected: false,
        inputs: 0,
        text: '',
        title: '',
        headings: '',
        alerts: '',
        controls: [],
        toClient,
        answered,
        document: undefined,
      }
    // a configured interaction that could not be answered is the suite's limit: inconclusive
    if (answered.length > 0 || /step \d+: .* failed/.test((err as Error).message))
      throw new Error(
        `the suite could not answer the configured interactions before the login at ${page.url()}: ${(err as Error).message.split('\n')[0] ?? ''}`,
      )
    return undefined
  } finally {
    await page.close().catch(() => undefined)
  }
}

/** Whether a selector matches a visible element now (no waiting; a bad selector is no match). */
const shows = (page: Page, selector: string): Promise<boolean> =>
  page
    .locator(selector)
    .filter({ visible: true })
    .count()
    .then((n) => n > 0)
    .catch(() => false)

/**
 * RFC 6749 §4.1.2.1, §3.1.2.4: the error is shown to the user at the IdP, never redirected.
 * The page must be an error (4xx), not the login form, which would redirect after sign-in.
 * A page served as a success (2xx) is judged as a browser following the same redirects shows
 * it (rendered, with the cookies received on the way, configured interactions answered): it is
 * the provider's error page only when it recognisably is one (an error said, nothing to fill);
 * a page the suite cannot classify leaves the check inconclusive, never passed (issue 29,
 * blind round 2, fault 2).
 */
export async function expectErrorPage(
  ctx: Pick<CheckContext, 'target' | 'http' | 'note' | 'newBrowserContext'>,
  res: HttpResponse,
  what: string,
): Promise<HttpResponse> {
  const final = await followAtIdp(ctx, res, what)
  const accepted = `${what}: the request was accepted: the IdP answered HTTP ${res.status}${isRedirect(res) ? ` to ${res.headers.get('location') ?? ''}` : ''} and showed its login form, which would redirect after sign-in, instead of an error`
  expectThat(!hasPasswordField(final.text), accepted)
  // a page served with an error status is the provider's answer (README) and is judged on its
  // HTML alone, unless its HTML leaves it open (scripts that may render a login form or leave
  // the page); a page served as a success is always judged as the user sees it
  const detect = loginSelectors(ctx.target)
  const success = final.status < 400
  if (needsRendering(final) || success) {
    const rendered = await renderPage(ctx, final)
    if (rendered) {
      const via =
        rendered.answered.length > 0
          ? `, after answering the configured ${rendered.answered.join(', ')}`
          : ''
      expectThat(
        !rendered.toClient,
        `${what}: the page's script sent the browser to the client URI ${rendered.toClient ?? ''}${via} (RFC 6749 §4.1.2.1: an invalid redirect URI or client is never redirected to)`,
      )
      expectThat(!rendered.passwordField, `${accepted} (rendered by its scripts${via})`)
      expectThat(
        !rendered.loginDetected,
        `${accepted} (recognised by the configured login detect ${detect.join(', ')}${via})`,
      )
      const shown = rendered.document ?? final
      const saysError =
        rendered.inputs === 0 && ERROR_WORDS.test(`${rendered.title} ${rendered.text}`)
      const evidence = saysError ? undefined : errorPageEvidence(rendered)
      if (evidence)
        ctx.note(`${what}: taken for the IdP's error page (HTTP ${shown.status}): ${evidence}`)
      if (shown.status < 400 && !saysError && !evidence)
        throw new Error(
          `${what}: the IdP answered with a page (HTTP ${shown.status}${via}) that is neither its login page nor recognisably an error page ("${rendered.title}": ${rendered.text.slice(0, 160)}): the suite cannot tell whether the request was refused`,
        )
      if (rendered.answered.length > 0) return shown
    } else if (success) {
      const text = visibleText(final.text)
      const fields = /<(input\b(?![^>]*\btype\s*=\s*["']?(hidden|submit)\b)|textarea\b)/i.test(
        final.text,
      )
      if (fields || !ERROR_WORDS.test(text))
        throw new Error(
          `${what}: the IdP answered HTTP ${final.status} with a page the browser could not render and whose HTML is not recognisably an error page: the suite cannot tell whether the request was refused`,
        )
      ctx.note(`${what}: the page could not be rendered; judged on its HTML`)
    } else ctx.note(`${what}: the page could not be rendered; judged on its HTML`)
  }
  // the MUST is no redirect to the unverified URI (RFC 6749 §3.1.2.4, §4.1.2.1); no source
  // names the error page's status, so one that is not 4xx is noted
  const is4xx = final.status >= 400 && final.status < 500
  if (!is4xx) ctx.note(`${what}: the error page was served with HTTP ${final.status}, not 4xx`)
  return final
}

/**
 * Why a rendered page served as a success is the provider's error page though its text names
 * no error word (an "Sorry, we could not sign you in" page whose error is shown as its OAuth
 * code, `invalid_request`): undefined unless it has nothing to fill and no control that signs
 * in or approves (neither a login page, a passkey-first one included, with an inline error,
 * nor a consent page), and shows at least two of: an OAuth error code as text, an alert or
 * live region with text, an error-ish title or heading. RFC 6749 §4.1.2.1 asks only that the
 * AS "inform the resource owner of the error" and not redirect; it names no status, so a page
 * the user recognises as an error is one, whatever its status.
 */
export function errorPageEvidence(
  rendered: Pick<
    RenderedPage,
    | 'passwordField'
    | 'loginDetected'
    | 'inputs'
    | 'text'
    | 'title'
    | 'headings'
    | 'alerts'
    | 'controls'
  >,
): string | undefined {
  if (rendered.passwordField || rendered.loginDetected || rendered.inputs > 0) return undefined
  // a control that signs in or approves makes it a login or consent page; a way out (Cancel,
  // Back) or a link does not
  const goesOn = rendered.controls.find(
    (c) => SIGN_IN_LABEL.test(c) || (APPROVE_LABEL.test(c) && !REFUSE_LABEL.test(c)),
  )
  if (goesOn !== undefined) return undefined
  const code = SHOWN_ERROR_CODE.exec(
    `${rendered.title} ${rendered.headings} ${rendered.alerts} ${rendered.text}`,
  )?.[2]
  const heading = [rendered.title, rendered.headings].find(
    (h) => ERROR_WORDS.test(h) || ERROR_HEADING.test(h),
  )
  const signs = [
    code && `the error code ${code} shown`,
    rendered.alerts && `an alert region ("${rendered.alerts.slice(0, 80)}")`,
    heading && `the error heading "${heading.slice(0, 80)}"`,
  ].filter((s): s is string => Boolean(s))
  return signs.length >= 2 ? `${signs.join(', ')}, nothing to fill` : undefined
}

/**
 * The login page (INTERFACE.md §4.1), possibly behind same-origin redirects and configured
 * interactions before it (a language chooser): the page returned is the login page a browser
 * following the same redirects and answering those interactions shows.
 */
export async function expectLoginPage(
  ctx: Pick<CheckContext, 'target' | 'http' | 'newBrowserContext'>,
  res: HttpResponse,
  what: string,
): Promise<HttpResponse> {
  const final = await followAtIdp(ctx, res, what)
  expectThat(
    final.status < 400,
    `${what}: expected the login page, got HTTP ${final.status}: ${describePage(final)}`,
  )
  expectStatus(final, 200, `${what}: the login page`)
  expectThat(
    /^text\/html\b/i.test(final.headers.get('content-type') ?? ''),
    `${what}: the login page is not text/html (${final.headers.get('content-type') ?? 'none'})`,
  )
  if (hasPasswordField(final.text)) return final
  // no password field in the HTML: the page is judged as the user sees it, rendered, when its
  // scripts may render the form (a single-page login), when the configuration says how the
  // login page is recognised (login.detect: a user-name page before the password, a passkey
  // page), or when configured interactions may stand before it (a language chooser), which
  // are answered first. A page the browser cannot render is the harness's limit, not the IdP's
  // fault.
  const detect = loginSelectors(ctx.target)
  if (
    needsRendering(final) ||
    detect.length > 0 ||
    beforeLoginInteractions(ctx.target).length > 0
  ) {
    const rendered = await renderPage(ctx, final)
    if (!rendered)
      throw new Error(
        `${what}: the page's HTML has no password field and the browser could not render it`,
      )
    const how =
      detect.length > 0
        ? `no password field and nothing the configured login detect (${detect.join(', ')}) matches`
        : 'no password field'
    const via =
      rendered.answered.length > 0
        ? `, after answering the configured ${rendered.answered.join(', ')}`
        : ''
    expectThat(
      rendered.passwordField || rendered.loginDetected,
      `${what}: the page${via} has ${how}, neither in its HTML nor once its scripts ran ("${rendered.title}": ${rendered.text.slice(0, 160)})`,
    )
    if (rendered.document) {
      expectStatus(rendered.document, 200, `${what}: the login page${via}`)
      return rendered.document
    }
    return final
  }
  throw new CheckFailure(`${what}: the page has no password field`)
}

/** The text a reader would see in an HTML page (rough: tags, scripts and styles removed). */
export function visibleText(html: string): string {
  return html
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39|#x27|#96|nbsp);/g, (_m, e: string) => ENTITIES[e] ?? ' ')
    .replace(/\s+/g, ' ')
    .trim()
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  '#39': "'",
  '#x27': "'",
  '#96': '`',
  nbsp: ' ',
}

const describePage = (res: HttpResponse): string => {
  const location = res.headers.get('location')
  if (location) return `Location ${location}`
  const text = visibleText(res.text)
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

/**
 * The response redirects to `redirectUri` (its query kept, no fragment) and returns the URL.
 * RFC 6749 §4.1.2: parameters go in the query component of the redirect URI.
 */
export function expectRedirectTo(
  res: HttpResponse,
  redirectUri: string,
  what: string,
  options: { fragmentAllowed?: boolean } = {},
): URL {
  expectThat(
    [302, 303, 307].includes(res.status),
    `${what}: expected a redirect to ${redirectUri}, got HTTP ${res.status} (${describePage(res)})`,
  )
  const raw = res.headers.get('location') ?? ''
  const location = new URL(raw, res.url)
  const registered = new URL(redirectUri)
  // the target before the fragment: only a redirect to the client's redirect_uri is an
  // authorization response (RFC 6749 §4.1.2, §4.1.2.1). A redirect to the IdP's own page (a
  // sign-in page, whose address may carry a script page's route after '#') is the request
  // taken on to the user, i.e. accepted, and its fragment is none of the client's business
  const target = `${location.origin}${location.pathname}`
  const expected = `${registered.origin}${registered.pathname}`
  const own = URL.canParse(res.url) && location.origin === new URL(res.url).origin
  expectThat(
    target === expected,
    `${what}: redirect target: expected ${show(expected)}, got ${show(target)}${own ? " (a page of the IdP's own: the request was accepted and taken on to the user, not refused)" : ''}`,
  )
  if (!options.fragmentAllowed)
    expectThat(!raw.includes('#'), `${what}: the redirect carries a fragment: ${raw}`)
  for (const [k, v] of registered.searchParams) {
    expectThat(
      location.searchParams.getAll(k).includes(v),
      `${what}: the redirect lost the registered query parameter ${k}`,
    )
  }
  return location
}

/**
 * RFC 6749 §4.1.2.1: once client and redirect_uri are valid, an invalid request is reported by
 * redirecting to the client with `error` (one of `codes`) and the request's `state` (when
 * sent), and never with a code or a token.
 */
export function expectErrorRedirect(
  res: HttpResponse,
  redirectUri: string,
  what: string,
  codes: readonly string[],
  state: string | undefined,
  options: { fragmentAllowed?: boolean } = {},
): URLSearchParams {
  expectThat(
    [302, 303, 307].includes(res.status),
    `${what}: expected a redirect to ${redirectUri} with error=${codes.join(' or ')}, got HTTP ${res.status} (${describePage(res)})`,
  )
  const location = expectRedirectTo(res, redirectUri, what, options)
  // an error for a response_type whose default response mode is the fragment (OAuth 2.0
  // Multiple Response Type Encoding Practices §5) may come back there: read both, and make
  // sure neither carries a code or a token
  const fragment = new URLSearchParams(location.hash.slice(1))
  for (const name of ['code', 'access_token', 'id_token'])
    expectThat(!fragment.has(name), `${what}: the error redirect's fragment carries ${name}`)
  const p =
    location.searchParams.has('error') || !fragment.has('error') ? location.searchParams : fragment
  const error = p.get('error')
  expectThat(
    error !== null && codes.includes(error),
    `${what}: expected error=${codes.join(' or ')}, got ${error === null ? 'no error' : `error=${error}`} (${p.get('error_description') ?? ''})`,
  )
  for (const name of ['code', 'access_token', 'id_token'])
    expectThat(!p.has(name), `${what}: the error redirect carries ${name}`)
  if (state !== undefined) expectEqual(p.get('state'), state, `${what}: state`)
  return p
}

/** Near variants of a redirect URI that simple string comparison tells apart (RFC 9700 §4.1.3). */
export function redirectVariants(uri: string): string[] {
  const u = new URL(uri)
  const path = u.pathname
  const variants = [
    `${uri}/extra`,
    path.endsWith('/') ? uri.replace(/\/(?=$|\?)/, '') : `${u.origin}${path}/${u.search}`,
    `${u.origin}${path.toUpperCase()}${u.search}`,
    `${uri}${u.search ? '&' : '?'}foo=bar`,
    `${uri}#frag`,
    `${u.protocol === 'https:' ? 'http:' : 'https:'}//${u.host}${path}${u.search}`,
    `https://${u.hostname}.evil.example${path}`,
    `https://${u.hostname}@evil.example${path}`,
    `${u.origin}${path}/../x`,
    `${u.origin}/x/..${path}`,
    `${u.origin}/x/%2e%2e${path}`,
    `${u.origin}/x/%252e%252e${path}`,
    // an unreserved character percent-encoded: equal after RFC 3986 normalisation only
    `${u.origin}${path.replace(/[a-z]/i, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}${u.search}`,
  ]
  if (!u.port)
    variants.push(
      `${u.protocol}//${u.hostname}:${u.protocol === 'https:' ? 443 : 80}${path}${u.search}`,
    )
  return [...new Set(variants)].filter((v) => v !== uri)
}

/** RFC 6749 §4.1.2.1 and OIDC Core §3.1.2.6: the codes an authorization error may carry. */
export const AUTHORIZATION_ERRORS = [
  'invalid_request',
  'unauthorized_client',
  'access_denied',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'interaction_required',
  'login_required',
  'account_selection_required',
  'consent_required',
  'invalid_request_uri',
  'invalid_request_object',
  'request_not_supported',
  'request_uri_not_supported',
  'registration_not_supported',
]

/**
 * An OAuth error code shown as a word of its own on a page: the authorization errors, the
 * token endpoint's (RFC 6749 §5.2) and RFC 7591 §3.2.2's invalid_redirect_uri, which
 * providers (node-oidc-provider) show for a redirect URI they do not know.
 */
const SHOWN_ERROR_CODE = new RegExp(
  `(^|[^\\w])(${[
    ...AUTHORIZATION_ERRORS,
    'invalid_client',
    'invalid_grant',
    'unsupported_grant_type',
    'invalid_redirect_uri',
    'invalid_client_metadata',
  ].join('|')})(?!\\w)`,
)

/** OIDC Core §3.1.2.6: what prompt=none may answer when it would need the user. */
export const NEEDS_UI_ERRORS = [
  'login_required',
  'interaction_required',
  'consent_required',
  'account_selection_required',
]

/** Records the IdP's redirects to `redirectUri` as the browser sees them (Location, unredacted). */
export function watchRedirects(context: BrowserContext, redirectUri: string): string[] {
  const seen: string[] = []
  const base = redirectUri.split(/[?#]/)[0] ?? redirectUri
  context.on('response', (res) => {
    const location = res.headers().location
    if (res.status() >= 300 && res.status() < 400 && location?.startsWith(base)) seen.push(location)
  })
  return seen
}

/** The login page's cancel control (INTERFACE.md §4.1: the user may decline), built in. */
export const CANCEL = CANCEL_CONTROL

/**
 * Turns the browser's next navigation to `url` into a form POST of `params` (the POST form of
 * the authorization request, OIDC Core §3.1.2.1); the function returned tells whether it was sent.
 */
export async function postOnNavigation(
  context: BrowserContext,
  url: string,
  params: Record<string, string>,
): Promise<() => boolean> {
  let posted = false
  await context.route(
    url,
    async (route) => {
      posted = true
      await route.continue({
        method: 'POST',
        postData: new URLSearchParams(params).toString(),
        headers: {
          ...route.request().headers(),
          'content-type': 'application/x-www-form-urlencoded',
        },
      })
    },
    { times: 1 },
  )
  return () => posted
}
