import { setTimeout as sleep } from 'node:timers/promises'
import type { Cookie } from '@playwright/test'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { security as catalogue } from '../catalogue/security.ts'
import type { HttpResponse } from '../harness/http.ts'
import { expectControl, expectThat, show } from '../harness/expect.ts'
import { clientOrigins } from '../harness/browser.ts'
import { followWithJar } from '../harness/form-sign-in.ts'
import { idpCookies, jarOf, jarOfCookies } from '../harness/session.ts'
import { authorize, codeOf, validParams, whereLeft } from '../harness/flows.ts'
import { endpointUrl } from '../harness/requests.ts'

/** The most cookies SEC-07 drops one at a time to find the session's (one request each). */
const MAX_PROBED_COOKIES = 8

/**
 * How SEC-07 asks whether cookies carry a session: an authorization request with prompt=none
 * (OIDC Core §3.1.2.1), or, at a provider that refuses it, one without prompt.
 */
type Probe = 'none' | null

/** Whether an authorization request with `cookies` got a code: the session they carry is live. */
async function carriesSession(
  ctx: CheckContext,
  cookies: readonly Cookie[],
  prompt: Probe,
): Promise<boolean> {
  const answer = await silentRequest(ctx, await jarOfCookies(cookies), prompt)
  return 'params' in answer && answer.params.has('code') && !answer.params.has('error')
}

/**
 * The cookies that carry the IdP session, by behaviour: of the cookies signing in set, a
 * smallest set with which prompt=none (or, where refused, no prompt) still gets a code (each
 * cookie dropped in turn, for good when the session survives without it), then another among
 * those left while they still carry the session alone, as a provider may carry one session in
 * two sets (node-oidc-provider's `_session` and `_session.legacy`, each with its signature).
 * `shown` is false when the session could not be observed that way (no code, with prompt=none or
 * without): then every new cookie stands for the session, and `why` says so. At most
 * MAX_PROBED_COOKIES (n) cookies are probed: at most 1 + (n+1)(n+2)/2 requests.
 */
async function sessionCookiesOf(
  ctx: CheckContext,
  all: readonly Cookie[],
  fresh: readonly Cookie[],
): Promise<{ session: readonly Cookie[]; shown: boolean; prompt: Probe; why?: string }> {
  const unshown = (why: string) => ({ session: fresh, shown: false, prompt: 'none' as Probe, why })
  let prompt: Probe = 'none'
  let how: string | undefined
  if (!(await carriesSession(ctx, all, prompt))) {
    prompt = null
    if (!(await carriesSession(ctx, all, prompt)))
      return unshown(
        'an authorization request with every cookie of the signed-in browser got no code, with prompt=none or without: which cookie carries the session was not observed, so every cookie signing in set is taken for the session',
      )
    how =
      'prompt=none with every cookie of the signed-in browser got no code: the session is observed by authorization requests without prompt'
  }
  const carries = (cookies: readonly Cookie[]) => carriesSession(ctx, cookies, prompt)
  if (fresh.length > MAX_PROBED_COOKIES)
    return unshown(
      `signing in set ${fresh.length} cookies, more than the ${MAX_PROBED_COOKIES} this check drops one at a time: every one is taken for the session`,
    )
  const older = all.filter((o) => !fresh.includes(o))
  const session: Cookie[] = []
  let rest = [...fresh]
  while (rest.length > 0) {
    if (session.length > 0 && !(await carries([...older, ...rest]))) break
    let kept = [...rest]
    for (const c of rest) {
      const without = kept.filter((o) => o !== c)
      if (await carries([...older, ...without])) kept = without
    }
    if (kept.length === 0) break
    session.push(...kept)
    rest = rest.filter((c) => !kept.includes(c))
  }
  if (session.length > 0) return { session, shown: true, prompt, ...(how ? { why: how } : {}) }
  return unshown(
    'an authorization request got a code without any cookie signing in set: which cookie carries the session was not observed, so every one is taken for the session',
  )
}

const SEC_07 = check(async (ctx) => {
  // OWASP ASVS V3.2.1: a new session token on authentication. The attacker signs in, then plants
  // their own session cookie in the victim's browser; the victim signs in (prompt=login)
  const attacker = await ctx.newBrowserContext()
  const before = new Set((await idpCookies(ctx, attacker)).map((c) => `${c.name}=${c.value}`))
  codeOf(await authorize(ctx, { context: attacker }))
  const all = await idpCookies(ctx, attacker)
  const fresh = all.filter((c) => !before.has(`${c.name}=${c.value}`))
  expectThat(fresh.length > 0, 'signing in set no cookie at the IdP: no session to examine')
  // a provider may set other cookies at sign-in (a CSRF token scripts read, a locale, a
  // "signed in" hint): the session's are those it cannot do without
  const { session, shown, prompt, why } = await sessionCookiesOf(ctx, all, fresh)
  if (why) ctx.note(why)
  const others = fresh.filter((c) => !session.includes(c))
  if (others.length > 0)
    ctx.note(
      `not the session (the session's authorization requests get a code without each): ${others.map((c) => c.name).join(', ')}`,
    )
  // each attribute of each session cookie, and the fixation below, are sub-cases: every one
  // missing is reported, not only the first
  for (const c of fresh) {
    const carries = shown && session.includes(c)
    const cookie = carries ? `the session cookie ${c.name}` : `the cookie ${c.name}`
    for (const [flag, set] of [
      ['Secure', c.secure],
      ['HttpOnly', c.httpOnly],
    ] as const) {
      // ASVS V3.4.1/V3.4.2 bind cookie-based session tokens; another cookie's flags are its own
      if (carries) await ctx.subcase(cookie, () => expectThat(set, `${cookie}: not ${flag}`))
      else if (!set)
        ctx.note(
          `${cookie} is not ${flag}${shown ? ' (it does not carry the session)' : ' (not shown to carry the session)'}`,
        )
    }
    // SameSite=None is a provider's legitimate choice (a session sent to prompt=none in a
    // cross-site iframe, as node-oidc-provider does); CSRF then rests on LOGIN-03's form tokens
    if (session.includes(c) && c.sameSite !== 'Lax' && c.sameSite !== 'Strict')
      ctx.note(`${cookie} has SameSite=${c.sameSite}: it is sent on cross-site requests`)
  }
  await ctx.subcase('session fixation', async () => {
    const victim = await ctx.newBrowserContext()
    await victim.addCookies([...session])
    const planted = new Map(session.map((c) => [c.name, c.value]))
    codeOf(await authorize(ctx, { context: victim, params: { prompt: 'login' } }))
    const kept = (await idpCookies(ctx, victim)).filter((c) => planted.get(c.name) === c.value)
    if (kept.length === 0) return
    const names = kept.map((c) => c.name).join(', ')
    // the victim's browser still holds the planted value: fixation when the attacker's copy of
    // it now rides a signed-in session (without a new sign-in of the attacker's own)
    let rides: boolean
    if (shown) rides = await carriesSession(ctx, await idpCookies(ctx, attacker), prompt)
    else {
      const again = await authorize(ctx, { context: attacker, user: null })
      expectControl(
        again.callback !== undefined || again.outcome.loginShown,
        `session fixation: the victim kept the planted ${names}, and the attacker's browser, sent to authorize again, ended at ${whereLeft(again)}, neither a code nor a login page: whether it shares the victim's session was not observed`,
      )
      rides = again.callback?.searchParams.has('code') === true
    }
    expectThat(
      !rides,
      `session fixation: after signing in, the victim's browser still holds the planted session cookie ${names}, and the attacker's copy of it still gets a code without signing in: the identifier was not replaced at sign-in`,
    )
    ctx.note(
      `after signing in, the victim's browser still holds the planted value of ${names}, but the attacker's copy of it no longer carries a session: not fixation`,
    )
  })
})

/** The longest SEC-11 waits for a login session to expire on a target whose clock it cannot move. */
const MAX_SESSION_WAIT_S = 40
/**
 * The clock tolerance a provider may apply to an expiry (node-oidc-provider's clockTolerance
 * defaults to 15 s): on a target whose clock it cannot move, SEC-11 waits this much past the
 * lifetime, so a session within that tolerance is not taken for one that never ends.
 */
const EXPIRY_TOLERANCE_S = 15

type Jar = NonNullable<Awaited<ReturnType<typeof jarOf>>>

/**
 * A prompt=none authorization request (`prompt`: null sends none) over HTTP with a copy of
 * `jar`'s cookies, following the IdP's own redirects: the parameters of the redirect to the
 * client, or the answer that stopped at the IdP (a login or consent page, for one without prompt).
 */
async function silentRequest(
  ctx: CheckContext,
  jar: Jar,
  prompt: Probe = 'none',
): Promise<{ params: URLSearchParams; state: string } | { stopped: HttpResponse }> {
  const params = await validParams(ctx)
  const url = new URL(endpointUrl(ctx.target, 'authorization_endpoint'))
  for (const [k, v] of Object.entries({ ...params, ...(prompt ? { prompt } : {}) }))
    url.searchParams.set(k, v)
  const cookies = await jar.clone()
  const cookie = await cookies.getCookieString(url.toString())
  const first = await ctx.http.request(url.toString(), {
    headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) },
  })
  const redirect = new URL(params.redirect_uri)
  const end = await followWithJar(
    ctx.http,
    cookies,
    first,
    new URL(ctx.target.baseUrl).origin,
    (next) =>
      (next.origin === redirect.origin && next.pathname === redirect.pathname) ||
      (clientOrigins(ctx.target).includes(next.origin) &&
        next.origin !== new URL(ctx.target.baseUrl).origin),
  )
  if ('stopped' in end) return end
  // an error for the fragment response mode may come back there (as expectErrorRedirect reads)
  const query = end.client.searchParams
  const fragment = new URLSearchParams(end.client.hash.slice(1))
  return {
    params: query.has('error') || query.has('code') || !fragment.has('error') ? query : fragment,
    state: params.state,
  }
}

const SEC_11 = check({ exclusive: true }, async (ctx) => {
  const lifetime = ctx.target.sessionLifetime
  if (lifetime === undefined)
    return ctx.skip(
      'the login-session lifetime is not in the target configuration (sessionLifetime), so no session can be presented expired',
    )
  const controls = ctx.target.controls
  // past the lifetime: by a second on the embedded server's clock, by the tolerance elsewhere
  const wait = controls ? lifetime + 1 : lifetime + EXPIRY_TOLERANCE_S
  if (!controls && wait > MAX_SESSION_WAIT_S)
    ctx.skip(
      `login sessions live ${lifetime} s: with ${EXPIRY_TOLERANCE_S} s of clock tolerance longer than this check waits (${MAX_SESSION_WAIT_S} s), and only the embedded server's clock can be moved`,
    )
  // its own browser: the subject is this session
  const context = await ctx.newBrowserContext()
  codeOf(await authorize(ctx, { context, byFormPost: true }))
  const jar = await jarOf(context)
  expectControl(jar, 'the sign-in left no cookies in the browser: there is no session to age')
  // the control: while the session lives, prompt=none with its cookies gets a code, so what
  // changes below is the session's age alone
  const live = await silentRequest(ctx, jar)
  expectControl(
    'params' in live && live.params.has('code') && !live.params.has('error'),
    `control: prompt=none with the live session's cookies got no code (${
      'params' in live
        ? `error=${show(live.params.get('error'))}`
        : `HTTP ${live.stopped.status} at the IdP`
    }): the session cannot be observed`,
  )
  if (controls) controls.advanceClock(wait)
  else await sleep(wait * 1000)
  const what = `a session past its ${lifetime} s lifetime (${wait} s later)`

  // OWASP ASVS 4.0 V3.3.1, V3.3.2: past its lifetime the session no longer authenticates: the user is
  // asked to sign in again (INTERFACE.md §4.1: without a session the login page is shown)
  const again = await authorize(ctx, { context, user: null })
  expectThat(
    !again.callback?.searchParams.has('code'),
    `${what}: the authorization request returned a code without a new sign-in (the session never expired)`,
  )
  expectControl(
    again.outcome.loginShown,
    `${what}: the authorization request ended at ${whereLeft(again)}, not at a login page the harness recognises`,
  )

  // OIDC Core §3.1.2.6: prompt=none without a (live) session answers login_required
  const silent = await silentRequest(ctx, jar)
  // a throttled or unavailable IdP (429, 503) judges nothing about the session (RFC 6585 §4)
  const refused = 'stopped' in silent ? silent.stopped.status : undefined
  if (refused === 429 || refused === 503)
    throw new Error(
      `${what}: prompt=none with the session's cookies was answered HTTP ${refused}: a throttled or unavailable IdP judges nothing`,
    )
  expectThat(
    'params' in silent,
    `${what}: prompt=none with the session's cookies stayed at the IdP (HTTP ${'stopped' in silent ? silent.stopped.status : '?'}) instead of redirecting with login_required (OIDC Core §3.1.2.1: no user interface)`,
  )
  expectThat(
    !silent.params.has('code'),
    `${what}: prompt=none with the session's cookies still returned a code`,
  )
  expectThat(
    silent.params.get('error') === 'login_required',
    `${what}: prompt=none answered error=${show(silent.params.get('error'))}, expected login_required`,
  )
  expectThat(
    silent.params.get('state') === silent.state,
    `${what}: the login_required redirect lost the request's state`,
  )
})

/**
 * The security checks of the login session: its cookie's attributes, no fixation, and its end
 * at its lifetime (the other rows of catalogue/security.ts: security-throttling.ts, security-tokens.ts, security-leaks.ts).
 */
export const securitySessionChecks = {
  'SEC-07': SEC_07,
  'SEC-11': SEC_11,
} satisfies Partial<AreaChecks<typeof catalogue>>
