import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { login as catalogue } from '../catalogue/login.ts'
import type { HttpResponse } from '../harness/http.ts'
import { newWindowBegan, rateWindowOf, type RateWindow } from '../harness/rate-window.ts'
import type { TargetControls, TargetUser } from '../harness/target.ts'
import { expectControl, expectThat } from '../harness/expect.ts'
import { authorize, codeOf, mainClient, redirectUriOf, unknownUsername } from '../harness/flows.ts'
import { visibleText } from '../harness/pages.ts'
import {
  captureSignIn,
  crossSiteCookie,
  csrfField,
  csrfHeader,
  describeSignIn,
  expectRefused,
  expectSignsIn,
  followToClient,
  type ReplayedHop,
  replaySignIn,
  SequenceStopped,
  type SignInRequest,
  wrongPassword,
} from '../harness/credential-replay.ts'

// The login's credential request: CSRF and forged posts (LOGIN-03), the redirect that answers
// it (LOGIN-04), and what failed sign-ins tell and how they are throttled (LOGIN-07). The login
// page itself is in login.ts.

/**
 * LOGIN-03/07 replay a sign-in over several requests (an identifier-first login) up to the
 * request that carries the password, and follow the sign-in past it to where it ends.
 */
const HOPS = { hops: true } as const

/** LOGIN-03's cross-site forgery, as its messages begin. */
const CROSS_SITE =
  "a cross-site post from https://evil.example of another session's form with the cookies a browser sends cross-site"

const LOGIN_03 = check(async (ctx) => {
  const user = ctx.target.users.primary
  const redirectUri = redirectUriOf(ctx, mainClient(ctx))
  // the control first: the untampered replay signs in, so the refusals below are not luck
  await expectSignsIn(ctx, await captureSignIn(ctx, undefined, HOPS), user, redirectUri, 'control')
  let one = await captureSignIn(ctx, undefined, HOPS)
  const two = await captureSignIn(ctx, undefined, HOPS)
  const token = csrfField(one)
  /**
   * One forged post, a sub-case: every defence that is missing is reported. A post that was
   * not refused may have spent the sign-in of `one`, so the next one gets a fresh form: it is
   * then refused for its own forgery, never because its sign-in was already completed.
   */
  const forged = async (what: string, post: (form: SignInRequest) => Promise<HttpResponse>) => {
    const outcome = { refused: false }
    await ctx.subcase(what, async () => {
      await expectRefused(ctx, one, await post(one), redirectUri, what)
      outcome.refused = true
    })
    if (!outcome.refused) one = await captureSignIn(ctx, undefined, HOPS)
  }
  // the anti-CSRF token travels in a body member or in a header of the page's own (a script's
  // X-CSRF-Token): both are dropped, or both taken from another session
  const header = csrfHeader(one)
  if (Object.keys(one.fields).length === 0 && !header)
    ctx.note(
      `${describeSignIn(one)} carries nothing besides the credentials (no hidden field, no anti-CSRF header): the case without an anti-CSRF field was not run`,
    )
  else {
    if (!token && !header)
      ctx.note(
        'no member or header is named like an anti-CSRF token: every member besides the credentials dropped',
      )
    await forged('credentials without the anti-CSRF field', (form) => {
      const without = Object.fromEntries(
        Object.entries(form.fields).filter(
          ([name]) => (token !== undefined || header !== undefined) && name !== token,
        ),
      )
      const headers = Object.fromEntries(
        Object.entries(form.headers).filter(([name]) => name !== header),
      )
      return replaySignIn(ctx, form, user, { fields: without, headers })
    })
  }
  const otherToken = token === undefined ? undefined : two.fields[token]
  const otherHeader = header === undefined ? undefined : two.headers[header]
  if ((token && otherToken !== undefined) || (header && otherHeader !== undefined))
    await forged("another session's anti-CSRF token", (form) =>
      replaySignIn(ctx, form, user, {
        fields: token ? { ...form.fields, [token]: otherToken } : form.fields,
        headers: header && otherHeader ? { ...form.headers, [header]: otherHeader } : form.headers,
      }),
    )
  // the cross-site forgery a browser can actually send: another session's form (an
  // attacker's, which it spends) posted from https://evil.example, carrying only the cookies a
  // browser attaches to a cross-site POST. The victim's own form with all its cookies and a
  // foreign Origin is no request a browser sends cross-site (RFC 6265bis: a SameSite=Lax cookie
  // goes cross-site only on a top-level navigation with a safe method), so it is not tried
  const three = await captureSignIn(ctx, undefined, HOPS)
  await forged(CROSS_SITE, async (form) => {
    const cross = await crossSiteCookie(form, three.action)
    ctx.note(
      cross
        ? `${CROSS_SITE}: the cookies a browser would send cross-site: ${cross.replace(/=[^;]*/g, '=…')}`
        : `${CROSS_SITE}: no cookie of the browser would go with it (SameSite=Lax or Strict)`,
    )
    return replaySignIn(ctx, form, user, {
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
    return replaySignIn(ctx, form, user, {
      fields: two.fields,
      action: two.action,
      cookie: cookieForTwo || null,
    })
  })
  const bare = await replaySignIn(ctx, one, user, { cookie: null })
  if (bare.status < 400 || bare.status >= 500)
    ctx.note(`${describeSignIn(one)} sent without any cookie was answered HTTP ${bare.status}`)
})

const LOGIN_04 = check(async (ctx) => {
  const auth = await authorize(ctx)
  // a sign-in that never reached the client says nothing of the redirect that answers it, when
  // the suite could not get past a page or the IdP throttled it (429, 503): inconclusive then
  codeOf(auth)
  const script = auth.outcome.loginRequest?.via === 'script' ? auth.outcome.loginRequest : undefined
  if (auth.outcome.loginPostStatus === undefined && script) {
    // a sign-in by a script's fetch/XHR call, not a form post. RFC 9700 §4.12 forbids a 307
    // (or 308) that makes the browser re-send the credentials where it points; a 302/303, or a
    // 2xx answer whose JSON names where the script goes next (the sign-in reached the client,
    // asserted above), re-sends nothing
    const status = script.status
    expectThat(
      status !== 307 && status !== 308,
      `the script's credential request to ${script.url} was answered with HTTP ${String(status)}, which re-sends the credentials where it points; expected 302 or 303, or a 2xx answer`,
    )
    if (
      status === 302 ||
      status === 303 ||
      (status !== undefined && status >= 200 && status < 300)
    ) {
      ctx.note(`the sign-in was a script's call to ${script.url}, answered HTTP ${status}`)
      return
    }
    throw new Error(
      `the sign-in was a script's call to ${script.url}, answered ${status === undefined ? 'with no status the browser saw' : `HTTP ${status}`}, and still reached the client: the suite cannot tell what moved the browser on`,
    )
  }
  const status = auth.outcome.loginPostStatus
  const judged = credentialPostAnswer(status)
  expectThat(judged.ok, judged.message)
  if (judged.note) ctx.note(judged.note)
})

/**
 * How a form's credential POST may be answered. RFC 9700 §4.12.1: "the AS MUST NOT use 307"
 * and "If an HTTP redirection (and not, for example, JavaScript) is used for such a request, AS
 * SHOULD use HTTP status code 303"; 308 re-sends the POST as 307 does (RFC 9110 §15.4.9: it
 * "does not allow changing the request method from POST to GET"), so it fails too. A 2xx page
 * (whose script moves the browser on; the sign-in reached the client) re-sends nothing; 302 and
 * 303 pass as before; any other answer still fails.
 */
export function credentialPostAnswer(status: number | undefined): {
  ok: boolean
  message: string
  note?: string
} {
  const message = `the credential POST was answered with HTTP ${String(status)}; expected 302 or 303 (or a page that moves on by itself)${status === 307 || status === 308 ? ', never 307 or 308, which re-send the credentials where they point' : ''}`
  if (status !== undefined && status >= 200 && status < 300)
    return {
      ok: true,
      message,
      note: `the credential POST was answered with a page (HTTP ${status}) that moved the browser on, not an HTTP redirect`,
    }
  return { ok: status === 302 || status === 303, message }
}

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
 * A request whose answers are compared: the one that carries both credentials (`name`
 * undefined: messages as they always read), or, on a sign-in over several requests, each from
 * the user name's to the password's, named (`hop 1 of 2 (POST /login/identify)`). Before the
 * password's request, the known user's tries are the wrong password's.
 */
interface Judged {
  readonly name: string | undefined
  readonly password: boolean
}

/** How the known user's tries read at a judged request. */
const knownAs = (step: Judged): string => (step.password ? 'wrong password' : 'known user')

/**
 * A gap no noise explains: every sample of one side far above every sample of the other. With
 * the first samples only, the slower side must be 4 times every sample of the faster; with more
 * (taken when the first were unclear), every one of the slower side above every one of the
 * faster and the floors 4 times apart: with six of each, equal costs put one side wholly above
 * the other by chance in 2 of the 924 equally likely orderings, and the floors rule out a
 * steady difference of a few milliseconds. Each judged request's answers are timed on their own.
 */
async function judgeTiming(
  ctx: CheckContext,
  timed: readonly { readonly step: Judged; readonly samples: TimingSamples }[],
): Promise<void> {
  const round = (xs: readonly number[]) => xs.map((x) => Math.round(x)).join('/')
  for (const { step, samples } of timed)
    ctx.note(
      `timing ms${step.name ? ` of ${step.name}` : ''}: ${knownAs(step)} ${round(samples.wrong.map((s) => s.ms))}, unknown user ${round(samples.unknown.map((s) => s.ms))}`,
    )
  await ctx.subcase('timing', () => {
    for (const { step, samples } of timed) {
      const { slow, fast, apart, farApart } = timingGap(samples)
      const more = Math.min(samples.wrong.length, samples.unknown.length) > TIMING_ROUNDS
      expectThat(
        !(more ? apart : farApart),
        `timing: ${step.name ?? 'it'} tells an unknown user from a ${step.password ? 'wrong password' : 'known one'}: ${round(slow)} ms vs ${round(fast)} ms`,
      )
    }
  })
}

/** What one failed sign-in told at one request: its first answer and the page it leads to. */
interface Told {
  readonly status: number
  /** Where the first answer redirects: path, then each query parameter (`name=value`), sorted. */
  readonly location: readonly string[] | undefined
  /** The visible text of the page the IdP's redirects stop at (the first answer without any). */
  readonly text: string
  readonly ms: number
}

/**
 * One failed sign-in: what the IdP told at each judged request, in order (Judged), and, where
 * the replay of a sign-in over several requests stopped before the password's, why.
 */
interface Tried {
  readonly told: readonly Told[]
  readonly stopped?: string
}

/** A redirect target as parts that can be compared (the user name in it made `<username>`). */
function locationParts(location: string, base: string, username: string): string[] {
  const url = new URL(location, base)
  const plain = (s: string) =>
    s.split(username).join('<username>').split(encodeURIComponent(username)).join('<username>')
  return [
    plain(`${url.origin}${url.pathname}`),
    ...[...url.searchParams].map(([k, v]) => `${k}=${plain(v)}`).sort(),
  ]
}

/** What `res`, answered in `ms` to `username`'s try, told; `shown` is where its redirects end. */
function toldOf(res: HttpResponse, shown: HttpResponse, ms: number, username: string): Told {
  const location = res.headers.get('location')
  return {
    status: res.status,
    location:
      res.status >= 300 && res.status < 400 && location && URL.canParse(location, res.url)
        ? locationParts(location, res.url, username)
        : undefined,
    text: visibleText(shown.text).split(username).join('<username>'),
    ms,
  }
}

/**
 * Whether the answers of two kinds (each a list of parts: a page's words, a redirect's path and
 * parameters) differ in what stays put. A position whose part changes between two answers of the
 * same kind (a request id, a fresh nonce, a time) tells nothing and is left out; two kinds differ
 * when no answer of one matches an answer of the other, of the same length, at every other
 * position. `volatile` counts the positions left out.
 */
function kindsDiffer(
  a: readonly (readonly string[])[],
  b: readonly (readonly string[])[],
): { differ: boolean; volatile: number } {
  const volatile = new Set<number>()
  for (const kind of [a, b])
    for (const [i, x] of kind.entries())
      for (const y of kind.slice(i + 1))
        if (x.length === y.length) x.forEach((part, at) => part !== y[at] && volatile.add(at))
  const same = (x: readonly string[], y: readonly string[]) =>
    x.length === y.length && x.every((part, at) => volatile.has(at) || part === y[at])
  return { differ: !a.some((x) => b.some((y) => same(x, y))), volatile: volatile.size }
}

const words = (text: string): string[] => text.split(' ')

/**
 * The most browser rounds LOGIN-07 takes: the control, the two recordings of a sign-in over
 * several requests and a browser that finishes the control's sign-in, a fresh sign-in for
 * every sample there (all rounds of both kinds), and the throttle probe's.
 */
const LOGIN_07_ROUNDS = 4 + 2 * (TIMING_ROUNDS + MORE_TIMING_ROUNDS) + 1

const LOGIN_07 = check({ exclusive: true, browserRounds: LOGIN_07_ROUNDS }, async (ctx) => {
  const user = ctx.target.users.primary
  const redirectUri = redirectUriOf(ctx, mainClient(ctx))
  // the positive control: the same replay with the right password signs in, so the failed
  // logins below reached the credential logic (not a "session not found" page)
  const control = await captureSignIn(ctx, undefined, HOPS)
  await expectSignsIn(ctx, control, user, redirectUri, 'control')
  // a sign-in whose user name goes with an earlier request than the password (identifier
  // first): each try is a sign-in of its own, replayed from its first request with its own user
  // name in a fresh authorization (the IdP ties the requests to its interaction), and what the
  // IdP told at every request from the user name's to the password's is compared
  const plan = control.sequence && !control.usernameField ? control.sequence.plan : undefined
  if (plan && plan.identifier === undefined)
    throw new Error(
      `the sign-in takes ${plan.hops.length} requests and none carries the user name in its body: an unknown user's try of it was not built`,
    )
  const steps: readonly Judged[] = plan
    ? plan.hops
        .slice(plan.identifier ?? 0, plan.credential + 1)
        .map((h, at, all) => ({ name: h.name, password: at === all.length - 1 }))
    : [{ name: undefined, password: true }]
  // one sign-in replayed again and again where one request carries both credentials
  const form = plan ? undefined : await captureSignIn(ctx, undefined, HOPS)
  const nobody: TargetUser = { username: unknownUsername(user.username), password: user.password }
  const samples: Record<'wrong' | 'unknown', Tried[]> = { wrong: [], unknown: [] }
  /** The password's request of `form` with `who`'s credentials, answered: undefined if throttled. */
  const tryPassword = async (
    kind: 'wrong' | 'unknown',
    signIn: SignInRequest,
    who: TargetUser,
  ): Promise<Told | undefined> => {
    const started = performance.now()
    const res = await replaySignIn(ctx, signIn, who)
    const ms = performance.now() - started
    // followed as a browser would: a provider that answers with a redirect (post, redirect,
    // get) shows its message on the page the redirect leads to
    const hops: HttpResponse[] = []
    const reached = await followToClient(ctx, signIn, res, redirectUri, hops)
    expectThat(!reached, `${kind}: a failed login reached the client`)
    if (res.status === 429) return undefined
    return toldOf(res, hops.at(-1) ?? res, ms, who.username)
  }
  /** One failed sign-in of `kind`: undefined if the IdP throttled it. */
  const tryOnce = async (kind: 'wrong' | 'unknown'): Promise<Tried | undefined> => {
    const who = kind === 'wrong' ? wrongPassword(user) : nobody
    if (form) {
      const told = await tryPassword(kind, form, who)
      return told && { told: [told] }
    }
    const context = await ctx.newBrowserContext()
    try {
      const before: ReplayedHop[] = []
      const fresh = await captureSignIn(ctx, context, {
        ...HOPS,
        username: who.username,
        before,
      }).catch((err: unknown) => {
        // where the replay stopped before the password's request, what was told up to there
        // is compared; any other failure to drive the sign-in leaves the check inconclusive
        if (err instanceof SequenceStopped) return err
        throw err
      })
      if (before.some((h) => h.response.status === 429)) return undefined
      const told = before
        .filter((h) => h.index >= (plan?.identifier ?? 0))
        .map((h) => toldOf(h.response, h.chain.at(-1) ?? h.response, h.ms, who.username))
      if (fresh instanceof SequenceStopped) return { told, stopped: fresh.message }
      const last = await tryPassword(kind, fresh, who)
      return last && { told: [...told, last] }
    } finally {
      await context.close().catch(() => undefined)
    }
  }
  // interleaved, so that a warming server does not favour one side. A throttle may come early
  // (OWASP lets an account lock after a few failures): the sampling stops there, and what was
  // sampled is compared
  const sampleRounds = async (rounds: number): Promise<string | undefined> => {
    for (let i = 0; i < rounds; i++) {
      for (const kind of ['wrong', 'unknown'] as const) {
        const tried = await tryOnce(kind)
        if (!tried)
          return `${kind === 'wrong' ? 'wrong password' : 'unknown user'} number ${samples[kind].length + 1}`
        samples[kind].push(tried)
      }
    }
    return undefined
  }
  const throttledAt = await sampleRounds(TIMING_ROUNDS)
  expectControl(
    samples.wrong[0]?.told[0] && samples.unknown[0]?.told[0],
    `the IdP throttled (HTTP 429) at the ${throttledAt ?? '?'} failed sign-in, before one of each kind could be compared`,
  )
  /** What the tries of `kind` told at the judged request `at`, of those that got that far. */
  const toldAt = (kind: 'wrong' | 'unknown', at: number): Told[] =>
    samples[kind].flatMap((t) => {
      const told = t.told[at]
      return told ? [told] : []
    })
  // OWASP ASVS 5.0.0 V6.3.8: valid users cannot be deduced "by basing on error messages, HTTP
  // response codes, or different response times": the answer (status and redirect), the page
  // and the timing are sub-cases, each reported, at each judged request both kinds reached
  const compared = steps.flatMap((step, at) => {
    const [wrong, unknown] = [toldAt('wrong', at), toldAt('unknown', at)]
    const [w, u] = [wrong[0], unknown[0]]
    if (!w || !u) return []
    return [
      {
        step,
        w,
        u,
        // a fresh authorization for each try puts its own flow id in every redirect and page:
        // a part that differs tells something only when tries of each kind show what changes
        few: plan !== undefined && (wrong.length < 2 || unknown.length < 2),
        redirects: kindsDiffer(
          wrong.map((t) => t.location ?? []),
          unknown.map((t) => t.location ?? []),
        ),
        pages: kindsDiffer(
          wrong.map((t) => words(t.text)),
          unknown.map((t) => words(t.text)),
        ),
      },
    ]
  })
  // what could not be judged (the rest is inconclusive), and whether the kinds were told apart
  const unjudged: string[] = []
  // (an object: the type checker does not follow assignments in the sub-cases' callbacks)
  const found = { toldApart: false }
  const where = (t: Told) =>
    t.location
      ? ` to ${t.location[0] ?? ''}${t.location.length > 1 ? `?${t.location.slice(1).join('&')}` : ''}`
      : ''
  const oneTry = (step: Judged, part: string) =>
    `${part} ${step.name ?? ''} differ, but fewer than two tries of one kind got that far: what changes from try to try (a fresh authorization's id) cannot be told from what tells the users apart`
  await ctx.subcase('status', () => {
    for (const { step, w, u, few, redirects } of compared) {
      if (w.status === u.status && redirects.differ && few) {
        unjudged.push(oneTry(step, 'the redirects answering'))
        continue
      }
      const differ = w.status !== u.status || redirects.differ
      found.toldApart ||= differ
      expectThat(
        !differ,
        `status: ${step.name ? `${step.name}: ` : ''}${knownAs(step)} → HTTP ${w.status}${where(w)}, unknown user → HTTP ${u.status}${where(u)}`,
      )
    }
  })
  for (const { step, pages, redirects } of compared)
    if (pages.volatile > 0 || redirects.volatile > 0)
      ctx.note(
        `the answers${step.name ? ` to ${step.name}` : ''} change between tries of the same kind (${pages.volatile} word(s) of the page, ${redirects.volatile} part(s) of the redirect): those were left out of the comparison`,
      )
  await ctx.subcase('page', () => {
    for (const { step, w, u, few, pages } of compared) {
      if (pages.differ && few) {
        unjudged.push(oneTry(step, 'the pages after'))
        continue
      }
      found.toldApart ||= pages.differ
      expectThat(
        !pages.differ,
        `page: ${step.name ? `after ${step.name}, ` : ''}${knownAs(step)} and unknown user get different pages:\n  "${w.text}"\n  "${u.text}"`,
      )
    }
  })
  // the judged requests both kinds reached in every try, timed
  const timed = () =>
    steps.flatMap((step, at) => {
      const [wrong, unknown] = [toldAt('wrong', at), toldAt('unknown', at)]
      return wrong.length === samples.wrong.length && unknown.length === samples.unknown.length
        ? [{ step, samples: { wrong, unknown } }]
        : []
    })
  if (throttledAt)
    ctx.note(
      `timing not judged: the IdP throttled (HTTP 429) at the ${throttledAt}, before ${TIMING_ROUNDS} samples of each kind`,
    )
  else {
    if (timed().some((t) => timingUnclear(t.samples))) {
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
    await judgeTiming(ctx, timed())
  }
  // a try whose replay stopped before the password's request: explained where what the IdP
  // told the user name differed, else the rest is inconclusive, saying where and why
  for (const kind of ['wrong', 'unknown'] as const) {
    const stopped = samples[kind].find((t) => t.stopped !== undefined)?.stopped
    if (stopped === undefined) continue
    const who = kind === 'wrong' ? "the known user's" : "the unknown user's"
    if (found.toldApart) ctx.note(`${who} sign-in went no further: ${stopped}`)
    else
      unjudged.push(
        `${who} sign-in, replayed to compare what a failed one tells, stopped before the password's request: ${stopped}`,
      )
  }

  const controls = ctx.target.controls
  if (!ctx.target.embedded || !controls)
    ctx.note('throttling was not probed: only the embedded server can lower its login limit')
  else await probeThrottle(ctx, controls, form ?? (await captureSignIn(ctx, undefined, HOPS)))
  if (unjudged.length > 0) throw new Error(unjudged.join('; '))
})

/**
 * LOGIN-07's throttle, on the embedded server (whose login limit can be lowered): five failed
 * sign-ins at `form` meet a 429, and while it holds, the right password is held back too.
 */
async function probeThrottle(
  ctx: CheckContext,
  controls: TargetControls,
  form: SignInRequest,
): Promise<void> {
  const user = ctx.target.users.primary
  const redirectUri = redirectUriOf(ctx, mainClient(ctx))
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
    const res = await replaySignIn(ctx, form, wrongPassword(user))
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
  // RFC 6585 §4: the 429 "MAY include a Retry-After header" (a note, as RATE-01 has it)
  const retryAfter = throttled.headers.get('retry-after')
  ctx.note(
    retryAfter === null
      ? 'the 429 has no Retry-After (RFC 6585 §4: MAY)'
      : `the 429's Retry-After: ${retryAfter}`,
  )
  // throttling that a correct password slips through would not slow guessing at all
  await ctx.subcase('while throttled', async () => {
    const right = await replaySignIn(ctx, form, user)
    // followed as the user's browser would, past a "stay signed in?" or consent page: a
    // sign-in stopped there by the HTTP follow alone would pass for a throttled one
    expectThat(
      !(await followToClient(ctx, form, right, redirectUri, [], { browserAs: user })),
      'while throttled: the correct password still signed in',
    )
  })
}

/** The credential request's checks (catalogue/login.ts); login.ts holds the login page's. */
export const loginCredentialChecks: Pick<
  AreaChecks<typeof catalogue>,
  'LOGIN-03' | 'LOGIN-04' | 'LOGIN-07'
> = {
  'LOGIN-03': LOGIN_03,
  'LOGIN-04': LOGIN_04,
  'LOGIN-07': LOGIN_07,
}
