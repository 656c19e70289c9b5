import type { BrowserContext, Response, Route } from '@playwright/test'
import { CookieJar } from 'tough-cookie'
import { browse, rememberSessionUser, submitLogin } from './browser.ts'
import type { CheckContext } from './check.ts'
import type { HttpResponse } from './http.ts'
import { oidc } from './oidc.ts'
import { followWithJar, giveSession, readApproveForm } from './form-sign-in.ts'
import { jarOf, MAX_ANSWERS } from './session.ts'
import { idpOrigins } from './idp-origins.ts'
import { type IdpCookies, watchIdpCookies } from './idp-cookies.ts'
import {
  bodyMembers,
  BROWSER_HEADERS,
  browserAnswer,
  buildHop,
  hopBody,
  type HopPlan,
  httpAnswer,
  type PlannedHop,
  isAnswer,
  plannedSignIn,
} from './sign-in-hops.ts'
import type { TargetUser } from './target.ts'
import { expectControl, expectThat } from './expect.ts'
import { authorize, couldNotGetPast, type AuthorizeResult } from './flows.ts'

// The replay of the browser's own credential request with the raw client, and the tampering
// LOGIN-02/03/05/07 do with it: the request is captured as the login page sends it (a form
// post or a script's fetch/XHR call), then replayed, changed, and followed as a browser would.

/** The login page's credential request as the browser sent it, and the browser it came from. */
export interface SignInRequest {
  /** How the page sent it: a form post (`form`) or a script's fetch/XHR call (`script`). */
  readonly via: 'form' | 'script'
  /** Absolute URL the credentials go to. */
  readonly action: string
  readonly method: string
  /** How the body is encoded: a URL-encoded form or a JSON object. */
  readonly encoding: 'form' | 'json'
  /**
   * The body's members besides the credentials: hidden fields (interaction, anti-CSRF token),
   * the sign-in button's name and value, a JSON request's other members.
   */
  readonly fields: Readonly<Record<string, unknown>>
  /** The member of the user name; none when an earlier request of the sign-in sent it. */
  readonly usernameField: string | undefined
  readonly passwordField: string
  /**
   * The request headers that matter to the IdP, as the browser sent them: the content type,
   * Accept and the page's own headers (an anti-CSRF header such as X-CSRF-Token); never the
   * cookie, Origin or the browser's own (User-Agent, Sec-*), which the replay sets itself.
   */
  readonly headers: Readonly<Record<string, string>>
  /**
   * Cookie header for the request's URL: the cookies the browser holds for that URL when the
   * page was shown (providers scope interaction cookies to a path such as `/interaction/<uid>`,
   * so the cookies for `/` are not the ones a browser would send).
   */
  readonly cookie: string
  /**
   * The names of the cookies set with an explicit SameSite=Lax or Strict on the way to the page
   * (the browser reports a cookie set without the attribute as Lax too, see crossSiteCookie).
   */
  readonly declaredSameSite: ReadonlySet<string>
  /** The browser the page was shown in: its cookie jar seeds the replay's redirect chain. */
  readonly context: BrowserContext
  readonly auth: AuthorizeResult
  /**
   * A sign-in over several requests (sign-in-hops.ts): the recorded sequence, which of its
   * requests this one is, and the replay's answers so far; absent for a one-request sign-in.
   */
  readonly sequence?: SignInSequence | undefined
}

/** Where a captured request stands in a sign-in that takes several requests. */
export interface SignInSequence {
  readonly plan: HopPlan
  /** The IdP's answers the replay got up to this request: what later requests carry over. */
  readonly answers: readonly string[]
  /** The user name the earlier requests sent. */
  readonly username: string
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

/** One request as the page sent it (from Playwright's request, before it left the browser). */
interface SentRequest {
  readonly url: string
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | null
  readonly navigation: boolean
}

/** How long the sign-in may take to send its request once submitted. */
const CAPTURE_MS = 15_000

/**
 * Submits the login page of `auth` with `user` and takes the first POST the page sends (the
 * form's post or a script's fetch/XHR call, as the browser driver defines the credential
 * request), stopping it in the browser, so the interaction is not spent. Undefined when no
 * POST came within CAPTURE_MS.
 */
async function sentSignIn(
  ctx: CheckContext,
  auth: AuthorizeResult,
  user: TargetUser,
): Promise<SentRequest | undefined> {
  const page = auth.outcome.page
  let take: (sent: SentRequest) => void = () => undefined
  const taken = new Promise<SentRequest>((resolve) => (take = resolve))
  const onRoute = async (route: Route): Promise<void> => {
    const req = route.request()
    if (req.method() !== 'POST') return route.fallback().catch(() => undefined)
    take({
      url: req.url(),
      method: req.method(),
      headers: req.headers(),
      body: req.postData(),
      navigation: req.isNavigationRequest(),
    })
    await route.abort('aborted').catch(() => undefined)
  }
  await page.route('**/*', onRoute)
  let timer: NodeJS.Timeout | undefined
  const wait = { over: false }
  try {
    // once the request is taken, the steps may still be running (an identifier-first login
    // waits for a password page that never comes, at most its step timeout): their failure is
    // observed by the race, and steps that end after it start no wait of their own
    const submitted = submitLogin(page, user, ctx.target.login).then(() =>
      wait.over
        ? undefined
        : new Promise<undefined>(
            (resolve) => (timer = setTimeout(() => resolve(undefined), CAPTURE_MS)),
          ),
    )
    return await Promise.race([taken, submitted])
  } finally {
    wait.over = true
    clearTimeout(timer)
    await page.unroute('**/*', onRoute).catch(() => undefined)
  }
}

/** How captureSignIn may take the credential request. */
export interface CaptureOptions {
  /**
   * A sign-in whose first request does not carry the password (an identifier-first login)
   * is replayed up to the request that does (sign-in-hops.ts), with the raw client from the
   * first request the page sent, so the request returned is the password's, and what follows
   * it is replayed in the recorded order by followToClient. Without, such a sign-in throws.
   */
  readonly hops?: boolean
  /**
   * The user name the login page is given and the requests before the password's carry (the
   * primary user's by default): another user's try of a sign-in over several requests
   * (LOGIN-07's unknown user) is a sign-in of its own from its first request.
   */
  readonly username?: string
  /**
   * Collects each request replayed before the password's (a sign-in over several requests) as
   * it is answered, so what the IdP told the user name is known even when the replay stops.
   */
  readonly before?: ReplayedHop[]
}

/** A request of a sign-in over several requests, replayed before the password's, answered. */
export interface ReplayedHop {
  /** Its place in the recorded sequence (HopPlan.hops). */
  readonly index: number
  /** How it reads in messages: `hop 1 of 2 (POST /login/identify)`. */
  readonly name: string
  /** The IdP's answer to it. */
  readonly response: HttpResponse
  /** The redirects followed after the answer, at the IdP (the last is the page shown). */
  readonly chain: readonly HttpResponse[]
  /** How long the answer took, from the request sent to its answer (not the redirects). */
  readonly ms: number
}

/**
 * The replay of a sign-in over several requests stopped before the password's request could be
 * sent: a request answered an error or went through to the client, or the next one could not be
 * built from the replay's answers. The message names the request and why.
 */
export class SequenceStopped extends Error {
  override readonly name = 'SequenceStopped'
}

/** The names of the cookies that Set-Cookie `lines` set with an explicit SameSite=Lax or Strict. */
const declaredLaxOrStrict = (lines: readonly string[]): string[] =>
  lines
    .flatMap((line) => line.split('\n'))
    .filter((line) => /;\s*samesite\s*=\s*(lax|strict)\b/i.test(line))
    .map((line) => line.split('=')[0]?.trim() ?? '')

/**
 * Opens the login page in a fresh browser (or `context`), signs in there with a password made
 * up for the purpose, and takes the credential request the page sends (a form post or a
 * script's fetch/XHR call) before it leaves the browser, so that the raw client can replay
 * and tamper with *that* request. Where no replay can be built from it (no POST was sent, a
 * body neither a form nor JSON, a request without the password: a sign-in over several
 * requests, unless `options.hops`), it throws an Error, which leaves the part inconclusive
 * with why.
 */
export async function captureSignIn(
  ctx: CheckContext,
  context?: BrowserContext,
  options: CaptureOptions = {},
): Promise<SignInRequest> {
  const browser = context ?? (await ctx.newBrowserContext())
  // the names of cookies set with an explicit SameSite=Lax or Strict on the way to the form:
  // the browser reports a cookie without the attribute as Lax too, but may send it cross-site
  const pending: Promise<string[]>[] = []
  // the IdP's answers on the way to the login page, which a later request may carry over
  const answers: Promise<string>[] = []
  const origins = idpOrigins(ctx.target)
  const onResponse = (response: Response): void => {
    pending.push(setCookieLines(response))
    if (options.hops && isAnswer(response, origins)) answers.push(browserAnswer(response))
  }
  browser.on('response', onResponse)
  let auth: AuthorizeResult
  try {
    auth = await authorize(ctx, { context: browser, user: null })
  } finally {
    browser.off('response', onResponse)
    // awaited on every path, whatever follows uses them or not (each bounded, never rejects)
    await Promise.all([...pending, ...answers])
  }
  const declaredSameSite = new Set(declaredLaxOrStrict((await Promise.all(pending)).flat()))
  expectThat(auth.outcome.loginShown, 'the authorization request showed no login form')
  const username = options.username ?? ctx.target.users.primary.username
  const password = `replay-${oidc.randomState().slice(0, 12)}`
  const sent = await sentSignIn(ctx, auth, { username, password })
  if (!sent)
    throw new Error(
      `the login page sent no POST within ${CAPTURE_MS / 1000} s of its sign-in: no credential request to replay`,
    )
  const what = `the sign-in request (${sent.method} ${new URL(sent.url).pathname}, ${sent.headers['content-type'] ?? 'no content type'})`
  const body = bodyMembers(sent.headers['content-type'] ?? '', sent.body ?? '')
  if (!body)
    throw new Error(
      `${what}: its body is neither a URL-encoded form nor a JSON object, so no replay of it was built`,
    )
  const named = (value: string): string | undefined =>
    Object.keys(body.members).find((k) => body.members[k] === value)
  const passwordField = named(password)
  const usernameField = named(username)
  if (options.hops && !passwordField)
    return await replayToPassword(ctx, browser, auth, sent, what, {
      answers: await Promise.all(answers),
      declaredSameSite,
      username,
      replayed: options.before,
    })
  if (!passwordField || !usernameField)
    throw new Error(
      `${what}: it does not carry both the username and the password as members of its body (a sign-in over several requests?), so no replay of it was built`,
    )
  const fields = Object.fromEntries(
    Object.entries(body.members).filter(([k]) => k !== passwordField && k !== usernameField),
  )
  const headers = Object.fromEntries(
    Object.entries(sent.headers).filter(
      ([name]) => !BROWSER_HEADERS.test(name) && !name.startsWith(':'),
    ),
  )
  const cookies = await browser.cookies(sent.url)
  return {
    via: sent.navigation ? 'form' : 'script',
    action: sent.url,
    method: sent.method,
    encoding: body.encoding,
    fields,
    usernameField,
    passwordField,
    headers,
    context: browser,
    cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; '),
    declaredSameSite,
    auth,
  }
}

/**
 * A sign-in whose first request (`sent`, stopped in the browser) does not carry the password:
 * the recorded sequence (plannedSignIn) is replayed with the raw client from `sent`, in this
 * browser's interaction and with its cookies, each later request built from the replay's own
 * answers, up to the request that carries the password, which is returned for the replay to
 * tamper with; the cookies the requests before it set are the browser's now. The requests
 * carry `before.username` (the one the browser typed into `sent`), and each is added to
 * `before.replayed` as it is answered. Throws an Error (inconclusive) naming the request and
 * why, wherever that cannot be done: a SequenceStopped where the replay itself stopped.
 */
async function replayToPassword(
  ctx: CheckContext,
  browser: BrowserContext,
  auth: AuthorizeResult,
  sent: SentRequest,
  what: string,
  before: {
    answers: readonly string[]
    declaredSameSite: Set<string>
    username: string
    replayed?: ReplayedHop[] | undefined
  },
): Promise<SignInRequest> {
  const plan = await plannedSignIn(ctx).catch((err: unknown) => {
    throw new Error(
      `${what} does not carry the password (a sign-in over several requests), and it could not be recorded to be replayed: ${(err as Error).message}`,
    )
  })
  const first = plan.hops[0]
  if (plan.credential === 0 || !first || !sameAddress(first, sent.url))
    throw new Error(
      `${what} does not carry the password, but the recorded sign-in's first request ${plan.credential === 0 ? 'does' : `is another (${first?.name ?? 'none'})`}: no sequence to replay`,
    )
  const username = before.username
  const jar = (await jarOf(browser)) ?? new CookieJar()
  const origins = idpOrigins(ctx.target)
  const idp = new URL(ctx.target.baseUrl).origin
  const isClient = (u: URL): boolean => u.toString().startsWith(auth.redirectUri)
  const answers = [...before.answers]
  const page = Object.fromEntries(
    Object.entries(sent.headers).filter(([n]) => !BROWSER_HEADERS.test(n) && !n.startsWith(':')),
  )
  // how long each request took to be answered (its options built before it is timed)
  const timed = async (...args: Parameters<typeof ctx.http.request>) => {
    const started = performance.now()
    const res = await ctx.http.request(...args)
    return { res, ms: performance.now() - started }
  }
  let hop = 0
  let { res, ms } = await timed(sent.url, {
    method: sent.method,
    body: sent.body ?? '',
    headers: {
      accept: 'text/html',
      ...page,
      origin: idp,
      ...(await cookieFor(jar, sent.url)),
    },
  })
  for (;;) {
    const chain: HttpResponse[] = []
    const end = await followWithJar(ctx.http, jar, res, origins, isClient, chain)
    const name = plan.hops[hop]?.name ?? `hop ${hop + 1}`
    before.replayed?.push({ index: hop, name, response: res, chain, ms })
    for (const r of [res, ...chain]) {
      answers.push(httpAnswer(r))
      for (const name of declaredLaxOrStrict(r.headers.getSetCookie()))
        before.declaredSameSite.add(name)
    }
    if ('client' in end)
      throw new SequenceStopped(`${name} went through to the client before the password was sent`)
    if (end.stopped.status >= 400)
      throw new SequenceStopped(
        `${name}, replayed, was answered HTTP ${end.stopped.status} at ${pageAddress(end.stopped.url)}`,
      )
    hop += 1
    const next = plan.hops[hop]
    if (!next) throw new SequenceStopped('the recorded sign-in ended before its password was sent')
    const built = buildHop(next, answers)
    if (typeof built === 'string') throw new SequenceStopped(built)
    if (hop === plan.credential) {
      if (!built.passwordField) throw new Error(`${next.name} carries no password`)
      await giveSession(browser, jar)
      if (!sequenceNoted.has(ctx))
        ctx.note(
          `the sign-in takes ${plan.hops.length} requests; the password goes with ${next.name}: replayed up to it (${plan.hops
            .slice(0, hop)
            .map((h) => h.name)
            .join(', ')})`,
        )
      sequenceNoted.add(ctx)
      return {
        via: next.navigation ? 'form' : 'script',
        action: built.url,
        method: next.method,
        encoding: next.encoding,
        fields: built.members,
        usernameField: built.usernameField,
        passwordField: built.passwordField,
        headers: built.headers,
        cookie: await jar.getCookieString(built.url),
        declaredSameSite: before.declaredSameSite,
        context: browser,
        auth,
        sequence: { plan, answers, username },
      }
    }
    const members = {
      ...built.members,
      ...(built.usernameField ? { [built.usernameField]: username } : {}),
    }
    ;({ res, ms } = await timed(built.url, {
      method: next.method,
      body: hopBody(next, members),
      headers: {
        accept: 'text/html',
        ...built.headers,
        origin: idp,
        ...(await cookieFor(jar, built.url)),
      },
    }))
  }
}

/** Whether `url` is where `hop` was sent: its path's segments, those that stay the same equal. */
const sameAddress = (hop: PlannedHop, url: string): boolean => {
  const segments = new URL(url).pathname.split('/')
  return (
    new URL(url).origin === hop.origin &&
    segments.length === hop.path.length &&
    hop.path.every((s, at) => s.kind !== 'constant' || s.value === segments[at])
  )
}

/** The checks that were told how their sign-in's requests are replayed (once each). */
const sequenceNoted = new WeakSet<CheckContext>()

/** The Cookie header of `jar` for `url`, as request headers (none when it holds none). */
const cookieFor = async (jar: CookieJar, url: string): Promise<Record<string, string>> => {
  const cookie = await jar.getCookieString(url)
  return cookie ? { cookie } : {}
}

/**
 * The Cookie header the browser of `form` would send with a cross-site POST to `url` (RFC
 * 6265bis, the SameSite check of the cookie retrieval algorithm): its SameSite=None cookies,
 * and those set without a SameSite attribute, which a browser may enforce as
 * "Lax-allowing-unsafe" (sent on a cross-site top-level POST). Strict and declared Lax cookies
 * stay home. Empty when none would be sent.
 */
export async function crossSiteCookie(form: SignInRequest, url: string): Promise<string> {
  return (await form.context.cookies(url))
    .filter(
      (c) => c.sameSite === 'None' || (c.sameSite === 'Lax' && !form.declaredSameSite.has(c.name)),
    )
    .map((c) => `${c.name}=${c.value}`)
    .join('; ')
}

export interface ReplayOptions {
  /** Body members to send instead of the request's own (besides the credentials). */
  readonly fields?: Readonly<Record<string, unknown>>
  /** Headers to send instead of the request's own (besides cookie and Origin). */
  readonly headers?: Readonly<Record<string, string>>
  /** Cookie header instead of the request's; null for none. */
  readonly cookie?: string | null
  /** Origin header instead of the IdP's own origin. */
  readonly origin?: string
  /** Where to send it instead of the request's own URL (another session's request). */
  readonly action?: string
}

/**
 * Sends the credential request of `form` again with the raw client, with `user`'s credentials
 * in place of those the browser sent and the changes of `options` (no redirect is followed).
 */
export function replaySignIn(
  ctx: CheckContext,
  form: SignInRequest,
  user: TargetUser,
  options: ReplayOptions = {},
): Promise<HttpResponse> {
  const cookie = options.cookie === undefined ? form.cookie : options.cookie
  if (!form.usernameField && form.sequence && user.username !== form.sequence.username)
    return Promise.reject(
      new Error(
        `the user name goes with an earlier request of the sign-in than the password (${form.sequence.plan.hops[form.sequence.plan.identifier ?? 0]?.name ?? '?'}): a replay of ${describeSignIn(form)} for another user name was not built`,
      ),
    )
  const members: Record<string, unknown> = {
    ...(options.fields ?? form.fields),
    ...(form.usernameField ? { [form.usernameField]: user.username } : {}),
    [form.passwordField]: user.password,
  }
  const body = hopBody(form, members)
  return ctx.http.request(options.action ?? form.action, {
    method: form.method,
    body,
    headers: {
      accept: 'text/html',
      ...(options.headers ?? form.headers),
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
 * Where a script's sign-in answer sends the browser: a 2xx JSON answer's `location` (or
 * `redirect`, `redirect_to`, `redirectTo`, `url`, `next`) member, which the page's script
 * navigates to, resolved against the request's URL.
 */
function scriptLocation(res: HttpResponse): URL | undefined {
  if (res.status < 200 || res.status >= 300) return undefined
  const json = res.json as Record<string, unknown> | undefined
  if (!json || typeof json !== 'object') return undefined
  for (const key of ['location', 'redirect', 'redirect_to', 'redirectTo', 'url', 'next']) {
    const value = json[key]
    if (typeof value === 'string' && URL.canParse(value, res.url)) return new URL(value, res.url)
  }
  return undefined
}

/** How a follow of a credential request may go on, and where it stopped (followToClient). */
export interface Follow {
  /**
   * Hands a page the HTTP follow cannot answer (a "Stay signed in?" yes/no page, a consent
   * page a script renders) to the browser's interaction loop, with the cookies the chain set,
   * as the browser of this user's sign-in would go on: the built-in and configured
   * interactions are answered (bounded, browser.ts `browse`), a login page is never signed in
   * at. For a sign-in that should reach the client (a positive control, a right password).
   */
  readonly browserAs?: TargetUser
  /** Set to where the follow stopped short of the client, as a user would name the page. */
  stoppedAt?: string
  /**
   * Set when the follow stopped at a recorded request of a sign-in over several requests that
   * it could not build from the replay's answers: why (sign-in-hops.ts buildHop).
   */
  unbuilt?: string | undefined
  /** Collects the answers of the POSTs the follow sent (recorded requests, approving forms). */
  readonly posts?: HttpResponse[]
  /**
   * Collects the cookies the IdP set in the browser the follow went on in (continueInBrowser),
   * and those that browser held for the IdP when it stopped (LOGIN-05: a session cookie set
   * after a page the HTTP follow leaves to the browser).
   */
  readonly browserCookies?: IdpCookies
  /**
   * Set where the follow stopped short of the client at the IdP's refusal: an answer with a
   * 4xx status, the IdP's error page, or its login page again (the browser's interaction loop).
   */
  refused?: boolean
  /** The cookies the browser held and the chain set, as the follow left them. */
  jar?: CookieJar
  /** The browser the follow went on in (continueInBrowser), with the cookies it then held. */
  browser?: BrowserContext
}

/**
 * Follows the IdP's answer to a credential request the way a browser would: a redirect chain
 * (or, for a script's sign-in, the location its JSON answer names), each hop at the IdP with
 * the cookies the browser held plus those the chain set (a cookie jar, path and expiry rules
 * included), answering on the way at most MAX_ANSWERS server-rendered consent or "continue"
 * pages whose one form asks nothing (readApproveForm, as the session replay does), until a
 * redirect leaves for `redirectUri` (returned) or the chain stops at the IdP (undefined), or,
 * with `follow.browserAs`, the page it stops at is handed to the browser (continueInBrowser).
 * Providers pass through intermediate redirects, such as node-oidc-provider's
 * `/auth/authorize/<uid>` resume, before redirecting to the client.
 */
export async function followToClient(
  ctx: CheckContext,
  form: SignInRequest,
  first: HttpResponse,
  redirectUri: string,
  /** Collects every response of the chain after the first (their Set-Cookie, for LOGIN-05). */
  hops: HttpResponse[] = [],
  follow: Follow = {},
): Promise<URL | undefined> {
  const jar = (await jarOf(form.context)) ?? new CookieJar()
  follow.jar = jar
  // the IdP's origins (idp-origins.ts): a login app on an origin of its own, declared or learned,
  // is followed over HTTP as the IdP's, instead of handing the rest to the browser
  const idp = new Set([...idpOrigins(ctx.target), new URL(form.action).origin])
  const isClient = (u: URL): boolean => u.toString().startsWith(redirectUri)
  let res = first
  // a sign-in over several requests: those recorded after this one, each built from the
  // replay's own answers (sign-in-hops.ts), where the chain stops at a page of the IdP
  const sequence = form.sequence
  let planned = sequence ? sequence.plan.credential + 1 : Infinity
  let unbuilt: string | undefined
  for (let answers = 0; ; answers++) {
    const end = await followWithJar(ctx.http, jar, res, idp, isClient, hops)
    if ('client' in end) return end.client
    const stopped = end.stopped
    const next = scriptLocation(stopped)
    const hop = sequence?.plan.hops[planned]
    if (sequence && hop && !next && stopped.status < 400 && idp.has(new URL(stopped.url).origin)) {
      const built = buildHop(hop, [...sequence.answers, httpAnswer(first), ...hops.map(httpAnswer)])
      planned += 1
      if (typeof built !== 'string') {
        const user = follow.browserAs ?? ctx.target.users.primary
        const members = {
          ...built.members,
          ...(built.usernameField ? { [built.usernameField]: user.username } : {}),
          ...(built.passwordField ? { [built.passwordField]: user.password } : {}),
        }
        res = await ctx.http.request(built.url, {
          method: hop.method,
          body: hopBody(hop, members),
          headers: {
            accept: 'text/html',
            ...built.headers,
            // the Origin of the page that sends it, as a browser sends it
            origin: new URL(stopped.url).origin,
            ...(await cookieFor(jar, built.url)),
          },
        })
        hops.push(res)
        follow.posts?.push(res)
        // a recorded request is not one of the MAX_ANSWERS pages answered (the plan bounds them)
        answers -= 1
        continue
      }
      unbuilt = built
    }
    const approve =
      next || stopped.status !== 200 || !idp.has(new URL(stopped.url).origin)
        ? undefined
        : readApproveForm(stopped.text, stopped.url)
    if (next && isClient(next)) return next
    if (answers >= MAX_ANSWERS || (next ? !idp.has(next.origin) : approve?.method !== 'POST')) {
      follow.stoppedAt = `HTTP ${stopped.status} at ${pageAddress(stopped.url)}${unbuilt ? ` (${unbuilt})` : ''}`
      follow.unbuilt = unbuilt
      follow.refused = stopped.status >= 400 && stopped.status < 500
      return follow.browserAs && !next
        ? await continueInBrowser(ctx, jar, stopped, redirectUri, follow.browserAs, follow)
        : undefined
    }
    const cookie = await jar.getCookieString(next ? next.toString() : (approve?.action ?? ''))
    const headers = { accept: 'text/html', ...(cookie ? { cookie } : {}) }
    res = next
      ? await ctx.http.request(next.toString(), { headers })
      : await ctx.http.request(approve?.action ?? '', {
          method: 'POST',
          form: Object.fromEntries(approve?.fields ?? []),
          // the Origin of the page that holds the form, as a browser sends it
          headers: { ...headers, origin: new URL(stopped.url).origin },
        })
    hops.push(res)
    if (!next) follow.posts?.push(res)
  }
}

/** A page's address for messages: no query or fragment (they hold one-time values). */
const pageAddress = (url: string): string => {
  const u = new URL(url)
  return `${u.origin}${u.pathname}`
}

/**
 * Goes on in a browser from the page an HTTP follow stopped at: a fresh browser context gets
 * the cookies of the chain (`jar`) and is shown the page exactly as the IdP served it (the
 * response is fulfilled at its own address, so a page answering a POST is shown too, and its
 * forms and scripts work at the IdP's origin), then the interaction loop answers what it
 * recognises, as `user`'s browser would (an account chooser for that user), never a login
 * page. Returns the client URL reached, else undefined with `follow.stoppedAt` naming the
 * page. Only an HTML page answered 2xx is handed over: an error status is the IdP's answer.
 */
async function continueInBrowser(
  ctx: CheckContext,
  jar: CookieJar,
  stopped: HttpResponse,
  redirectUri: string,
  user: TargetUser,
  follow: Follow,
): Promise<URL | undefined> {
  const type = stopped.headers.get('content-type') ?? ''
  if (stopped.status < 200 || stopped.status >= 300 || !/\bhtml\b/i.test(type)) return undefined
  const context = await ctx.newBrowserContext()
  follow.browser = context
  await giveSession(context, jar)
  rememberSessionUser(context, user)
  const at = new URL(stopped.url).href
  await context.route(
    (url) => url.href === at,
    (route) => route.fulfill({ status: stopped.status, contentType: type, body: stopped.text }),
    { times: 1 },
  )
  const watch = follow.browserCookies
    ? watchIdpCookies(context, [...idpOrigins(ctx.target), new URL(at).origin])
    : undefined
  let outcome: Awaited<ReturnType<typeof browse>>
  try {
    outcome = await browse(context, ctx.target, at, ctx.http, {})
  } finally {
    const got = await watch?.collect()
    if (got) {
      follow.browserCookies?.lines.push(...got.lines)
      follow.browserCookies?.held.push(...got.held)
    }
  }
  const reached = outcome.callback ? new URL(outcome.callback) : undefined
  if (reached && reached.toString().startsWith(redirectUri)) {
    ctx.note(
      `the replayed sign-in stopped at ${pageAddress(at)}, which the HTTP follow leaves to the browser: went on there${outcome.interactions?.length ? `, answering ${outcome.interactions.join(', ')}` : ''}`,
    )
    return reached
  }
  const stop = outcome.stopped
  // the IdP refused the sign-in where it ended: its error page, or its login page again
  follow.refused = stop
    ? stop.kind === 'error-page' || stop.kind === 'login-again'
    : outcome.loginShown
  follow.stoppedAt = stop
    ? stop.kind === 'error-page'
      ? `the IdP's error page "${stop.title}" at ${stop.url}`
      : stop.kind === 'elsewhere'
        ? `a page the browser could not load (${stop.url})`
        : couldNotGetPast(stop)
    : outcome.loginShown
      ? `the IdP's login page again (the browser went on from ${pageAddress(at)})`
      : reached
        ? `${reached.origin}${reached.pathname}, not the client's redirect URI`
        : `${pageAddress(at)} (the browser got no further)`
  return undefined
}

/** Every Set-Cookie of a response that sets a value (clearing ones are left out). */
export const cookiesSet = (res: HttpResponse): string[] =>
  res.headers
    .getSetCookie()
    .filter((c) => !/^[^=]+=\s*(;|$)/.test(c) && !/;\s*max-age=0\b/i.test(c))

const CSRF_NAME = /csrf|xsrf|authenticity|request.?token/i

/** The body member that looks like the anti-CSRF token, if one does. */
export const csrfField = (form: SignInRequest): string | undefined =>
  Object.keys(form.fields).find((k) => CSRF_NAME.test(k))

/** The request header that looks like an anti-CSRF token (X-CSRF-Token, …), if one does. */
export const csrfHeader = (form: SignInRequest): string | undefined =>
  Object.keys(form.headers).find((k) => CSRF_NAME.test(k))

/**
 * A forged credential request is refused (REQUIREMENTS.md LOGIN-03): it never signs the
 * browser in. Answered 4xx, it is refused; otherwise it is followed to where it ends, as the
 * browser that sent it would follow it (forgedSignInEnded).
 */
export async function expectRefused(
  ctx: CheckContext,
  form: SignInRequest,
  res: HttpResponse,
  redirectUri: string,
  what: string,
): Promise<void> {
  if (form.sequence) return expectSequenceRefused(ctx, form, form.sequence, res, redirectUri, what)
  const follow: Follow = { posts: [], browserAs: ctx.target.users.primary }
  const reached = await followToClient(ctx, form, res, redirectUri, [], follow)
  expectThat(
    !reached?.searchParams.has('code'),
    `${what}: the sign-in went through to the client (${reached?.origin ?? ''}${reached?.pathname ?? ''})`,
  )
  if (res.status >= 400 && res.status < 500) return
  // a sign-in whose credential request is followed by more requests (a page that posts on)
  // is judged where it ends: the forged request went through, but a request after it, which
  // the sign-in needs (the browser's own sign-in sends it: plannedSignIn), refused it
  const later = follow.posts?.find((r) => r.status >= 400 && r.status < 500)
  if (later) {
    const plan = await plannedSignIn(ctx).catch(() => undefined)
    const after = plan?.hops[plan.credential + 1]
    if (plan?.credential === 0 && after) {
      ctx.note(
        `${what}: ${describeSignIn(form)}, forged, was answered HTTP ${res.status}; the sign-in takes ${plan.hops.length} requests, and a later one refused it: HTTP ${later.status} at ${pageAddress(later.url)}`,
      )
      return
    }
  }
  await forgedSignInEnded(ctx, follow, reached, what, `${describeSignIn(form)}, forged`, res)
}

/**
 * A forged request of a sign-in over several requests is refused: the sign-in, followed past
 * it through the requests recorded after it (each built from the replay's own answers), never
 * reaches the client with a code. The forged request or one after it answered 4xx is a
 * refusal; else the sign-in is judged where it ends (forgedSignInEnded). A later request the
 * replay cannot build leaves it inconclusive.
 */
async function expectSequenceRefused(
  ctx: CheckContext,
  form: SignInRequest,
  sequence: SignInSequence,
  res: HttpResponse,
  redirectUri: string,
  what: string,
): Promise<void> {
  const hops: HttpResponse[] = []
  const follow: Follow = { posts: [], browserAs: ctx.target.users.primary }
  const reached = await followToClient(ctx, form, res, redirectUri, hops, follow)
  const forged = sequence.plan.hops[sequence.plan.credential]?.name ?? describeSignIn(form)
  expectThat(
    !reached?.searchParams.has('code'),
    `${what}: the sign-in went through to the client (${reached?.origin ?? ''}${reached?.pathname ?? ''}): ${forged}, forged, was answered HTTP ${res.status}${hops.length > 0 ? ', and the requests after it went through' : ''}`,
  )
  const refusal = [res, ...(follow.posts ?? [])].find((r) => r.status >= 400 && r.status < 500)
  if (refusal) {
    if (refusal !== res)
      ctx.note(
        `${what}: ${forged}, forged, was answered HTTP ${res.status}; the sign-in was refused later, HTTP ${refusal.status} at ${pageAddress(refusal.url)}`,
      )
    return
  }
  if (follow.unbuilt)
    throw new Error(
      `${what}: ${forged}, forged, was answered HTTP ${res.status}, and the sign-in could not be followed further: ${follow.unbuilt}`,
    )
  await forgedSignInEnded(ctx, follow, reached, what, `${forged}, forged`, res)
}

/**
 * A forged credential request that was not refused outright (no 4xx to it or to a request
 * after it), followed to where it ends without a code at the client: RFC 6749 §10.12 asks
 * that the forgery not sign the browser in, and sets no status for its refusal (README: a
 * sign-in "followed … to where it ends: a code at the redirect URI fails"). So it fails only
 * on the other evidence of a sign-in: a session for the browser it was sent from, shown by a
 * fresh authorization request that reaches the client with a code without the login page.
 * Where the follow ended at the IdP's refusal (a 4xx, its error page, its login page again, an
 * error at the client) it passes; where it ended at a page the suite could not go past (a page
 * that waits, a script's page, another site), it is inconclusive, naming the page.
 */
async function forgedSignInEnded(
  ctx: CheckContext,
  follow: Follow,
  reached: URL | undefined,
  what: string,
  forged: string,
  res: HttpResponse,
): Promise<void> {
  const ended = reached
    ? `the client's redirect URI without a code (error=${reached.searchParams.get('error') ?? 'none'})`
    : (follow.stoppedAt ?? `its answer, HTTP ${res.status}`)
  const answered = `${forged}, was answered HTTP ${res.status}, not refused outright; followed with the cookies it would carry, it ended without a code: ${ended}`
  // the browser the forgery went on in, else one with the cookies the HTTP follow left
  let browser = follow.browser
  if (!browser) {
    browser = await ctx.newBrowserContext()
    if (follow.jar) await giveSession(browser, follow.jar)
  }
  // a probe, not the check's subject: where it cannot be run, the part is inconclusive
  const again = await authorize(ctx, { context: browser, user: null }).catch((err: unknown) => {
    throw new Error(
      `${what}: ${answered}; whether it left a session for the browser could not be shown: ${(err as Error).message}`,
    )
  })
  expectThat(
    !again.callback?.searchParams.has('code'),
    `${what}: ${answered}, and the browser it was sent from was signed in: a new authorization request reached the client with a code and no login page`,
  )
  if (reached || follow.refused) {
    ctx.note(`${what}: ${answered}: no code, and no session for the browser`)
    return
  }
  throw new Error(
    `${what}: ${answered}; whether the forged sign-in would complete from there is not shown (no session for the browser so far)`,
  )
}

/** How a captured request reads in messages: `the form post to /auth/login`. */
export const describeSignIn = (form: SignInRequest): string =>
  `${form.via === 'form' ? 'the form post' : "the script's fetch/XHR call"} to ${new URL(form.action).pathname}${form.sequence ? ` (${form.sequence.plan.hops[form.sequence.plan.credential]?.name ?? ''} of the sign-in)` : ''}`

/** The positive control: the untampered credential request, followed, reaches the client with a code. */
export async function expectSignsIn(
  ctx: CheckContext,
  form: SignInRequest,
  user: TargetUser,
  redirectUri: string,
  what: string,
): Promise<void> {
  ctx.note(`${what}: replayed the browser's own sign-in request, ${describeSignIn(form)}`)
  const res = await replaySignIn(ctx, form, user)
  const follow: Follow = { browserAs: user }
  const reached = await followToClient(ctx, form, res, redirectUri, [], follow)
  expectControl(
    reached,
    `${what}: ${describeSignIn(form)}, replayed untampered with the browser's cookies for it and followed through the IdP's redirects, never reached ${redirectUri} (first answer HTTP ${res.status}${follow.stoppedAt ? `; stopped at ${follow.stoppedAt}` : ''}${follow.unbuilt && !follow.stoppedAt?.includes(follow.unbuilt) ? `; ${follow.unbuilt}` : ''})`,
  )
  expectControl(reached.searchParams.get('code'), `${what}: the client was reached without a code`)
}
