import { randomBytes } from 'node:crypto'
import type { BrowserContext } from '@playwright/test'
import { PROBE_LIMIT, PROBE_WINDOW } from '../harness/target.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { rateLimit as catalogue } from '../catalogue/rate-limit.ts'
import type { HttpResponse } from '../harness/http.ts'
import { countTo429 } from '../harness/rate-count.ts'
import {
  CheckFailure,
  expectEqual,
  expectOAuthError,
  expectStatus,
  expectThat,
  on,
  show,
  SKEW,
} from '../harness/expect.ts'
import { LOGIN_FORM } from '../threats.ts'
import { failedLogins, tokensFor, unknownUsername } from '../harness/flows.ts'
import {
  BRANDING,
  clientCredentialsRaw,
  DISCOVERY,
  INTROSPECT,
  JWKS,
  introspectRaw,
  REVOKE,
  revokeRaw,
  TOKEN,
  userInfoRaw,
} from '../harness/requests.ts'

/** One response of a probe, from the raw client or the browser. */
export interface Probe {
  readonly status: number
  header(name: string): string | null
  /** The raw response, when it came from the raw client (the browser's bodies are not kept). */
  readonly raw?: HttpResponse
}

const fromHttp = (res: HttpResponse): Probe => ({
  status: res.status,
  header: (name) => res.headers.get(name),
  raw: res,
})

interface RateHeaders {
  readonly limit: number
  readonly remaining: number
  readonly reset: number
}

/** INTERFACE.md §8: the three headers, each a non-negative integer. */
function rateHeaders(res: Probe, what: string): RateHeaders {
  const value = (name: string): number => {
    const raw = res.header(name)
    expectThat(raw !== null, `${what}: no ${name} header (INTERFACE.md §8)`)
    expectThat(
      /^\d+$/.test(raw.trim()),
      `${what}: ${name} must be a non-negative integer, got ${show(raw)}`,
    )
    return Number(raw.trim())
  }
  const headers = {
    limit: value('x-ratelimit-limit'),
    remaining: value('x-ratelimit-remaining'),
    reset: value('x-ratelimit-reset'),
  }
  expectThat(
    headers.remaining <= headers.limit,
    `${what}: X-RateLimit-Remaining ${headers.remaining} exceeds X-RateLimit-Limit ${headers.limit}`,
  )
  return headers
}

const randomId = (prefix: string): string => `${prefix}-${randomBytes(8).toString('hex')}`

/** A token request that fails client authentication, counted against `clientId` alone. */
const badSecret = (ctx: CheckContext, path: string, clientId: string) => async (): Promise<Probe> =>
  fromHttp(
    await ctx.http.postForm(path, {
      ...(path === TOKEN
        ? { grant_type: 'client_credentials' }
        : { token: 'not-a-token-of-this-server' }),
      client_id: clientId,
      client_secret: `wrong-${randomBytes(6).toString('hex')}`,
    }),
  )

/**
 * Requests of a deployment's probe in flight at once: a limit of 300 per minute, sent one after
 * the other at a loaded machine's pace (200 ms each), takes longer than its window. The
 * embedded server's probe (its limit lowered, its window starting with the probe) stays in order.
 */
const BURST_CONCURRENCY = 8

/**
 * A concurrent count on a loaded server gains less than its concurrency (the server's CPU is
 * the bottleneck, not the round trip): it starts in the next window unless the current one
 * leaves this many times the estimate. On the loaded machine RATE-03's revocation burst, sent
 * 8 at a time, outlasted the rest of a window that the estimate said it fit in.
 */
const COUNT_MARGIN = 3

/** How many times a deployment's count starts again in a new window, when the budget covers it. */
const BURST_RESTARTS = 2

/** What a probe for the 429 found: the limit reached, or why it could not be probed. */
export type ProbeOutcome =
  | { readonly limited: Probe; readonly first: Probe; readonly sent: number }
  | {
      readonly unprobed: string
      /** the limit is unknown (no X-RateLimit-Limit): out of scope, not inconclusive */
      readonly why: 'unadvertised' | 'budget' | 'new window'
    }

/**
 * Sends `send` until it is answered 429, bounded: the embedded server's group is lowered to
 * PROBE_LIMIT first; elsewhere the probe runs only when the target config's rateLimitBudget
 * covers X-RateLimit-Limit + 1 requests. A target that advertises no limit is probed with the
 * whole budget when `unadvertised` is 'whole budget' (and fails when no 429 comes in it), and
 * left unprobed when it is 'leave'. A missing 429 where the probe could count is a
 * CheckFailure; a probe that could not count (the budget too small, a new window it could not
 * count again in, answers without the window's headers) says why.
 */
export async function probeLimit(
  ctx: CheckContext,
  group: string,
  what: string,
  send: () => Promise<Probe>,
  unadvertised: 'whole budget' | 'leave',
  /** whether `send` may be called again before its last call answered (a raw HTTP request) */
  concurrent: boolean,
): Promise<ProbeOutcome> {
  const controls = ctx.target.controls
  controls?.setRateLimit(group, PROBE_LIMIT, PROBE_WINDOW)
  const budget = controls ? PROBE_LIMIT + 1 : ctx.target.rateLimitBudget
  if (budget === undefined)
    return {
      unprobed: `${what}: the 429 probe is off because the target config sets no rateLimitBudget (the most requests a probe may send)`,
      why: 'budget',
    }
  const started = performance.now()
  let first = await send()
  const firstMs = performance.now() - started
  if (first.status === 429) return { limited: first, first, sent: 1 }
  const firstHeaders =
    first.header('x-ratelimit-limit') !== null ? rateHeaders(first, what) : undefined
  const advertised = firstHeaders?.limit
  if (advertised === undefined && unadvertised === 'leave')
    return {
      unprobed: `${what}: no X-RateLimit-Limit header, so no advertised limit to exhaust (the missing header is RATE-04's)`,
      why: 'unadvertised',
    }
  if (advertised !== undefined && advertised + 1 > budget)
    return {
      unprobed: `${what}: X-RateLimit-Limit is ${advertised}, so a 429 takes ${advertised + 1} requests, more than the rateLimitBudget of ${budget}`,
      why: 'budget',
    }
  // INTERFACE.md §7: past the limit, 429. Without X-RateLimit-Limit (INTERFACE.md §8) the
  // limit is unknown, so the whole budget is spent looking for the 429
  const needed = advertised !== undefined ? advertised + 1 : budget
  // a deployment's window that would end before the count does (the first request's time, twice
  // over, per request in flight): the count starts in the next one when the wait fits in the
  // check's time and the budget covers the one request more (the embedded server's window starts
  // with the probe); a window that begins during the count all the same is handled below
  const concurrency = controls || !concurrent ? 1 : BURST_CONCURRENCY
  const countMs = (needed * firstMs * 2) / concurrency + 1000
  // the concurrent count gets the time it needs on a loaded machine (bounded: extendTimeout); a
  // count in order (the login page's) keeps the check's time: one that outlasts it would
  // outlast its window too
  const margin = concurrency > 1 ? COUNT_MARGIN : 1
  if (concurrency > 1) ctx.extendTimeout(countMs * 2 + 10_000)
  let sent = 1
  if (!controls && firstHeaders && needed + 1 <= budget) {
    const untilResetMs = (firstHeaders.reset - Date.now() / 1000) * 1000 + 1000
    if (concurrency > 1 && untilResetMs < countMs * margin)
      ctx.extendTimeout(untilResetMs + countMs * 2 + 10_000)
    if (untilResetMs < countMs * margin && untilResetMs + countMs < ctx.timeLeftMs() - 10_000) {
      ctx.note(
        `${what}: the window's X-RateLimit-Reset was ${Math.ceil(untilResetMs / 1000)} s away, less than the count takes: the count starts in the next window`,
      )
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, untilResetMs)))
      first = await send()
      sent++
      if (first.status === 429) return { limited: first, first, sent }
    }
  }
  // a new window during the probe (outsideWindow: Remaining above what the count allows, or a
  // later Reset; past an answer without the window's headers, any later Reset) starts the count
  // again: a missing 429 then proves nothing. The embedded server's window starts when the probe
  // lowers the limit (PROBE_WINDOW long), so counting again there (once) is for safety; a
  // deployment's count starts again while the budget covers it, and is inconclusive when it
  // does not. Where the headers are read, an answer without them (a proxy's own error) may hide
  // a window that began, and may not have been counted at all: a count with one proves nothing
  // either
  const counted = await countTo429({
    send,
    start: first,
    needed,
    concurrency,
    budget: controls ? Infinity : budget - sent,
    restarts: controls ? 1 : BURST_RESTARTS,
    readsWindow: firstHeaders !== undefined,
    onRestart: () =>
      ctx.note(`${what}: a new rate-limit window began during the probe; counted again in it`),
  })
  sent += counted.sent
  if ('limited' in counted) return { limited: counted.limited, first, sent }
  if ('rolledOver' in counted)
    return {
      unprobed: `${what}: a new rate-limit window began during the probe (X-RateLimit-Remaining ${counted.rolledOver.remaining}, X-RateLimit-Reset ${counted.rolledOver.reset}), so a missing 429 proves nothing`,
      why: 'new window',
    }
  if ('headerless' in counted)
    return {
      unprobed: `${what}: ${counted.headerless} of the answers counted carried no X-RateLimit-Remaining and -Reset, so a window that began among them is not seen: a missing 429 proves nothing`,
      why: 'new window',
    }
  throw new CheckFailure(
    advertised !== undefined
      ? `${what}: no 429 after ${sent} requests, though X-RateLimit-Limit is ${advertised} (INTERFACE.md §7)`
      : `${what}: no 429 after ${sent} requests (${controls ? `the limit lowered to ${PROBE_LIMIT}` : 'the whole rateLimitBudget'}), and no X-RateLimit-Limit header says how many it would take (INTERFACE.md §7, §8)`,
  )
}

/**
 * probeLimit for the checks of credential guessing (RATE-01, RATE-03): an unadvertised limit is
 * looked for with the whole budget; a budget too small skips the check, a new window during the
 * probe leaves it inconclusive.
 */
async function burst(
  ctx: CheckContext,
  group: string,
  what: string,
  send: () => Promise<Probe>,
  concurrent: boolean,
): Promise<{ limited: Probe; first: Probe; sent: number }> {
  const outcome = await probeLimit(ctx, group, what, send, 'whole budget', concurrent)
  if ('limited' in outcome) return outcome
  if (outcome.why === 'new window') throw new Error(outcome.unprobed)
  return ctx.skip(outcome.unprobed)
}

/** RFC 6585 §4 and INTERFACE.md §8: a 429 with the three headers, Remaining 0. */
function expectLimited(ctx: CheckContext, res: Probe, what: string): RateHeaders {
  expectEqual(res.status, 429, `${what}: status past the limit`)
  const headers = rateHeaders(res, `${what}, the 429`)
  expectEqual(headers.remaining, 0, `${what}: X-RateLimit-Remaining of the 429`)
  noteRetryAfter(ctx, res, what)
  return headers
}

/**
 * The login form's 429: INTERFACE.md §8 scopes rate limiting and its X-RateLimit-* headers to
 * "API endpoints", which the login page is not, so only the status is judged; RFC 6585 §4 lets
 * the 429 carry Retry-After ("MAY"), noted (blind round 5: it failed for lacking X-RateLimit-*).
 */
function expectLoginLimited(ctx: CheckContext, res: Probe, what: string): void {
  expectEqual(res.status, 429, `${what}: status past the limit`)
  if (res.header('x-ratelimit-limit') === null)
    ctx.note(
      `${what}: the 429 has no X-RateLimit-* headers (INTERFACE.md §8 asks them of API endpoints, not of the login page)`,
    )
  noteRetryAfter(ctx, res, what)
}

/** RFC 6585 §4: Retry-After MAY be sent (a note); when sent it is seconds or an HTTP date. */
function noteRetryAfter(ctx: CheckContext, res: Probe, what: string): void {
  const retryAfter = res.header('retry-after')
  if (retryAfter === null) ctx.note(`${what}: the 429 has no Retry-After (RFC 6585 §4: MAY)`)
  else if (!/^\d+$/.test(retryAfter) && Number.isNaN(Date.parse(retryAfter)))
    ctx.note(`${what}: Retry-After ${show(retryAfter)} is neither seconds nor an HTTP date`)
  else ctx.note(`${what}: Retry-After ${retryAfter}`)
}

/** A sender of failed logins as `username` on the hosted login page, in the browser. */
const loginAttempts = (ctx: CheckContext, context: BrowserContext, username: string) =>
  failedLogins(ctx, context, () => ({
    username,
    password: `wrong-${randomBytes(6).toString('hex')}`,
  }))

const RATE_01 = check({ exclusive: true }, async (ctx) => {
  // INTERFACE.md §7: HTTP 429 past the limit, in the JSON error shape, with the §8 headers;
  // the token endpoint and the login form are sub-cases, each reported
  // each part is named (threats.ts parts): the token endpoint's failure alone is not the
  // login page's credential guessing
  await ctx.subcase('token endpoint', () =>
    on('token endpoint', async () => {
      const token = await burst(
        ctx,
        'token',
        'token endpoint',
        badSecret(ctx, TOKEN, randomId('rate-probe')),
        true,
      )
      expectLimited(ctx, token.limited, 'token endpoint')
      if (token.limited.raw) expectOAuthError(token.limited.raw, 429)
    }),
  )
  // RFC 6749 §10.10: the password form is what guessing targets first
  await ctx.subcase('login form', () =>
    on(LOGIN_FORM, async () => {
      const context = await ctx.newBrowserContext()
      const login = await burst(
        ctx,
        'login',
        'login form',
        await loginAttempts(ctx, context, unknownUsername(ctx.target.users.primary.username)),
        // one login page: one sign-in at a time
        false,
      )
      expectLoginLimited(ctx, login.limited, 'login form')
    }),
  )
})

const RATE_02 = check({ exclusive: true }, async (ctx) => {
  const controls = ctx.target.controls
  controls?.setRateLimit('token', PROBE_LIMIT, PROBE_WINDOW)
  const bad = badSecret(ctx, TOKEN, randomId('rate-probe'))
  // every request of the probe, against the rateLimitBudget
  let sent = 0
  const send = (): Promise<Probe> => {
    sent++
    return bad()
  }
  // Remaining drops by one within a window; a window boundary between the two is retried once
  let a: RateHeaders | undefined
  let b: RateHeaders | undefined
  const started = performance.now()
  for (let attempt = 0; attempt < 2 && (!a || !b || a.reset !== b.reset); attempt++) {
    a = rateHeaders(await send(), 'token endpoint, first request')
    b = rateHeaders(await send(), 'token endpoint, second request')
  }
  const perRequestMs = (performance.now() - started) / sent
  expectThat(a && b, 'no two token responses to compare')
  const now = Math.floor(Date.now() / 1000)
  for (const h of [a, b]) {
    // INTERFACE.md §8: Reset is a Unix time in seconds, in the future
    expectThat(
      h.reset > now - SKEW,
      `X-RateLimit-Reset ${h.reset} is not a future Unix time (now ${now}): seconds until the reset are not what INTERFACE.md §8 says`,
    )
    expectThat(
      h.reset < now + 366 * 86400,
      `X-RateLimit-Reset ${h.reset} is more than a year away: not Unix seconds (milliseconds?)`,
    )
    expectThat(h.limit > 0, `X-RateLimit-Limit is ${h.limit}`)
  }
  expectEqual(b.limit, a.limit, 'X-RateLimit-Limit of the next request')
  expectEqual(
    b.remaining,
    Math.max(0, a.remaining - 1),
    'X-RateLimit-Remaining of the next request',
  )
  const budget = controls ? Infinity : (ctx.target.rateLimitBudget ?? 0)
  if (!controls && b.remaining + 1 > budget)
    ctx.skip(
      `the headers' meaning was verified; the 429 part (a 429 carries no token, the limit lifts after Reset) needs a rateLimitBudget of at least ${b.remaining + 1}, and the target config gives ${ctx.target.rateLimitBudget ?? 'none'}`,
    )
  // a deployment's window that would end before the count does: the count starts in the next
  // one, when the wait fits in the check's time (the embedded server's window starts with the
  // probe); a window that begins during the count all the same is handled below. A deployment's
  // count is sent BURST_CONCURRENCY requests at a time, so that it fits in its window on a
  // loaded machine
  const concurrency = controls ? 1 : BURST_CONCURRENCY
  const countMs = ((b.remaining + 1) * perRequestMs * 2) / concurrency + 1000
  const margin = concurrency > 1 ? COUNT_MARGIN : 1
  ctx.extendTimeout(countMs * 2 + (b.reset - Date.now() / 1000) * 1000 + 20_000)
  const untilResetMs = (b.reset - Date.now() / 1000) * 1000 + 1000
  if (
    !controls &&
    untilResetMs < countMs * margin &&
    untilResetMs + countMs < ctx.timeLeftMs() - 10_000
  ) {
    ctx.note(
      `the window's Reset was ${Math.ceil(untilResetMs / 1000)} s away, less than the count takes: the count starts in the next window`,
    )
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, untilResetMs)))
    const next = await send()
    b = rateHeaders(next, 'token endpoint, first request of the next window')
  }
  // the count to the 429, in one window: a new window during it (outsideWindow, or a later Reset
  // past an answer without the headers) starts it again when the budget covers it; otherwise,
  // or with an answer without the headers in the count, a missing 429 proves nothing
  const left = b.remaining
  const start: Probe = {
    status: 401,
    header: (name) =>
      ({ 'x-ratelimit-remaining': String(b.remaining), 'x-ratelimit-reset': String(b.reset) })[
        name
      ] ?? null,
  }
  const count = await countTo429({
    send: bad,
    start,
    // one past the limit in one window (from b, at least one past its Remaining: a window that
    // begins during the count starts it again from the new window's first answer)
    needed: b.limit + 1,
    concurrency,
    budget: controls ? Infinity : budget - sent,
    restarts: controls ? 1 : BURST_RESTARTS,
    // the answers carry the window's headers (b): one without them leaves the count unproven
    readsWindow: true,
    onRestart: () =>
      ctx.note('a new rate-limit window began during the count to the 429; counted again in it'),
  })
  sent += count.sent
  if ('rolledOver' in count)
    throw new Error(
      `a new rate-limit window began during the count to the 429 (X-RateLimit-Remaining ${count.rolledOver.remaining}, X-RateLimit-Reset ${count.rolledOver.reset}), and the rateLimitBudget does not cover counting again: a missing 429 proves nothing`,
    )
  if ('headerless' in count)
    throw new Error(
      `${count.headerless} of the answers counted to the 429 carried no X-RateLimit-Remaining and -Reset, so a window that began among them is not seen: a missing 429 proves nothing`,
    )
  const limited = 'limited' in count ? count.limited : undefined
  expectThat(
    limited,
    `no 429 after ${count.sent} more requests, though X-RateLimit-Remaining was ${left}`,
  )
  const reset = expectLimited(ctx, limited, 'token endpoint').reset
  // a 429 with valid credentials must not have issued a token (on the embedded server only, so a
  // configured client of a real deployment is not throttled for the rest of the run)
  if (controls) {
    const client = ctx.target.clients.service ?? ctx.target.clients.main
    let valid: HttpResponse | undefined
    for (let i = 0; i <= PROBE_LIMIT && valid?.status !== 429; i++)
      valid = await clientCredentialsRaw(ctx, client)
    expectThat(valid?.status === 429, `valid client_credentials requests were never limited`)
    expectThat(
      !/access_token|refresh_token|id_token/.test(valid.text),
      `a 429 to valid client credentials carries a token: ${valid.text.slice(0, 200)}`,
    )
  } else {
    ctx.note('a 429 to valid credentials was only looked for in the random client answers')
  }
  // after Reset the limit lifts
  const wait = reset - Math.floor(Date.now() / 1000) + 1
  if (controls) controls.advanceClock(Math.max(1, wait))
  // waiting for the reset is bounded by the check's own time limit (--check-timeout), with
  // 10 s kept for the request after it
  else if (wait * 1000 <= ctx.timeLeftMs() - 10_000)
    await new Promise((resolve) => setTimeout(resolve, wait * 1000))
  else
    ctx.skip(
      `the headers and the 429 were verified; waiting ${wait} s for the reset is longer than the check has left (raise --check-timeout)`,
    )
  const after = await send()
  expectThat(after.status !== 429, `after X-RateLimit-Reset ${reset} the request is still limited`)
  const fresh = rateHeaders(after, 'token endpoint after the reset')
  expectThat(
    fresh.reset > reset && fresh.remaining === fresh.limit - 1,
    `after the reset expected a new window (Reset > ${reset}, Remaining ${fresh.limit - 1}), got ${show(fresh)}`,
  )
  if (controls) {
    const client = ctx.target.clients.service ?? ctx.target.clients.main
    const res = await clientCredentialsRaw(ctx, client)
    expectStatus(res, 200, 'valid client credentials after the reset')
  }
})

const CLIENT_KEYED = [
  { group: 'token', path: TOKEN, what: 'token endpoint (invalid_client)' },
  { group: 'introspect', path: INTROSPECT, what: 'introspection endpoint' },
  { group: 'revoke', path: REVOKE, what: 'revocation endpoint' },
] as const

const RATE_03 = check({ exclusive: true }, async (ctx) => {
  // RFC 6749 §2.3.1, §10.10: client secrets and passwords must not be open to guessing, and
  // the limit hits the guesser, not every client behind the same address
  // each endpoint is its own sub-case: one limit shared by every client does not hide another
  // each part is named (threats.ts parts): a client-keyed endpoint's failure alone is not the
  // login page's credential guessing
  for (const { group, path, what } of CLIENT_KEYED)
    await ctx.subcase(what, () =>
      on(what, async () => {
        const a = randomId('rate-probe-a')
        const { limited } = await burst(
          ctx,
          group,
          `${what}, client ${a}`,
          badSecret(ctx, path, a),
          true,
        )
        expectEqual(limited.status, 429, `${what}: status past the limit`)
        const b = randomId('rate-probe-b')
        const other = await badSecret(ctx, path, b)()
        expectThat(
          other.status !== 429,
          `${what}: after client ${a} was limited, client ${b} is limited too (429): the limit is not counted per client_id`,
        )
        // the headers themselves are RATE-04's; when sent, they must not say b is used up
        if (other.header('x-ratelimit-limit') === null) return
        const headers = rateHeaders(other, `${what}, client ${b}`)
        expectThat(
          headers.remaining > 0,
          `${what}: client ${b} starts with X-RateLimit-Remaining 0 after client ${a} was limited`,
        )
      }),
    )
  // the login form is a sub-case too: a limit missing there is reported beside the others
  await ctx.subcase('login form', () =>
    on(LOGIN_FORM, async () => {
      const context = await ctx.newBrowserContext()
      // user names shaped like a real one: a form that checks their shape still counts them
      const guessed = unknownUsername(ctx.target.users.primary.username)
      ctx.note(`login form: the failed sign-ins are as user ${guessed}`)
      const { limited } = await burst(
        ctx,
        'login',
        'login form',
        await loginAttempts(ctx, context, guessed),
        // one login page: one sign-in at a time
        false,
      )
      expectEqual(limited.status, 429, 'login form: status past the limit')
      const nobody = unknownUsername(ctx.target.users.primary.username)
      const another = await (await loginAttempts(ctx, context, nobody))()
      ctx.note(
        another.status === 429
          ? 'the login form limit is counted per address only: one guesser locks every user out behind it'
          : 'the login form limit is counted per user name (and address)',
      )
    }),
  )
})

const RATE_04 = check({ exclusive: true }, async (ctx) => {
  const responses: [string, HttpResponse][] = []
  const { body, res } = await tokensFor(ctx, { scope: 'openid' })
  responses.push(['token endpoint (authorization_code)', res])
  const accessToken = String(body.access_token)
  responses.push(['user-info', await userInfoRaw(ctx, accessToken)])
  responses.push(['introspection', await introspectRaw(ctx, accessToken)])
  const client = ctx.target.clients.service ?? ctx.target.clients.main
  responses.push(['token endpoint (client_credentials)', await clientCredentialsRaw(ctx, client)])
  responses.push(['discovery', await ctx.http.get('/.well-known/openid-configuration')])
  responses.push(['JWKS', await ctx.http.get('/.well-known/jwks.json')])
  responses.push([
    'branding',
    await ctx.http.get('/auth/branding', { client_id: ctx.target.clients.main.id }),
  ])
  responses.push(['revocation', await revokeRaw(ctx, accessToken)])
  // INTERFACE.md §8: the headers are "sent on responses", the successful ones included; each
  // endpoint is its own sub-case, so every one without them is reported, not only the first
  for (const [what, response] of responses)
    await ctx.subcase(what, () => {
      expectStatus(response, 200, what)
      rateHeaders(fromHttp(response), what)
    })
})

/** One API endpoint beyond token and login, its server group, and a request that it counts. */
interface ApiEndpoint {
  readonly what: string
  /** The embedded server's rate-limit group of the endpoint (its controls lower it). */
  readonly group: string
  readonly send: () => Promise<HttpResponse>
}

const RATE_05 = check({ exclusive: true }, async (ctx) => {
  // INTERFACE.md §8: rate limiting "applies to API endpoints"; §7: past the limit, 429. Each
  // endpoint that advertises X-RateLimit-Limit is exhausted with requests it answers normally
  // (a valid access token, valid client credentials), each its own sub-case
  const controls = ctx.target.controls
  if (!controls && ctx.target.rateLimitBudget === undefined)
    ctx.skip(
      'the 429 probes are off because the target config sets no rateLimitBudget (the most requests a probe may send)',
    )
  const { body } = await tokensFor(ctx, { scope: 'openid' })
  const accessToken = String(body.access_token)
  const client = ctx.target.clients.service ?? ctx.target.clients.main
  // a token that is not this server's: introspection answers active false, revocation 200
  const foreign = `not-a-token-of-this-server-${randomBytes(6).toString('hex')}`
  const endpoints: readonly ApiEndpoint[] = [
    { what: 'user-info', group: 'userinfo', send: () => userInfoRaw(ctx, accessToken) },
    { what: 'discovery', group: 'public', send: () => ctx.http.get(DISCOVERY) },
    { what: 'JWKS', group: 'public', send: () => ctx.http.get(JWKS) },
    {
      what: 'branding',
      group: 'public',
      send: () => ctx.http.get(BRANDING, { client_id: ctx.target.clients.main.id }),
    },
    {
      what: 'introspection',
      group: 'introspect',
      send: () => introspectRaw(ctx, foreign, { client }),
    },
    { what: 'revocation', group: 'revoke', send: () => revokeRaw(ctx, foreign, { client }) },
  ]
  const lowered = new Set<string>()
  const unprobed: { what: string; why: string; reason: string }[] = []
  const verified: string[] = []
  // the latest X-RateLimit-Reset of a 429 this check caused at a deployment
  let lastReset = 0
  for (const { what, group, send } of endpoints) {
    // discovery, JWKS and branding share one group on the embedded server: each probe starts
    // when the one before it has ended, its window over (the twin's clock moved past it)
    if (controls && lowered.has(group)) controls.advanceClock(PROBE_WINDOW)
    lowered.add(group)
    await ctx.subcase(what, async () => {
      const outcome = await probeLimit(
        ctx,
        group,
        what,
        async () => fromHttp(await send()),
        'leave',
        true,
      )
      if (!('limited' in outcome)) {
        unprobed.push({ what, why: outcome.why, reason: outcome.unprobed })
        return
      }
      if (outcome.sent === 1)
        ctx.note(
          `${what}: answered 429 at the first request (its limit already used up: shared with an endpoint probed before it, or by other traffic)`,
        )
      const headers = expectLimited(ctx, outcome.limited, what)
      if (outcome.limited.raw) expectOAuthError(outcome.limited.raw, 429)
      lastReset = Math.max(lastReset, headers.reset)
      verified.push(what)
    })
  }
  for (const { reason } of unprobed.filter((u) => u.why === 'unadvertised')) ctx.note(reason)
  // a deployment's limits this check used up are left to lift before the checks after it
  if (!controls && lastReset > 0) {
    const waitMs = (lastReset - Date.now() / 1000 + 1) * 1000
    if (waitMs > 0 && waitMs <= ctx.timeLeftMs() - 5_000)
      await new Promise((resolve) => setTimeout(resolve, waitMs))
    else if (waitMs > 0)
      ctx.note(
        `the limits this check reached lift at X-RateLimit-Reset ${lastReset}, later than the check may wait: checks right after it may meet a 429`,
      )
  }
  const undecided = unprobed.filter((u) => u.why !== 'unadvertised')
  const summary = (): string =>
    `${undecided.map((u) => u.reason).join('; ')}${verified.length > 0 ? ` (429 verified for ${verified.join(', ')})` : ''}`
  // a window that rolled over leaves the probe inconclusive; a budget too small is a skip
  if (undecided.some((u) => u.why === 'new window')) throw new Error(summary())
  if (undecided.length > 0) ctx.skip(summary())
  if (verified.length === 0 && unprobed.length === endpoints.length)
    ctx.skip(
      "no API endpoint advertises X-RateLimit-Limit, so there is no limit to exhaust (INTERFACE.md §8; the missing headers are RATE-04's failure)",
    )
})

/** The rateLimit checks, one per row of catalogue/rate-limit.ts. */
export const rateLimitChecks: AreaChecks<typeof catalogue> = {
  'RATE-01': RATE_01,
  'RATE-02': RATE_02,
  'RATE-03': RATE_03,
  'RATE-04': RATE_04,
  'RATE-05': RATE_05,
}
