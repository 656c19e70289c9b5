import type { Page, Response } from '@playwright/test'
import { loginFormVisible, loginScope } from '../harness/browser.ts'
import { idpOrigins } from '../harness/idp-origins.ts'
import { cookiesToJudge, type IdpCookies, watchIdpCookies } from '../harness/idp-cookies.ts'
import { type FailedAttempt, failedSignIn } from '../harness/failed-sign-in.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { login as catalogue } from '../catalogue/login.ts'
import { oidc } from '../harness/oidc.ts'
import { expectJsonObject, expectStatus, expectThat, expectControl, on } from '../harness/expect.ts'
import { REFERRER_POLICY, THIRD_PARTY } from '../threats.ts'
import { authorize, mainClient, redirectUriOf, validParams } from '../harness/flows.ts'
import type { HttpResponse } from '../harness/http.ts'
import { authorizeRaw, endpointLabel, LOGOUT } from '../harness/requests.ts'
import { expectErrorPage, expectLoginPage } from '../harness/pages.ts'
import {
  captureSignIn,
  cookiesSet,
  type Follow,
  describeSignIn,
  followToClient,
  replaySignIn,
  type SignInRequest,
  wrongPassword,
} from '../harness/credential-replay.ts'

// The login page as a user sees it: its branding, its framing, its headers, sub-resources and
// cookies, and what it does with reflected input. The credential request's defences (forgery,
// the redirect after it, enumeration and throttling) are in login-credentials.ts.

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

/** A response's headers, read by name: the raw client's or the browser's. */
interface Headed {
  readonly headers: { get(name: string): string | null }
}

/** RFC 9700 §4.16: what keeps a page out of other sites' frames, or why nothing does. */
function framing(res: Headed): { csp: boolean; xfo: boolean } {
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

function expectUnframeable(ctx: CheckContext, res: Headed, what: string): void {
  const { csp, xfo } = framing(res)
  // RFC 9700 §4.16: the AS MUST prevent clickjacking; either header does it in current browsers
  expectThat(
    csp || xfo,
    `${what}: neither Content-Security-Policy frame-ancestors nor X-Frame-Options DENY/SAMEORIGIN (got CSP ${JSON.stringify(res.headers.get('content-security-policy'))}, X-Frame-Options ${JSON.stringify(res.headers.get('x-frame-options'))})`,
  )
  if (!csp) ctx.note(`${what}: no CSP frame-ancestors (RFC 9700 §4.16 SHOULD use CSP)`)
  if (!xfo) ctx.note(`${what}: no X-Frame-Options for older browsers`)
}

/** A browser response's headers, read by name (several values of one name joined by commas). */
async function browserHeaders(res: Response): Promise<Headed['headers']> {
  const all = await res.headersArray().catch(() => [])
  return {
    get(name: string): string | null {
      const values = all.filter((h) => h.name.toLowerCase() === name).map((h) => h.value)
      return values.length > 0 ? values.join(', ') : null
    },
  }
}

/**
 * A sign-in with the primary user's name and a wrong password, in a browser of its own, driven
 * like any sign-in (the configured steps or the usual form): the provider's answer to it.
 */
async function failedSignInPage(ctx: CheckContext): Promise<FailedAttempt> {
  const auth = await authorize(ctx, { context: await ctx.newBrowserContext(), user: null })
  expectThat(auth.outcome.loginShown, 'the authorization request showed no login page')
  const attempt = await failedSignIn(
    auth.outcome.page,
    wrongPassword(ctx.target.users.primary),
    ctx.target.login,
    Math.min(30_000, Math.max(10_000, ctx.timeLeftMs() / 2)),
    idpOrigins(ctx.target),
  )
  if (!attempt.carriedPassword)
    ctx.note(
      `page after a failed login: the provider answered before the password was sent (${new URL(attempt.response.url()).pathname}, HTTP ${attempt.response.status()})`,
    )
  return attempt
}

const LOGIN_02 = check(async (ctx) => {
  const params = await validParams(ctx)
  const login = await expectLoginPage(ctx, await authorizeRaw(ctx, params), 'login page')
  // each page is a sub-case: one that can be framed does not hide another
  const loginPage = `login page (GET ${endpointLabel(ctx.target, 'authorization_endpoint')})`
  await ctx.subcase(loginPage, () => expectUnframeable(ctx, login, loginPage))

  // the page a wrong password leads to: the answer to the browser's own credential request,
  // replayed with a wrong password; a sign-in over several pages or requests, which no single
  // replay covers, is judged on the browser's own failed sign-in instead (no replay needed)
  const failedPage = 'page after a failed login'
  const form = await captureSignIn(ctx).catch((err: unknown) => {
    ctx.note(
      `${failedPage}: judged on the browser's own failed sign-in, since ${(err as Error).message.split('\n')[0] ?? ''}`,
    )
    return undefined
  })
  if (form) {
    const failed = await replaySignIn(ctx, form, wrongPassword(ctx.target.users.primary))
    await ctx.subcase(failedPage, () => {
      expectThat(
        failed.status < 300 || failed.status >= 400,
        `a wrong password was answered with HTTP ${failed.status}`,
      )
      // a script's sign-in gets data, not a page: its page stays the login page, judged above
      if (form.via === 'script' && !/html/i.test(failed.headers.get('content-type') ?? ''))
        ctx.note(
          `${failedPage}: none, ${describeSignIn(form)} was answered HTTP ${failed.status} (${failed.headers.get('content-type') ?? 'no content type'}) and the login page stays shown`,
        )
      else expectUnframeable(ctx, failed, failedPage)
    })
  } else {
    const attempt = await failedSignInPage(ctx).catch((err: unknown) => {
      ctx.note(`${failedPage}: inconclusive, ${(err as Error).message.split('\n')[0] ?? ''}`)
      return undefined
    })
    if (attempt)
      try {
        const answer = attempt.response
        const failed = { status: answer.status(), headers: await browserHeaders(answer) }
        const script = !answer.request().isNavigationRequest()
        await ctx.subcase(failedPage, () => {
          expectThat(
            failed.status < 300 || failed.status >= 400,
            `a wrong password was answered with HTTP ${failed.status}`,
          )
          // a script's sign-in gets data, not a page: its page stays the login page, judged above
          if (script && !/html/i.test(failed.headers.get('content-type') ?? ''))
            ctx.note(
              `${failedPage}: none, the script's fetch/XHR call to ${new URL(answer.url()).pathname} was answered HTTP ${failed.status} (${failed.headers.get('content-type') ?? 'no content type'}) and the login page stays shown`,
            )
          else expectUnframeable(ctx, failed, failedPage)
        })
      } finally {
        await attempt.end()
      }
  }

  const unknown = { ...params, client_id: `unknown-${oidc.randomState().slice(0, 8)}` }
  const errorPage = 'error page (unknown client)'
  await ctx.subcase(errorPage, async () => {
    const error = await expectErrorPage(ctx, await authorizeRaw(ctx, unknown), 'error page')
    expectUnframeable(ctx, error, errorPage)
  })

  const logout = await ctx.http.request(LOGOUT, { headers: { accept: 'text/html' } })
  if (logout.status === 200 && /html/i.test(logout.headers.get('content-type') ?? ''))
    await ctx.subcase('logout page', () => expectUnframeable(ctx, logout, 'logout page'))
  else
    ctx.note(
      `GET ${endpointLabel(ctx.target, 'end_session_endpoint')} answered HTTP ${logout.status}: no logout page to examine`,
    )
  ctx.note('no consent page appears in these flows, so none was examined')
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

/**
 * The cookies the browser's own credential request, replayed, and the redirects after it set;
 * undefined when the replay does not reach the client (the sign-in goes on after it).
 */
async function replayedCookies(
  ctx: CheckContext,
  form: SignInRequest,
): Promise<IdpCookies | undefined> {
  ctx.note(
    `the cookies of the sign-in: replayed the browser's own request, ${describeSignIn(form)}`,
  )
  const signedIn = await replaySignIn(ctx, form, ctx.target.users.primary)
  // the sign-in may pass through the IdP's own redirects before it reaches the client
  const hops: HttpResponse[] = []
  // a page the HTTP follow leaves to the browser ("stay signed in?", a script's consent) is
  // answered there; the cookies judged are those of the sign-in's HTTP answers (hops)
  // the cookies set where the browser goes on (a session cookie set at the resume after a
  // push page) are the sign-in's too (blind round 6c)
  const browserCookies: IdpCookies = { lines: [], held: [] }
  const follow: Follow = { browserAs: ctx.target.users.primary, browserCookies }
  const reached = await followToClient(
    ctx,
    form,
    signedIn,
    redirectUriOf(ctx, mainClient(ctx)),
    hops,
    follow,
  )
  if (!reached) {
    // a sign-in that goes on after this request (a one-time code): the browser's own cookies
    ctx.note(
      `the cookies of the sign-in: those the browser gets signing in, since ${describeSignIn(form)}, replayed with the browser's cookies for it and followed through the IdP's redirects, never reached the client (first answer HTTP ${signedIn.status}${follow.stoppedAt ? `; stopped at ${follow.stoppedAt}` : ''}: a sign-in over several requests?)`,
    )
    return undefined
  }
  return {
    lines: [...cookiesSet(signedIn), ...hops.flatMap(cookiesSet), ...browserCookies.lines],
    held: browserCookies.held,
  }
}

/**
 * The cookies the browser gets signing in (the configured steps or the usual form), from the
 * login page to the client: the IdP's documents and script calls.
 */
async function browserSignInCookies(ctx: CheckContext, origin: string): Promise<IdpCookies> {
  const signIn = await ctx.newBrowserContext()
  const watch = watchIdpCookies(signIn, [origin, ...idpOrigins(ctx.target)])
  // the header reads are awaited on every path (each is bounded)
  const signedIn = await authorize(ctx, { context: signIn }).catch(async (err: unknown) => {
    await watch.collect()
    throw err
  })
  const cookies = await watch.collect()
  expectControl(
    signedIn.callback?.searchParams.get('code'),
    'the sign-in in the browser never reached the client with a code',
  )
  return cookies
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
  // each part is named (threats.ts parts): the Referer threat is the referrer policy's and the
  // third-party resources', not the cookies' SameSite (blind round 5)
  await ctx.subcase('login page', () =>
    on(REFERRER_POLICY, () =>
      expectThat(
        policy !== undefined && SAFE_REFERRER.includes(policy),
        `login page: Referrer-Policy ${policy ?? 'absent'}; expected no-referrer or a strict-origin policy`,
      ),
    ),
  )
  const cache = res.headers.get('cache-control') ?? ''
  await ctx.subcase('login page', () =>
    on('caching', () =>
      expectThat(
        /\bno-store\b/i.test(cache),
        `login page: Cache-Control "${cache}" lacks no-store`,
      ),
    ),
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
  await ctx.subcase('login page', () =>
    on(THIRD_PARTY, () => {
      for (const [kind, url] of loaded) {
        if (!/^https?:/i.test(url) || new URL(url).origin === origin) continue
        const isLogo = typeof logo === 'string' && URL.canParse(logo) && new URL(logo).href === url
        expectThat(isLogo, `login page: loads a third-party ${kind}: ${url}`)
      }
    }),
  )

  // OWASP ASVS V3.4: the cookies of the sign-in are Secure, HttpOnly and SameSite: those of the
  // browser's own credential request, replayed, and of the redirects after it; a sign-in over
  // several pages or requests, which no single replay covers, is judged on the cookies the
  // browser gets signing in (no replay needed)
  const form = await captureSignIn(ctx).catch((err: unknown) => {
    ctx.note(
      `the cookies of the sign-in: those the browser gets signing in, since ${(err as Error).message.split('\n')[0] ?? ''}`,
    )
    return undefined
  })
  const got =
    (form && (await replayedCookies(ctx, form))) ?? (await browserSignInCookies(ctx, origin))
  // the cookies the browser holds for the IdP at the end of the sign-in that no Set-Cookie
  // showed (a script's, or one set where the replay handed over to the browser) are judged as
  // the browser holds them
  const { lines, fromBrowser } = cookiesToJudge([...cookiesSet(res), ...got.lines], got.held)
  if (fromBrowser.length > 0)
    ctx.note(
      `the cookies ${fromBrowser.join(', ')}: judged as the browser holds them at the end of the sign-in (no Set-Cookie line showed them; Chromium reports an unset SameSite as Lax)`,
    )
  // one judgement per cookie and attributes judged (a cookie set again, with a new value or
  // expiry but the same Secure, HttpOnly and SameSite, is judged once)
  const judged = (c: string): string =>
    [
      c.split('=')[0]?.trim(),
      /;\s*secure\s*(;|$)/i.test(c),
      /;\s*httponly\s*(;|$)/i.test(c),
      /;\s*samesite=(\w+)/i.exec(c)?.[1]?.toLowerCase(),
    ].join('|')
  const cookies = [...new Map(lines.map((c) => [judged(c), c])).values()]
  expectThat(cookies.length > 0, 'the sign-in set no cookie at all (how is the session kept?)')
  for (const cookie of cookies) {
    const name = `cookie ${cookie.split('=')[0] ?? cookie}`
    const attribute = (pattern: RegExp, what: string) =>
      ctx.subcase(name, () =>
        on('cookies', () => expectThat(pattern.test(cookie), `${name}: not ${what}`)),
      )
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
  if (
    loginPage.injected &&
    !ctx.target.login?.steps &&
    !(await loginFormVisible(await loginScope(page, ctx.target.login, idpOrigins(ctx.target))))
  )
    ctx.note(`${failed}: not tried, the login page's injection left its form unusable`)
  else {
    // the attempt ends with the provider's refusal: steps that only follow a success (a code
    // after the password) are not waited for. A browser that will not send the payload as a
    // user name (a type=email field's own validation) leaves this part inconclusive, noted; the
    // other pages are judged all the same
    const attempt = await failedSignIn(
      page,
      { username, password: `wrong-${oidc.randomState().slice(0, 8)}` },
      ctx.target.login,
      Math.min(30_000, Math.max(10_000, ctx.timeLeftMs() / 2)),
      idpOrigins(ctx.target),
    ).catch((err: unknown) => {
      ctx.note(
        `${failed}: inconclusive, the sign-in with the payload as the user name could not be driven (${(err as Error).message.split('\n')[0] ?? ''})`,
      )
      return undefined
    })
    if (attempt)
      try {
        await ctx.subcase(failed, () => expectNoInjection(page, payloads, dialogs, failed))
      } finally {
        await attempt.end()
      }
  }

  const error = await context.newPage()
  const unknown = new URL(auth.url)
  unknown.searchParams.set('client_id', client)
  await error.goto(unknown.toString()).catch(() => undefined)
  const errorPage = 'error page (unknown client)'
  await ctx.subcase(errorPage, () => expectNoInjection(error, payloads, dialogs, errorPage))
})

/** The login page's checks (catalogue/login.ts); login-credentials.ts holds the others. */
export const loginPageChecks: Pick<
  AreaChecks<typeof catalogue>,
  'LOGIN-01' | 'LOGIN-02' | 'LOGIN-05' | 'LOGIN-06'
> = {
  'LOGIN-01': LOGIN_01,
  'LOGIN-02': LOGIN_02,
  'LOGIN-05': LOGIN_05,
  'LOGIN-06': LOGIN_06,
}
