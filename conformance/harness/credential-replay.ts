import type { BrowserContext, Response } from '@playwright/test'
import { CookieJar } from 'tough-cookie'
import type { CheckContext } from './check.ts'
import type { HttpResponse } from './http.ts'
import { oidc } from './oidc.ts'
import { followWithJar } from './form-sign-in.ts'
import { jarOf } from './session.ts'
import type { TargetUser } from './target.ts'
import { expectControl, expectThat } from './expect.ts'
import { authorize, type AuthorizeResult } from './flows.ts'

// The replay of the login page's credential request with the raw client, and the tampering
// LOGIN-02/03/05/07 do with it: captured in a browser, replayed and followed as a browser would.

/** The hosted login form as a browser got it: where it posts, and what it carries. */
export interface LoginForm {
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
export async function captureLoginForm(
  ctx: CheckContext,
  context?: BrowserContext,
): Promise<LoginForm> {
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
export async function crossSiteCookie(form: LoginForm, url: string): Promise<string> {
  return (await form.context.cookies(url))
    .filter(
      (c) => c.sameSite === 'None' || (c.sameSite === 'Lax' && !form.declaredSameSite.has(c.name)),
    )
    .map((c) => `${c.name}=${c.value}`)
    .join('; ')
}

export interface PostOptions {
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
export function postLogin(
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

export const wrongPassword = (user: TargetUser): TargetUser => ({
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
export async function followToClient(
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
export const cookiesSet = (res: HttpResponse): string[] =>
  res.headers
    .getSetCookie()
    .filter((c) => !/^[^=]+=\s*(;|$)/.test(c) && !/;\s*max-age=0\b/i.test(c))

/** The hidden field that looks like the anti-CSRF token, if one does. */
export const csrfField = (form: LoginForm): string | undefined =>
  Object.keys(form.fields).find((k) => /csrf|xsrf|authenticity|request.?token/i.test(k))

/**
 * A forged credential post is refused (REQUIREMENTS.md LOGIN-03: 4xx, no redirect to R):
 * answered 4xx, and the redirect chain, followed as a browser would, never reaches the client.
 */
export async function expectRefused(
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
export async function notByScript(ctx: CheckContext, what: string): Promise<void> {
  const auth = await authorize(ctx, { context: await ctx.newBrowserContext() })
  const request = auth.via === 'browser' ? auth.outcome.loginRequest : undefined
  if (request?.via === 'script')
    throw new Error(
      `${what}: the login page signs in with a script's call to ${request.url} (fetch/XHR), not a form post, so a replay of its form proves nothing: the credential replay was not run`,
    )
}

/** The positive control: an untampered credential post, followed, reaches the client with a code. */
export async function expectSignsIn(
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
