import type { BrowserContext } from '@playwright/test'
import type { CheckContext } from './check.ts'
import { CheckFailure, expectEqual, expectStatus, expectThat } from './expect.ts'
import type { HttpResponse } from './http.ts'
import { CANCEL_CONTROL } from './interaction-words.ts'
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

/** A tiny cookie jar for following same-origin redirects with the raw client. */
function cookiesFrom(res: HttpResponse, jar: Map<string, string>): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const eq = pair?.indexOf('=') ?? -1
    if (pair && eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim())
  }
}

/**
 * Follows the IdP's own redirects (at most five), failing as soon as one leaves its origin or
 * points at a client URI: the harness's "no redirect" rule.
 */
export async function followAtIdp(
  ctx: Pick<CheckContext, 'target' | 'http'>,
  first: HttpResponse,
  what: string,
): Promise<HttpResponse> {
  const origin = new URL(ctx.target.baseUrl).origin
  const jar = new Map<string, string>()
  let res = first
  for (let hop = 0; isRedirect(res); hop++) {
    cookiesFrom(res, jar)
    const raw = res.headers.get('location')
    expectThat(raw, `${what}: HTTP ${res.status} without a Location header`)
    const location = new URL(raw, res.url)
    for (const uri of clientUris(ctx)) {
      expectThat(
        !location.href.startsWith(uri),
        `${what}: redirected to the client URI ${location.href}`,
      )
    }
    expectThat(location.origin === origin, `${what}: redirected off the IdP to ${location.href}`)
    expectThat(hop < 5, `${what}: more than five redirects at the IdP`)
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
    res = await ctx.http.request(location.href, {
      headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) },
    })
  }
  return res
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

/** What a page showed once rendered in the browser, its scripts run. */
export interface RenderedPage {
  /** A visible password field. */
  readonly passwordField: boolean
  /** A configured login selector (loginSelectors) shows on the page. */
  readonly loginDetected: boolean
  /** The rendered text (its start). */
  readonly text: string
  readonly title: string
  /** A client URI the page's scripts sent the browser to, if they did. */
  readonly toClient: string | undefined
}

/**
 * Renders a response as the user's browser would: the served document (status, headers and
 * body as the harness received them) at its own URL, its scripts and subresources fetched from
 * the IdP, until the network is quiet (at most 5 s). Navigation to a client URI is caught, never
 * sent. A page the browser cannot render leaves the raw HTML's verdict (undefined).
 */
export async function renderPage(
  ctx: Pick<CheckContext, 'target' | 'newBrowserContext'>,
  res: HttpResponse,
): Promise<RenderedPage | undefined> {
  const context = await ctx.newBrowserContext()
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
  try {
    await page.goto(res.url, { timeout: 15_000 })
    await page.waitForLoadState('networkidle', { timeout: 5000 }).catch(() => undefined)
    const seen = await page.evaluate(() => ({
      passwordField: Array.from(document.querySelectorAll('input[type=password]')).some(
        (el) => el.getClientRects().length > 0,
      ),
      text: document.body.innerText.replace(/\s+/g, ' ').trim().slice(0, 300),
      title: document.title,
    }))
    let loginDetected = false
    for (const selector of loginSelectors(ctx.target))
      loginDetected ||= await page
        .locator(selector)
        .filter({ visible: true })
        .count()
        .then((n) => n > 0)
        .catch(() => false)
    return { ...seen, loginDetected, toClient }
  } catch {
    // the page navigated away while read (to a client URI, caught above) or would not load
    return toClient
      ? { passwordField: false, loginDetected: false, text: '', title: '', toClient }
      : undefined
  } finally {
    await page.close().catch(() => undefined)
  }
}

/**
 * RFC 6749 §4.1.2.1, §3.1.2.4: the error is shown to the user at the IdP, never redirected.
 * The page must be an error (4xx), not the login form, which would redirect after sign-in.
 */
export async function expectErrorPage(
  ctx: Pick<CheckContext, 'target' | 'http' | 'note' | 'newBrowserContext'>,
  res: HttpResponse,
  what: string,
): Promise<HttpResponse> {
  const final = await followAtIdp(ctx, res, what)
  const accepted = `${what}: the request was accepted: the IdP answered HTTP ${res.status}${isRedirect(res) ? ` to ${res.headers.get('location') ?? ''}` : ''} and showed its login form, which would redirect after sign-in, instead of an error`
  expectThat(!hasPasswordField(final.text), accepted)
  // a page whose HTML leaves it open (scripts that may render a login form or leave the page)
  // is judged as the user sees it; so is a page served as a success when the configuration
  // says how the login page is recognised (its detect selector), which only the rendered page
  // can answer. A page served with an error status is the provider's answer (README).
  const detect = loginSelectors(ctx.target)
  if (needsRendering(final) || (detect.length > 0 && final.status < 400)) {
    const rendered = await renderPage(ctx, final)
    if (rendered) {
      expectThat(
        !rendered.toClient,
        `${what}: the page's script sent the browser to the client URI ${rendered.toClient ?? ''} (RFC 6749 §4.1.2.1: an invalid redirect URI or client is never redirected to)`,
      )
      expectThat(!rendered.passwordField, `${accepted} (rendered by its scripts)`)
      expectThat(
        !rendered.loginDetected,
        `${accepted} (recognised by the configured login detect ${detect.join(', ')})`,
      )
    } else ctx.note(`${what}: the page could not be rendered; judged on its HTML`)
  }
  // the MUST is no redirect to the unverified URI (RFC 6749 §3.1.2.4, §4.1.2.1); no source
  // names the error page's status, so one that is not 4xx is noted
  const is4xx = final.status >= 400 && final.status < 500
  if (!is4xx) ctx.note(`${what}: the error page was served with HTTP ${final.status}, not 4xx`)
  return final
}

/** The login page (INTERFACE.md §4.1), possibly behind same-origin redirects. */
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
  // scripts may render the form (a single-page login) or when the configuration says how the
  // login page is recognised (login.detect: a user-name page before the password, a passkey
  // page). A page the browser cannot render is the harness's limit, not the IdP's fault.
  const detect = loginSelectors(ctx.target)
  if (needsRendering(final) || detect.length > 0) {
    const rendered = await renderPage(ctx, final)
    if (!rendered)
      throw new Error(
        `${what}: the page's HTML has no password field and the browser could not render it`,
      )
    const how =
      detect.length > 0
        ? `no password field and nothing the configured login detect (${detect.join(', ')}) matches`
        : 'no password field'
    expectThat(
      rendered.passwordField || rendered.loginDetected,
      `${what}: the page has ${how}, neither in its HTML nor once its scripts ran ("${rendered.title}": ${rendered.text.slice(0, 160)})`,
    )
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
  if (!options.fragmentAllowed)
    expectThat(!raw.includes('#'), `${what}: the redirect carries a fragment: ${raw}`)
  const location = new URL(raw, res.url)
  const registered = new URL(redirectUri)
  expectEqual(
    `${location.origin}${location.pathname}`,
    `${registered.origin}${registered.pathname}`,
    `${what}: redirect target`,
  )
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
