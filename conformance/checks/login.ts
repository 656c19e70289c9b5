import type { BrowserContext, Page, Response } from '@playwright/test'
import { loginFormVisible, submitLogin } from '../harness/browser.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { login as catalogue } from '../catalogue/login.ts'
import { CookieJar } from 'tough-cookie'
import type { HttpResponse } from '../harness/http.ts'
import { newWindowBegan, rateWindowOf, type RateWindow } from '../harness/rate-window.ts'
import { oidc } from '../harness/oidc.ts'
import { followWithJar } from '../harness/form-sign-in.ts'
import { jarOf } from '../harness/session.ts'
import type { TargetUser } from '../harness/target.ts'
import { expectControl, expectJsonObject, expectStatus, expectThat } from '../harness/expect.ts'
import {
  authorize,
  type AuthorizeResult,
  mainClient,
  redirectUriOf,
  unknownUsername,
  validParams,
} from '../harness/flows.ts'
import { authorizeRaw } from '../harness/requests.ts'
import { expectErrorPage, expectLoginPage, visibleText } from '../harness/pages.ts'

/** The hosted login form as a browser got it: where it posts, and what it carries. */
interface LoginForm {
  /** Absolute URL the form posts to. */
  readonly action: string
  /** The hidden fields (interaction, anti-CSRF token, …). */
  readonly fields: Readonly<Record<string, string>>
  readonly usernameField: string
  readonly passwordField: string
  /** The sign-in button's own name and value, when it has them. */
  readonly submit: Readonly<Record<string, string>>
  /**
   * Cookie header for the form's action URL: the cookies the browser holds for that URL when
   * the form was shown (providers scope interaction cookies to a path such as
   * `/interaction/<uid>`, so the cookies for `/` are not the ones a browser would send).
   */
  readonly cookie: string
  /**
   * The names of the cookies set with an explicit SameSite=Lax or Strict on the way to the form
   * (the browser reports a cookie set without the attribute as Lax too, see crossSiteCookie).
   */
  readonly declaredSameSite: ReadonlySet<string>
  /** The browser the form was shown in: its cookie jar seeds the replay's redirect chain. */
  readonly context: BrowserContext
  readonly auth: AuthorizeResult
}

/** A response's Set-Cookie lines as the browser received them; none if unreadable within 5 s. */
function setCookieLines(response: Response): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    response.headerValues('set-cookie').catch(() => []),
    new Promise<string[]>((resolve) => {
      timer = setTimeout(() => resolve([]), 5000)
    }),
  ]).finally(() => clearTimeout(timer))
}

/**
 * Opens the login page in a fresh browser and reads its form and cookies, so that the raw
 * client can replay and tamper with the credential POST (no login steps beyond username and
 * password are assumed).
 */
async function captureLoginForm(ctx: CheckContext, context?: BrowserContext): Promise<LoginForm> {
  const browser = context ?? (await ctx.newBrowserContext())
  // the names of cookies set with an explicit SameSite=Lax or Strict on the way to the form:
  // the browser reports a cookie without the attribute as Lax too, but may send it cross-site
  const pending: Promise<string[]>[] = []
  const onResponse = (response: Response): void => {
    pending.push(setCookieLines(response))
  }
  browser.on('response', onResponse)
  let auth: AuthorizeResult
  try {
    auth = await authorize(ctx, { context: browser, user: null })
  } finally {
    browser.off('response', onResponse)
    await Promise.all(pending)
  }
  const declaredSameSite = new Set(
    (await Promise.all(pending))
      .flat()
      .flatMap((line) => line.split('\n'))
      .filter((line) => /;\s*samesite\s*=\s*(lax|strict)\b/i.test(line))
      .map((line) => line.split('=')[0]?.trim() ?? ''),
  )
  expectThat(auth.outcome.loginShown, 'the authorization request showed no login form')
  const form = await auth.outcome.page
    .locator('form:has(input[type=password])')
    .first()
    // no helper functions in here: the bundler would wrap them in a __name() the page lacks
    .evaluate((el) => {
      const f = el as HTMLFormElement
      const hidden = Array.from(f.querySelectorAll<HTMLInputElement>('input[type=hidden]'))
      const submit = f.querySelector<HTMLButtonElement>(
        'button[type=submit]:not([value=cancel]), input[type=submit]',
      )
      const username = f.querySelector<HTMLInputElement>(
        'input[autocomplete=username], input[name=username], input[type=email], input[name=login]',
      )
      return {
        // not f.action: a control named "action" shadows the property
        action: new URL(f.getAttribute('action') ?? '', document.baseURI).href,
        hidden: hidden.filter((i) => i.name).map((i) => [i.name, i.value] as const),
        username: username?.name ?? '',
        password: f.querySelector<HTMLInputElement>('input[type=password]')?.name ?? '',
        submit: submit?.name ? [[submit.name, submit.value] as const] : [],
      }
    })
  expectThat(form.username && form.password, 'the login form has no named username or password')
  const cookies = await browser.cookies(form.action)
  return {
    context: browser,
    action: form.action,
    fields: Object.fromEntries(form.hidden),
    usernameField: form.username,
    passwordField: form.password,
    submit: Object.fromEntries(form.submit),
    cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; '),
    declaredSameSite,
    auth,
  }
}

/**
 * The Cookie header the browser of `form` would send with a cross-site POST to `url` (RFC
 * 6265bis, the SameSite check of the cookie retrieval algorithm): its SameSite=None cookies,
 * and those set without a SameSite attribute, which a browser may enforce as
 * "Lax-allowing-unsafe" (sent on a cross-site top-level POST). Strict and declared Lax cookies
 * stay home. Empty when none would be sent.
 */
async function crossSiteCookie(form: LoginForm, url: string): Promise<string> {
  return (await form.context.cookies(url))
    .filter(
      (c) => c.sameSite === 'None' || (c.sameSite === 'Lax' && !form.declaredSameSite.has(c.name)),
    )
    .map((c) => `${c.name}=${c.value}`)
    .join('; ')
}

interface PostOptions {
  /** Hidden fields to send instead of the form's own. */
  readonly fields?: Readonly<Record<string, string>>
  /** Cookie header instead of the form's; null for none. */
  readonly cookie?: string | null
  /** Origin header instead of the IdP's own origin. */
  readonly origin?: string
  /** Where to post instead of the form's own action (another session's form). */
  readonly action?: string
}

/** Replays the credential POST of `form` with the raw client (no redirect is followed). */
function postLogin(
  ctx: CheckContext,
  form: LoginForm,
  user: TargetUser,
  options: PostOptions = {},
): Promise<HttpResponse> {
  const cookie = options.cookie === undefined ? form.cookie : options.cookie
  return ctx.http.request(options.action ?? form.action, {
    method: 'POST',
    form: {
      ...(options.fields ?? form.fields),
      ...form.submit,
      [form.usernameField]: user.username,
      [form.passwordField]: user.password,
    },
    headers: {
      accept: 'text/html',
      origin: options.origin ?? new URL(ctx.target.baseUrl).origin,
      ...(cookie ? { cookie } : {}),
    },
  })
}

const wrongPassword = (user: TargetUser): TargetUser => ({
  username: user.username,
  password: `${user.password}-wrong-${oidc.randomState().slice(0, 6)}`,
})

/**
 * Follows the IdP's redirect chain after a credential post the way a browser would: each hop
 * at the IdP gets the cookies the browser held plus those the chain set (a cookie jar, path
 * and expiry rules included), until a redirect leaves for `redirectUri` (returned) or the
 * chain stops at the IdP (undefined). Providers pass through intermediate redirects, such as
 * node-oidc-provider's `/auth/authorize/<uid>` resume, before redirecting to the client.
 */
async function followToClient(
  ctx: CheckContext,
  form: LoginForm,
  first: HttpResponse,
  redirectUri: string,
  /** Collects every response of the chain after the first (their Set-Cookie, for LOGIN-05). */
  hops: HttpResponse[] = [],
): Promise<URL | undefined> {
  const jar = (await jarOf(form.context)) ?? new CookieJar()
  const idp = new URL(ctx.target.baseUrl).origin
  const isClient = (u: URL): boolean => u.toString().startsWith(redirectUri)
  const end = await followWithJar(ctx.http, jar, first, idp, isClient, hops)
  return 'client' in end ? end.client : undefined
}

/** Every Set-Cookie of a response that sets a value (clearing ones are left out). */
const cookiesSet = (res: HttpResponse): string[] =>
  res.headers
    .getSetCookie()
    .filter((c) => !/^[^=]+=\s*(;|$)/.test(c) && !/;\s*max-age=0\b/i.test(c))

const LOGIN_01 = check(async (ctx) => {
  const client = mainClient(ctx)
  const res = await ctx.http.get('/auth/branding', { client_id: client.id })
  expectStatus(res, 200, 'GET /auth/branding')
  const branding = expectJsonObject(res, 'branding record')
  const auth = await authorize(ctx, { user: null, screenshot: true })
  expectThat(auth.outcome.loginShown, 'the authorization request showed no login page')
  const page = auth.outcome.page
  // INTERFACE.md §2.6: the page is branded from this record; DCR §2: logo and policy links
  // are shown to the user. Text and resolved URLs come from the DOM, so escaping is honoured.
  const name = String(branding.application_name)
  const text = await page.locator('body').innerText()
  // the name, the logo and each link are sub-cases: every one missing is reported
  await ctx.subcase('application name', () =>
    expectThat(text.includes(name), `the login page does not show the application name "${name}"`),
  )
  const images = await page
    .locator('img[src]')
    .evaluateAll((els) => els.map((e) => (e as HTMLImageElement).src))
  const links = await page
    .locator('a[href]')
    .evaluateAll((els) => els.map((e) => (e as HTMLAnchorElement).href))
  const same = (a: string, b: unknown) =>
    typeof b === 'string' && URL.canParse(b) && a === new URL(b).href
  await ctx.subcase('logo_url', () =>
    expectThat(
      images.some((src) => same(src, branding.logo_url)),
      `no image shows logo_url ${String(branding.logo_url)} (images: ${images.join(', ') || 'none'})`,
    ),
  )
  for (const member of ['privacy_policy_url', 'terms_of_service_url'] as const)
    await ctx.subcase(member, () =>
      expectThat(
        links.some((href) => same(href, branding[member])),
        `no link to ${member} ${String(branding[member])} (links: ${links.join(', ') || 'none'})`,
      ),
    )
})

/** RFC 9700 §4.16: what keeps a page out of other sites' frames, or why nothing does. */
function framing(res: HttpResponse): { csp: boolean; xfo: boolean } {
  // several policies are joined by commas, and each one is enforced
  const directives = (res.headers.get('content-security-policy') ?? '')
    .split(',')
    .flatMap((policy) => policy.split(';'))
    .map((d) => d.trim().split(/\s+/))
  const csp = directives.some(
    ([name, ...sources]) =>
      name?.toLowerCase() === 'frame-ancestors' &&
      sources.length > 0 &&
      !sources.some((s) => s === '*' || /^[a-z][a-z0-9+.-]*:$/i.test(s)),
  )
  const xfo = /^\s*(deny|sameorigin)\s*$/i.test(res.headers.get('x-frame-options') ?? '')
  return { csp, xfo }
}

function expectUnframeable(ctx: CheckContext, res: HttpResponse, what: string): void {
  const { csp, xfo } = framing(res)
  // RFC 9700 §4.16: the AS MUST prevent clickjacking; either header does it in current browsers
  expectThat(
    csp || xfo,
    `${what}: neither Content-Security-Policy frame-ancestors nor X-Frame-Options DENY/SAMEORIGIN (got CSP ${JSON.stringify(res.headers.get('content-security-policy'))}, X-Frame-Options ${JSON.stringify(res.headers.get('x-frame-options'))})`,
  )
  if (!csp) ctx.note(`${what}: no CSP frame-ancestors (RFC 9700 §4.16 SHOULD use CSP)`)
  if (!xfo) ctx.note(`${what}: no X-Frame-Options for older browsers`)
}

const LOGIN_02 = check(async (ctx) => {
  const params = await validParams(ctx)
  const login = await expectLoginPage(ctx, await authorizeRaw(ctx, params), 'login page')
  // each page is a sub-case: one that can be framed does not hide another
  const loginPage = 'login page (GET /auth/authorize)'
  await ctx.subcase(loginPage, () => expectUnframeable(ctx, login, loginPage))

  const form = await captureLoginForm(ctx)
  const failed = await postLogin(ctx, form, wrongPassword(ctx.target.users.primary))
  const failedPage = 'page after a failed login'
  await ctx.subcase(failedPage, () => {
    expectThat(
      failed.status < 300 || failed.status >= 400,
      `a wrong password was answered with HTTP ${failed.status}`,
    )
    expectUnframeable(ctx, failed, failedPage)
  })

  const unknown = { ...params, client_id: `unknown-${oidc.randomState().slice(0, 8)}` }
  const errorPage = 'error page (unknown client)'
  await ctx.subcase(errorPage, async () => {
    const error = await expectErrorPage(ctx, await authorizeRaw(ctx, unknown), 'error page')
    expectUnframeable(ctx, error, errorPage)
  })

  const logout = await ctx.http.request('/auth/logout', { headers: { accept: 'text/html' } })
  if (logout.status === 200 && /html/i.test(logout.headers.get('content-type') ?? ''))
    await ctx.subcase('logout page', () => expectUnframeable(ctx, logout, 'logout page'))
  else ctx.note(`GET /auth/logout answered HTTP ${logout.status}: no logout page to examine`)
  ctx.note('no consent page appears in these flows, so none was examined')
})

/** The hidden field that looks like the anti-CSRF token, if one does. */
const csrfField = (form: LoginForm): string | undefined =>
  Object.keys(form.fields).find((k) => /csrf|xsrf|authenticity|request.?token/i.test(k))

/**
 * A forged credential post is refused (REQUIREMENTS.md LOGIN-03: 4xx, no redirect to R):
 * answered 4xx, and the redirect chain, followed as a browser would, never reaches the client.
 */
async function expectRefused(
  ctx: CheckContext,
  form: LoginForm,
  res: HttpResponse,
  redirectUri: string,
  what: string,
): Promise<void> {
  const reached = await followToClient(ctx, form, res, redirectUri)
  expectThat(
    !reached,
    `${what}: the sign-in went through to the client (${reached?.origin ?? ''}${reached?.pathname ?? ''})`,
  )
  // RFC 6749 §10.12: a forged credential post is refused outright
  expectThat(
    res.status >= 400 && res.status < 500,
    `${what}: expected the post to be refused with HTTP 4xx, got ${res.status}`,
  )
}

/**
 * When a replay of the page's form did not sign in: whether the browser's own sign-in is a
 * script's fetch/XHR call rather than a form post. Then the replay was built from the wrong
 * request, and the part is inconclusive with why (an Error), never a failure of the IdP.
 */
async function notByScript(ctx: CheckContext, what: string): Promise<void> {
  const auth = await authorize(ctx, { context: await ctx.newBrowserContext() })
  const request = auth.via === 'browser' ? auth.outcome.loginRequest : undefined
  if (request?.via === 'script')
    throw new Error(
      `${what}: the login page signs in with a script's call to ${request.url} (fetch/XHR), not a form post, so a replay of its form proves nothing: the credential replay was not run`,
    )
}

/** The positive control: an untampered credential post, followed, reaches the client with a code. */
async function expectSignsIn(
  ctx: CheckContext,
  form: LoginForm,
  user: TargetUser,
  redirectUri: string,
  what: string,
): Promise<void> {
  const res = await postLogin(ctx, form, user)
  const reached = await followToClient(ctx, form, res, redirectUri)
  if (!reached) await notByScript(ctx, what)
  expectControl(
    reached,
    `${what}: the untampered credential post, replayed with the browser's cookies for ${form.action} and followed through the IdP's redirects, never reached ${redirectUri} (first answer HTTP ${res.status})`,
  )
  expectControl(reached.searchParams.get('code'), `${what}: the client was reached without a code`)
}

/** LOGIN-03's cross-site forgery, as its messages begin. */
const CROSS_SITE =
  "a cross-site post from https://evil.example of another session's form with the cookies a browser sends cross-site"

const LOGIN_03 = check(async (ctx) => {
  const user = ctx.target.users.primary
  const redirectUri = redirectUriOf(ctx, mainClient(ctx))
  // the control first: the untampered replay signs in, so the refusals below are not luck
  await expectSignsIn(ctx, await captureLoginForm(ctx), user, redirectUri, 'control')
  let one = await captureLoginForm(ctx)
  const two = await captureLoginForm(ctx)
  const token = csrfField(one)
  /**
   * One forged post, a sub-case: every defence that is missing is reported. A post that was
   * not refused may have spent the sign-in of `one`, so the next one gets a fresh form: it is
   * then refused for its own forgery, never because its sign-in was already completed.
   */
  const forged = async (what: string, post: (form: LoginForm) => Promise<HttpResponse>) => {
    const outcome = { refused: false }
    await ctx.subcase(what, async () => {
      await expectRefused(ctx, one, await post(one), redirectUri, what)
      outcome.refused = true
    })
    if (!outcome.refused) one = await captureLoginForm(ctx)
  }
  if (Object.keys(one.fields).length === 0)
    ctx.note('the form has no hidden field: the case without an anti-CSRF field was not run')
  else {
    if (!token)
      ctx.note('no hidden field is named like an anti-CSRF token: every hidden field dropped')
    await forged('credentials without the anti-CSRF field', (form) => {
      const without = Object.fromEntries(
        Object.entries(form.fields).filter(([name]) => token !== undefined && name !== token),
      )
      return postLogin(ctx, form, user, { fields: without })
    })
  }
  const otherToken = token === undefined ? undefined : two.fields[token]
  if (token && otherToken !== undefined)
    await forged("another session's anti-CSRF token", (form) =>
      postLogin(ctx, form, user, { fields: { ...form.fields, [token]: otherToken } }),
    )
  // the cross-site forgery a browser can actually send: another session's form (an
  // attacker's, which it spends) posted from https://evil.example, carrying only the cookies a
  // browser attaches to a cross-site POST. The victim's own form with all its cookies and a
  // foreign Origin is no request a browser sends cross-site (RFC 6265bis: a SameSite=Lax cookie
  // goes cross-site only on a top-level navigation with a safe method), so it is not tried
  const three = await captureLoginForm(ctx)
  await forged(CROSS_SITE, async (form) => {
    const cross = await crossSiteCookie(form, three.action)
    ctx.note(
      cross
        ? `${CROSS_SITE}: the cookies a browser would send cross-site: ${cross.replace(/=[^;]*/g, '=…')}`
        : `${CROSS_SITE}: no cookie of the browser would go with it (SameSite=Lax or Strict)`,
    )
    return postLogin(ctx, form, user, {
      fields: three.fields,
      action: three.action,
      cookie: cross || null,
      origin: 'https://evil.example',
    })
  })
  // login CSRF: a form obtained elsewhere (its fields and its action), posted from this
  // browser with this browser's cookies for that action, must not sign it in
  await forged("another session's whole form posted with this browser's cookies", async (form) => {
    const cookieForTwo = (await form.context.cookies(two.action))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ')
    return postLogin(ctx, form, user, {
      fields: two.fields,
      action: two.action,
      cookie: cookieForTwo || null,
    })
  })
  const bare = await postLogin(ctx, one, user, { cookie: null })
  if (bare.status < 400 || bare.status >= 500)
    ctx.note(`the form posted without any cookie was answered HTTP ${bare.status}`)
})

const LOGIN_04 = check(async (ctx) => {
  const auth = await authorize(ctx)
  expectThat(auth.callback?.searchParams.get('code'), 'the sign-in did not reach the client')
  const script = auth.outcome.loginRequest?.via === 'script' ? auth.outcome.loginRequest : undefined
  if (auth.outcome.loginPostStatus === undefined && script) {
    // a sign-in by a script's fetch/XHR call, not a form post: a 302/303 answer passes; any
    // other answer is left inconclusive, since the self-test has no broken script sign-in yet
    // to prove a failure here (a 307/308 would re-send the credentials where it points)
    if (script.status === 302 || script.status === 303) return
    throw new Error(
      `the sign-in was a script's call to ${script.url}, answered HTTP ${String(script.status)}${script.status === 307 || script.status === 308 ? ' (which re-sends the credentials where it points, RFC 9700 §4.12)' : ' without a redirect'}: the suite judges the status of a credential POST's redirect on form posts only`,
    )
  }
  const status = auth.outcome.loginPostStatus
  // RFC 9700 §4.12: a 307 would make the browser re-POST the credentials to the client
  expectThat(
    status === 302 || status === 303,
    `the credential POST was answered with HTTP ${String(status)}; expected 302 or 303`,
  )
})

const SAFE_REFERRER = [
  'no-referrer',
  'same-origin',
  'strict-origin',
  'strict-origin-when-cross-origin',
]

/** Sub-resources a page loads, from its DOM and from the browser's requests. */
async function subresources(page: Page, requested: readonly string[]) {
  const fromDom = await page.evaluate(() => {
    const urls: [string, string][] = []
    for (const s of Array.from(document.querySelectorAll<HTMLScriptElement>('script[src]')))
      urls.push(['script', s.src])
    for (const l of Array.from(document.querySelectorAll<HTMLLinkElement>('link[href]')))
      if (/stylesheet|preload|modulepreload|icon/i.test(l.rel)) urls.push([l.rel, l.href])
    for (const i of Array.from(document.querySelectorAll<HTMLImageElement>('img[src]')))
      urls.push(['image', i.src])
    for (const f of Array.from(document.querySelectorAll<HTMLIFrameElement>('iframe[src]')))
      urls.push(['frame', f.src])
    return urls
  })
  return [...fromDom, ...requested.map((r): [string, string] => ['request', r])]
}

const LOGIN_05 = check(async (ctx) => {
  const res = await expectLoginPage(
    ctx,
    await authorizeRaw(ctx, await validParams(ctx)),
    'login page',
  )
  // RFC 9700 §4.2.4: the authorization request URL must not leak through Referer
  const header = (res.headers.get('referrer-policy') ?? '')
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean)
    .at(-1)
  const meta = /<meta\b[^>]*\bname=["']?referrer["']?[^>]*\bcontent=["']?([\w-]+)/i
    .exec(res.text)?.[1]
    ?.toLowerCase()
  const policy = meta ?? header
  // the referrer policy, the caching, the sub-resources and each cookie's attributes are
  // sub-cases: every one wrong is reported
  await ctx.subcase('login page', () =>
    expectThat(
      policy !== undefined && SAFE_REFERRER.includes(policy),
      `login page: Referrer-Policy ${policy ?? 'absent'}; expected no-referrer or a strict-origin policy`,
    ),
  )
  const cache = res.headers.get('cache-control') ?? ''
  await ctx.subcase('login page', () =>
    expectThat(/\bno-store\b/i.test(cache), `login page: Cache-Control "${cache}" lacks no-store`),
  )

  // third-party scripts and styles on the page that takes the password
  const branding = await ctx.http.get('/auth/branding', { client_id: mainClient(ctx).id })
  const logo = (branding.json as Record<string, unknown> | undefined)?.logo_url
  const context = await ctx.newBrowserContext()
  const requested: string[] = []
  context.on('request', (r) => {
    if (r.resourceType() !== 'document') requested.push(r.url())
  })
  const auth = await authorize(ctx, { context, user: null })
  expectThat(auth.outcome.loginShown, 'no login page was shown')
  await auth.outcome.page.waitForLoadState('load').catch(() => undefined)
  const origin = new URL(ctx.target.baseUrl).origin
  const loaded = await subresources(auth.outcome.page, requested)
  await ctx.subcase('login page', () => {
    for (const [kind, url] of loaded) {
      if (!/^https?:/i.test(url) || new URL(url).origin === origin) continue
      const isLogo = typeof logo === 'string' && URL.canParse(logo) && new URL(logo).href === url
      expectThat(isLogo, `login page: loads a third-party ${kind}: ${url}`)
    }
  })

  // OWASP ASVS V3.4: the cookies of the sign-in are Secure, HttpOnly and SameSite
  const form = await captureLoginForm(ctx)
  const signedIn = await postLogin(ctx, form, ctx.target.users.primary)
  // the sign-in may pass through the IdP's own redirects before it reaches the client
  const hops: HttpResponse[] = []
  const reached = await followToClient(
    ctx,
    form,
    signedIn,
    redirectUriOf(ctx, mainClient(ctx)),
    hops,
  )
  if (!reached) await notByScript(ctx, 'the cookies of the sign-in')
  expectControl(
    reached,
    `the credential post, replayed with the browser's cookies for ${form.action} and followed through the IdP's redirects, never reached the client (first answer HTTP ${signedIn.status})`,
  )
  const cookies = [...cookiesSet(res), ...cookiesSet(signedIn), ...hops.flatMap(cookiesSet)]
  expectThat(cookies.length > 0, 'the sign-in set no cookie at all (how is the session kept?)')
  for (const cookie of cookies) {
    const name = `cookie ${cookie.split('=')[0] ?? cookie}`
    const attribute = (pattern: RegExp, what: string) =>
      ctx.subcase(name, () => expectThat(pattern.test(cookie), `${name}: not ${what}`))
    await attribute(/;\s*secure\s*(;|$)/i, 'Secure')
    await attribute(/;\s*httponly\s*(;|$)/i, 'HttpOnly')
    await attribute(/;\s*samesite=(lax|strict)\s*(;|$)/i, 'SameSite=Lax or Strict')
  }
})

const MARK = 'idp-xss'

/**
 * Elements the payloads would have created had they not been escaped: an event handler that
 * holds the mark, a script element that is a payload's own script, or a script that holds a
 * payload as it was sent. A script of the page that holds the mark in an encoded string (a JSON
 * configuration, say) is no injection; one that runs a payload is told by the dialog it opens.
 */
function injected(page: Page, payloads: readonly string[]): Promise<string[]> {
  return page.evaluate(
    ({ mark, payloads }) => {
      const hits: string[] = []
      const ownScript = new RegExp(`^\\s*alert\\("${mark}-[a-z]+"\\)\\s*$`)
      for (const el of Array.from(document.querySelectorAll('*'))) {
        for (const attr of Array.from(el.attributes)) {
          if (/^on/i.test(attr.name) && attr.value.includes(mark))
            hits.push(`<${el.tagName.toLowerCase()} ${attr.name}="${attr.value}">`)
        }
        // a payload's own script, or a script of the page that holds a payload verbatim (every
        // payload holds both quotes or a </script>, which any encoding for a script changes)
        if (
          el.tagName === 'SCRIPT' &&
          (ownScript.test(el.textContent) || payloads.some((p) => el.textContent.includes(p)))
        )
          hits.push(`<script>${el.textContent}</script>`)
      }
      return hits
    },
    { mark: MARK, payloads },
  )
}

/**
 * No payload became markup on the page, and no payload ran: the dialogs opened since the last
 * page was judged (taken from `dialogs`, so each page answers for its own).
 */
async function expectNoInjection(
  page: Page,
  payloads: readonly string[],
  dialogs: string[],
  what: string,
): Promise<void> {
  await page.waitForLoadState('load').catch(() => undefined)
  const ran = dialogs.splice(0)
  const hits = await injected(page, payloads)
  // RFC 6749 §10.14: reflected values are output-encoded, never markup
  expectThat(hits.length === 0, `${what}: the payload became markup: ${hits.join(' ')}`)
  expectThat(ran.length === 0, `${what}: injected script ran (${ran.join(', ')})`)
}

const LOGIN_06 = check(async (ctx) => {
  const params = {
    state: `<script>alert("${MARK}-state")</script>`,
    // markup in an attribute, then a way out of a single-quoted string in a script
    login_hint: `"><svg onload=alert("${MARK}-hint")>'-alert("${MARK}-hint")-'`,
    ui_locales: `en" onmouseover="alert('${MARK}-locale')" x='`,
  }
  const username = `"><svg onload=alert("${MARK}-user")><script>alert("${MARK}-user")</script>`
  const client = `${MARK}"><svg onload=alert("${MARK}-client")>`
  const payloads = [...Object.values(params), username, client]
  const context = await ctx.newBrowserContext()
  const dialogs: string[] = []
  context.on('dialog', (d) => {
    dialogs.push(d.message())
    void d.dismiss().catch(() => undefined)
  })
  const auth = await authorize(ctx, { context, user: null, params })
  expectThat(auth.outcome.loginShown, 'the request with the payloads showed no login page')
  const page = auth.outcome.page
  // each page is a sub-case: an injection on one does not hide another's
  // (a holder: the sub-case sets it behind the type checker's back)
  const loginPage = { injected: false }
  await ctx.subcase('login page', async () => {
    loginPage.injected = true
    await expectNoInjection(page, payloads, dialogs, 'login page')
    loginPage.injected = false
  })

  // the username is echoed back after a failed login on many pages. A payload that became
  // markup on the login page can leave the form's controls inside an <svg>, never usable:
  // then, with that injection reported, the failed login is not tried (rather than waiting
  // 30 s for a control and leaving the rest of the check inconclusive)
  const failed = 'page after a failed login'
  if (loginPage.injected && !ctx.target.login?.steps && !(await loginFormVisible(page)))
    ctx.note(`${failed}: not tried, the login page's injection left its form unusable`)
  else {
    const loaded = page.waitForEvent('load', { timeout: 10_000 }).catch(() => undefined)
    await submitLogin(
      page,
      { username, password: `wrong-${oidc.randomState().slice(0, 8)}` },
      ctx.target.login,
    )
    await loaded
    await ctx.subcase(failed, () => expectNoInjection(page, payloads, dialogs, failed))
  }

  const error = await context.newPage()
  const unknown = new URL(auth.url)
  unknown.searchParams.set('client_id', client)
  await error.goto(unknown.toString()).catch(() => undefined)
  const errorPage = 'error page (unknown client)'
  await ctx.subcase(errorPage, () => expectNoInjection(error, payloads, dialogs, errorPage))
})

/** Rounds of samples (one of each kind) for a timing judgement; more when the first are unclear. */
const TIMING_ROUNDS = 3
const MORE_TIMING_ROUNDS = 3

type TimingSamples = Record<'wrong' | 'unknown', readonly { readonly ms: number }[]>

/**
 * How the two sides' times stand: the slower and the faster side, whether every sample of the
 * slower is more than 25 ms above every sample of the faster with the floors (each side's
 * fastest sample) 4 times apart (`apart`), and whether it is 4 times every sample of the faster
 * (`farApart`). Noise only adds time: a side's floor is its cost, and one stalled sample raises
 * only its side's maximum, which `farApart` reads as if it were the cost.
 */
function timingGap(samples: TimingSamples) {
  const ms = (k: 'wrong' | 'unknown') => samples[k].map((s) => s.ms)
  const [slow, fast] =
    Math.min(...ms('wrong')) > Math.max(...ms('unknown'))
      ? [ms('wrong'), ms('unknown')]
      : [ms('unknown'), ms('wrong')]
  const apart =
    Math.min(...slow) - Math.max(...fast) > 25 && Math.min(...slow) > 4 * Math.min(...fast)
  return { slow, fast, apart, farApart: apart && Math.min(...slow) > 4 * Math.max(...fast) }
}

/**
 * Whether the first samples are unclear: every sample of one side above every sample of the
 * other, the floors 4 times apart, but a sample of the faster side too slow for the slower to be
 * 4 times it (a stalled request on a loaded machine): more samples decide.
 */
const timingUnclear = (samples: TimingSamples): boolean => {
  const gap = timingGap(samples)
  return gap.apart && !gap.farApart
}

/**
 * A gap no noise explains: every sample of one side far above every sample of the other. With
 * the first samples only, the slower side must be 4 times every sample of the faster; with more
 * (taken when the first were unclear), every one of the slower side above every one of the
 * faster and the floors 4 times apart: with six of each, equal costs put one side wholly above
 * the other by chance in 2 of the 924 equally likely orderings, and the floors rule out a
 * steady difference of a few milliseconds.
 */
async function judgeTiming(ctx: CheckContext, samples: TimingSamples): Promise<void> {
  const { slow, fast, apart, farApart } = timingGap(samples)
  const more = Math.min(samples.wrong.length, samples.unknown.length) > TIMING_ROUNDS
  const round = (xs: readonly number[]) => xs.map((x) => Math.round(x)).join('/')
  ctx.note(
    `timing ms: wrong password ${round(samples.wrong.map((s) => s.ms))}, unknown user ${round(samples.unknown.map((s) => s.ms))}`,
  )
  await ctx.subcase('timing', () =>
    expectThat(
      !(more ? apart : farApart),
      `timing: it tells an unknown user from a wrong password: ${round(slow)} ms vs ${round(fast)} ms`,
    ),
  )
}

const LOGIN_07 = check({ exclusive: true }, async (ctx) => {
  const user = ctx.target.users.primary
  const redirectUri = redirectUriOf(ctx, mainClient(ctx))
  // the positive control: the same replay with the right password signs in, so the failed
  // logins below reached the credential logic (not a "session not found" page)
  await expectSignsIn(ctx, await captureLoginForm(ctx), user, redirectUri, 'control')
  const form = await captureLoginForm(ctx)
  const nobody: TargetUser = { username: unknownUsername(user.username), password: user.password }
  const samples: Record<'wrong' | 'unknown', { status: number; text: string; ms: number }[]> = {
    wrong: [],
    unknown: [],
  }
  // interleaved, so that a warming server does not favour one side. A throttle may come early
  // (OWASP lets an account lock after a few failures): the sampling stops there, and what was
  // sampled is compared
  const sampleRounds = async (rounds: number): Promise<string | undefined> => {
    for (let i = 0; i < rounds; i++) {
      for (const kind of ['wrong', 'unknown'] as const) {
        const who = kind === 'wrong' ? wrongPassword(user) : nobody
        const started = performance.now()
        const res = await postLogin(ctx, form, who)
        const ms = performance.now() - started
        const reached = await followToClient(ctx, form, res, redirectUri)
        expectThat(!reached, `${kind}: a failed login reached the client`)
        if (res.status === 429)
          return `${kind === 'wrong' ? 'wrong password' : 'unknown user'} number ${samples[kind].length + 1}`
        const text = visibleText(res.text).split(who.username).join('<username>')
        samples[kind].push({ status: res.status, text, ms })
      }
    }
    return undefined
  }
  const throttledAt = await sampleRounds(TIMING_ROUNDS)
  const [w, u] = [samples.wrong[0], samples.unknown[0]]
  expectControl(
    w && u,
    `the IdP throttled (HTTP 429) at the ${throttledAt ?? '?'} failed sign-in, before one of each kind could be compared`,
  )
  // RFC 6749 §10.10 / OWASP ASVS V2.2: nothing tells an unknown user from a wrong password;
  // the status, the page, the timing and the throttle are sub-cases, each reported
  await ctx.subcase('status', () =>
    expectThat(
      w.status === u.status,
      `status: wrong password → HTTP ${w.status}, unknown user → HTTP ${u.status}`,
    ),
  )
  await ctx.subcase('page', () =>
    expectThat(
      w.text === u.text,
      `page: wrong password and unknown user get different pages:\n  "${w.text}"\n  "${u.text}"`,
    ),
  )
  if (throttledAt)
    ctx.note(
      `timing not judged: the IdP throttled (HTTP 429) at the ${throttledAt}, before ${TIMING_ROUNDS} samples of each kind`,
    )
  else {
    if (timingUnclear(samples)) {
      const first = { wrong: [...samples.wrong], unknown: [...samples.unknown] }
      const later = await sampleRounds(MORE_TIMING_ROUNDS)
      if (later) {
        // judged on the first samples alone, as if no more had been asked for
        ctx.note(
          `timing: the first samples were unclear, and the IdP throttled (HTTP 429) at the ${later} before more could be taken`,
        )
        samples.wrong.splice(0, Infinity, ...first.wrong)
        samples.unknown.splice(0, Infinity, ...first.unknown)
      } else
        ctx.note(
          `timing: a sample of the faster side was slow (a loaded machine?): ${MORE_TIMING_ROUNDS} more of each kind taken`,
        )
    }
    await judgeTiming(ctx, samples)
  }

  const controls = ctx.target.controls
  if (!ctx.target.embedded || !controls) {
    ctx.note('throttling was not probed: only the embedded server can lower its login limit')
    return
  }
  // a small budget keeps the probe bounded; the harness restores the limit after the check
  const limit = 3
  controls.setRateLimit('login', limit, 300)
  let throttled: HttpResponse | undefined
  // a new window during the probe (newWindowBegan) starts the count again: counted once more
  // in the new window, so the verdict does not depend on the clock (the embedded server's
  // window starts when the limit is lowered, so this is for safety)
  let previous: RateWindow | undefined
  let restarted = false
  for (let i = 0; i < limit + 2 && !throttled; i++) {
    const res = await postLogin(ctx, form, wrongPassword(user))
    if (res.status === 429) throttled = res
    const current = rateWindowOf((name) => res.headers.get(name))
    if (!throttled && previous && newWindowBegan(previous, current) && !restarted) {
      ctx.note("the login limit's window ended during the probe; counted again in the new one")
      restarted = true
      i = 0
    }
    previous = current
  }
  expectThat(throttled, `${limit + 2} failed logins in a row were never throttled (no HTTP 429)`)
  // the 429's Retry-After and the correct password held back are sub-cases: both are reported
  // RFC 6585 §4: Retry-After says when to come back
  await ctx.subcase('the 429', () =>
    expectThat(throttled.headers.get('retry-after'), 'the 429: no Retry-After header'),
  )
  // throttling that a correct password slips through would not slow guessing at all
  await ctx.subcase('while throttled', async () => {
    const right = await postLogin(ctx, form, user)
    expectThat(
      !(await followToClient(ctx, form, right, redirectUri)),
      'while throttled: the correct password still signed in',
    )
  })
})

/** The login checks, one per row of catalogue/login.ts. */
export const loginChecks: AreaChecks<typeof catalogue> = {
  'LOGIN-01': LOGIN_01,
  'LOGIN-02': LOGIN_02,
  'LOGIN-03': LOGIN_03,
  'LOGIN-04': LOGIN_04,
  'LOGIN-05': LOGIN_05,
  'LOGIN-06': LOGIN_06,
  'LOGIN-07': LOGIN_07,
}
