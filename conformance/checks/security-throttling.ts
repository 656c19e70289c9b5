import { randomBytes } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import type { BrowserContext } from '@playwright/test'
import { PROBE_LIMIT, PROBE_WINDOW } from '../harness/target.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { security as catalogue } from '../catalogue/security.ts'
import { createHttp, type Http, type HttpResponse } from '../harness/http.ts'
import { expectStatus, expectThat } from '../harness/expect.ts'
import { failedLogins, type LoginAnswer, unknownUsername } from '../harness/flows.ts'
import { clientCredentialsRaw, TOKEN } from '../harness/requests.ts'
import { newWindowBegan, rateWindowOf } from '../harness/rate-window.ts'

const wrongSecret = (): string => `wrong-${randomBytes(8).toString('hex')}`

/**
 * A second HTTP client that connects from another source address, for the checks that tell a
 * client's limit from its address's. Only a loopback target can be reached from another local
 * address (127.0.0.2 beside 127.0.0.1); undefined otherwise.
 */
async function otherSource(
  ctx: CheckContext,
): Promise<{ http: Http; address: string; close(): Promise<void> } | undefined> {
  const host = new URL(ctx.target.baseUrl).hostname.replace(/^\[|\]$/g, '')
  const resolved = await lookup(host, { family: 4 }).catch(() => undefined)
  if (!resolved || !resolved.address.startsWith('127.')) return undefined
  const address = resolved.address === '127.0.0.2' ? '127.0.0.3' : '127.0.0.2'
  const http = createHttp({
    baseUrl: ctx.target.baseUrl,
    ca: ctx.target.ca,
    localAddress: address,
  })
  return {
    http,
    address,
    async close() {
      for (const e of http.exchanges) ctx.http.record(e)
      return Promise.resolve()
    },
  }
}

/** An advertised X-RateLimit-Limit, or undefined. */
const advertisedLimit = (res: HttpResponse): number | undefined => {
  const raw = res.headers.get('x-ratelimit-limit')
  return raw !== null && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : undefined
}

const SEC_01 = check({ exclusive: true }, async (ctx) => {
  // RFC 6819 §5.1.4.2.3: a limit charged to the account it names lets anyone lock that account
  // out; failed client authentications are counted against where they come from
  const client = ctx.target.clients.service ?? ctx.target.clients.main
  const attacker = await otherSource(ctx)
  if (!attacker)
    return ctx.skip(
      'the attacker must send from another source address than the real client, which the suite can only do against a loopback target',
    )
  try {
    const controls = ctx.target.controls
    controls?.setRateLimit('token', PROBE_LIMIT, PROBE_WINDOW)
    const wrong = () =>
      attacker.http.postForm(TOKEN, {
        grant_type: 'client_credentials',
        client_id: client.id,
        client_secret: wrongSecret(),
      })
    const first = await wrong()
    expectThat(
      first.status !== 200,
      `a token request with a wrong secret for ${client.id} got 200 (${first.text.slice(0, 100)})`,
    )
    const limit = advertisedLimit(first) ?? (controls ? PROBE_LIMIT : undefined)
    if (limit === undefined)
      return ctx.skip(
        'no X-RateLimit-Limit on the token endpoint, so the probe cannot size its burst',
      )
    const budget = controls ? PROBE_LIMIT + 1 : ctx.target.rateLimitBudget
    if (budget === undefined || limit + 1 > budget)
      ctx.skip(
        `exhausting a limit of ${limit} takes ${limit + 1} requests; the target config's rateLimitBudget is ${budget ?? 'unset'}`,
      )
    let sent = 1
    let limited = first.status === 429
    while (!limited && sent < limit + 1) {
      limited = (await wrong()).status === 429
      sent++
    }
    ctx.note(
      limited
        ? `the attacker at ${attacker.address} was refused with 429 after ${sent} wrong secrets`
        : `the attacker at ${attacker.address} was never refused with 429 in ${sent} wrong secrets (RATE-01 and RATE-03 judge that)`,
    )
    const real = await clientCredentialsRaw(ctx, client)
    expectThat(
      real.status !== 429,
      `client lock-out: after ${sent} token requests with a wrong secret for ${client.id} from another address (${attacker.address}), the real client with its correct secret got 429: failed authentications are charged to the client_id they name, not to their source`,
    )
    expectStatus(real, 200, `the real client ${client.id} after the attacker's wrong secrets`)
  } finally {
    await attacker.close()
  }
})

/**
 * One failed sign-in per call, each with another user name and the same password. The names
 * are shaped like a real one, so a form that checks the shape of a user name does not refuse
 * them before the credential logic (and its throttle) sees them.
 */
const sprayer = (ctx: CheckContext, context: BrowserContext, password: string) =>
  failedLogins(ctx, context, () => ({
    username: unknownUsername(ctx.target.users.primary.username),
    password,
  }))

/**
 * Against a deployment whose login answers do not say how many failed sign-ins one address may
 * make, spraying this many user names (or more: the whole rateLimitBudget is sprayed) without a
 * 429 fails the check; a smaller budget cannot tell, and the check is skipped.
 */
const SPRAY_JUDGED = 100

/**
 * The limit of failed sign-ins per address, when the login form's answers say it: their
 * X-RateLimit-Remaining dropped by one from one user name to the next (within one window), so
 * the headers count the address, not the user name, and their X-RateLimit-Limit is its limit
 * (INTERFACE.md §8). A server whose headers count each user name (as the reference server's:
 * the per-user throttle) does not say the address's limit; undefined then.
 */
function addressLimitOf(first: LoginAnswer, second: LoginAnswer): number | undefined {
  const [a, b] = [rateWindowOf((n) => first.header(n)), rateWindowOf((n) => second.header(n))]
  const limit = Number(second.header('x-ratelimit-limit') ?? NaN)
  const countsAddress =
    Number.isInteger(a.remaining) && b.remaining === a.remaining - 1 && b.reset === a.reset
  return countsAddress && Number.isInteger(limit) && limit > 0 ? limit : undefined
}

/**
 * Failed sign-ins in flight at once while spraying a deployment whose address limit is not
 * advertised, each from its own login page in its own browser context: a guesser does not wait for each answer, and a fixed
 * window is only exceeded by a spray faster than the limit allows (100 per 5 minutes is one
 * every 3 s; a password hash on a loaded server may take longer than that).
 */
const SPRAYERS = 4

const SEC_02 = check({ exclusive: true }, async (ctx) => {
  // RFC 6749 §10.10: the server MUST prevent guessing of resource owner passwords; a limit per
  // user name alone lets one address try a common password against every user
  const controls = ctx.target.controls
  controls?.setRateLimit('loginaddress', PROBE_LIMIT, PROBE_WINDOW)
  const budget = controls ? PROBE_LIMIT + 1 : (ctx.target.rateLimitBudget ?? 0)
  if (budget < 2)
    ctx.skip('the spraying probe is off because the target config sets no rateLimitBudget')
  const context = await ctx.newBrowserContext()
  const password = `Spring${new Date().getFullYear()}!`
  const spray = await sprayer(ctx, context, password)
  const refused = (at: number): void =>
    ctx.note(`spraying was refused with 429 at the ${at}th user name`)
  const started = performance.now()
  const first = await spray()
  if (first.status === 429) return refused(1)
  const second = await spray()
  if (second.status === 429) return refused(2)
  // sized from what the server says: one more than the address's advertised limit, else the
  // whole budget (the embedded server's limit is lowered for the probe)
  const addressLimit = controls ? undefined : addressLimitOf(first, second)
  const needed = controls ? PROBE_LIMIT + 1 : addressLimit !== undefined ? addressLimit + 1 : budget
  if (needed > budget)
    ctx.skip(
      `the login form's X-RateLimit-Limit says one address may fail ${String(addressLimit)} sign-ins, so a 429 takes ${needed}, more than the rateLimitBudget of ${budget}`,
    )
  // each sign-in takes what the first two took: the spray gets the time it needs (bounded)
  ctx.extendTimeout(((performance.now() - started) / 2) * needed * 2)
  // a known limit is counted in order, from one page; an unknown one is sprayed from several
  const senders = [spray]
  if (!controls && addressLimit === undefined)
    // each in a browser context of its own: a login page's interaction is the browser's, and
    // a second one in the same browser may replace the first
    for (let i = 1; i < SPRAYERS; i++)
      senders.push(await sprayer(ctx, await ctx.newBrowserContext(), password))
  let issued = 2
  let sent = 2
  // sign-ins answered since the window the answers' headers show began, and the most in one
  let counted = 2
  let most = 2
  // set by the answers (an object: the type checker does not follow assignments in callbacks)
  const seen: { rolledOver: boolean; limitedAt: number | undefined } = {
    rolledOver: false,
    limitedAt: undefined,
  }
  let previous = rateWindowOf((n) => second.header(n))
  let done = false
  // one answer: whether the spray is over
  const answered = (answer: LoginAnswer): boolean => {
    sent++
    counted++
    most = Math.max(most, counted)
    if (answer.status === 429) {
      seen.limitedAt ??= sent
      return true
    }
    // a new window of the count the headers show (newWindowBegan: Remaining up, or the same
    // with a later Reset) may have started the address's count again too
    const current = rateWindowOf((n) => answer.header(n))
    const began = newWindowBegan(previous, current)
    if (!(current.reset < previous.reset)) previous = current
    if (!began) return addressLimit !== undefined && counted >= needed
    if (addressLimit !== undefined && (seen.rolledOver || sent + needed > budget))
      throw new Error(
        `a new rate-limit window began during the spray (X-RateLimit-Remaining ${current.remaining}, X-RateLimit-Reset ${current.reset}), and the rateLimitBudget of ${budget} does not cover counting again: a missing 429 proves nothing`,
      )
    if (!seen.rolledOver)
      ctx.note('a new rate-limit window began during the spray; counted again in it')
    seen.rolledOver = true
    counted = 1
    return false
  }
  await Promise.all(
    senders.map(async (send) => {
      try {
        while (!done && issued < (addressLimit !== undefined ? budget : needed)) {
          issued++
          if (answered(await send())) done = true
        }
      } finally {
        done = true
      }
    }),
  )
  if (seen.limitedAt !== undefined) return refused(seen.limitedAt)
  if (addressLimit === undefined && !controls) {
    // the limit is not said: judged only on a spray of SPRAY_JUDGED names within one window
    if (most < SPRAY_JUDGED && seen.rolledOver)
      throw new Error(
        `no 429 in ${sent} failed sign-ins, but the login form's rate-limit window rolled over during the spray and no window saw ${SPRAY_JUDGED} of them (at most ${most}): a missing 429 proves nothing`,
      )
    if (most < SPRAY_JUDGED)
      ctx.skip(
        `no 429 within the rateLimitBudget of ${sent} sign-ins, and the login form's headers do not say the address's limit; ${SPRAY_JUDGED} are needed to tell`,
      )
  }
  expectThat(
    false,
    `password spraying is not throttled: ${sent} failed sign-ins with one password and ${sent} different user names from one address were never refused with 429${addressLimit !== undefined ? `, though X-RateLimit-Limit says ${addressLimit} (INTERFACE.md §7)` : seen.rolledOver ? ` (${most} of them within one rate-limit window)` : ''}`,
  )
})

/**
 * The security checks of throttling failed credentials: wrong client secrets do not lock the
 * real client out, and password spraying is refused (the other rows of catalogue/security.ts:
 * security-tokens.ts, security-sessions.ts, security-leaks.ts; checks/index.ts joins them).
 */
export const securityThrottlingChecks = {
  'SEC-01': SEC_01,
  'SEC-02': SEC_02,
} satisfies Partial<AreaChecks<typeof catalogue>>
