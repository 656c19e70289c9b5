import { type AreaChecks, check } from '../harness/check.ts'
import type { authorize as catalogue } from '../catalogue/authorize.ts'
import { expectEqual, expectThat } from '../harness/expect.ts'
import {
  authorize,
  codeOf,
  couldNotGetPast,
  mainClient,
  redeemCode,
  tokensFor,
  validParams,
} from '../harness/flows.ts'
import { authorizeRaw, endpointUrl } from '../harness/requests.ts'
import { verifiedAuthTime } from '../harness/jwt.ts'
import { expectErrorRedirect, NEEDS_UI_ERRORS } from '../harness/pages.ts'

const AUTHZ_14 = check(async (ctx) => {
  const base = await validParams(ctx)
  // OIDC Core §3.1.2.6: without a session prompt=none answers with an error, never a page
  const res = await authorizeRaw(ctx, { ...base, prompt: 'none' })
  expectErrorRedirect(
    res,
    base.redirect_uri,
    'prompt=none without a session',
    NEEDS_UI_ERRORS,
    base.state,
  )

  // its own browser: the subject is the session (prompt=none with and without one)
  const context = await ctx.newBrowserContext()
  codeOf(await authorize(ctx, { context }))
  const statuses: number[] = []
  context.on('response', (r) => {
    if (r.url().startsWith(endpointUrl(ctx.target, 'authorization_endpoint')))
      statuses.push(r.status())
  })
  const silent = await authorize(ctx, { context, params: { prompt: 'none' }, user: null })
  expectThat(!silent.outcome.loginShown, 'prompt=none with a session showed the login page')
  codeOf(silent)
  expectThat(
    statuses.length > 0 && statuses.every((s) => s >= 300 && s < 400),
    `prompt=none with a session: the authorization endpoint answered ${statuses.join(', ')} instead of a redirect`,
  )
})

const AUTHZ_15 = check({ exclusive: true }, async (ctx) => {
  const context = await ctx.newBrowserContext()
  const client = mainClient(ctx)
  // OIDC Core §2: auth_time is REQUIRED only when max_age was sent (or auth_time requested as
  // essential), so the first login sends a generous max_age
  const first = await tokensFor(ctx, { context, params: { max_age: '86400' } })
  const t1 = await verifiedAuthTime(ctx, first.body, 'first login (max_age=86400)')

  // OIDC Core §3.1.2.1 prompt=login: reauthenticate even with a session
  const again = await authorize(ctx, { context, params: { prompt: 'login' } })
  expectThat(
    again.outcome.loginShown,
    'prompt=login with a live session did not show the login page',
  )
  codeOf(again)

  if (ctx.target.controls) ctx.target.controls.advanceClock(2)
  else await new Promise((r) => setTimeout(r, 2100))
  // max_age=1 and a login older than that: reauthenticate
  const aged = await authorize(ctx, { context, params: { max_age: '1' } })
  expectThat(aged.outcome.loginShown, 'max_age=1, 2 s after the login, did not show the login page')
  const agedBody = await redeemCode(ctx, codeOf(aged), aged.verifier, client, 'max_age=1')
  const t3 = await verifiedAuthTime(ctx, agedBody, 'max_age=1')
  expectThat(t3 > t1, `auth_time after the new login (${t3}) is not later than the first (${t1})`)

  // a recent enough login is reused without UI
  const recent = await authorize(ctx, { context, params: { max_age: '10000' }, user: null })
  expectThat(!recent.outcome.loginShown, 'max_age=10000 right after a login showed the login page')
  const recentBody = await redeemCode(ctx, codeOf(recent), recent.verifier, client, 'max_age=10000')
  expectEqual(
    await verifiedAuthTime(ctx, recentBody, 'max_age=10000'),
    t3,
    'auth_time (max_age=10000)',
  )

  if (ctx.target.controls) ctx.target.controls.advanceClock(2)
  else await new Promise((r) => setTimeout(r, 2100))
  // OIDC Core §3.1.2.1: an exceeded max_age demands a new login, and prompt=none forbids showing
  // one: "An error is returned if an End-User is not already authenticated" (§3.1.2.6 codes)
  const silentAged = await authorize(ctx, {
    context,
    params: { prompt: 'none', max_age: '1' },
    user: null,
  })
  const silentLabel = 'prompt=none with max_age=1, 2 s after the login'
  expectThat(!silentAged.outcome.loginShown, `${silentLabel} showed the login page`)
  expectThat(silentAged.callback, `${silentLabel} did not send the browser back to the client`)
  const silent = silentAged.callback.searchParams
  expectThat(
    !silent.has('code'),
    `${silentLabel} issued a code: the login is older than max_age, so the OP MUST re-authenticate (OIDC Core §3.1.2.1), which prompt=none forbids: an error such as login_required (§3.1.2.6)`,
  )
  expectThat(
    NEEDS_UI_ERRORS.includes(silent.get('error') ?? ''),
    `${silentLabel}: expected error ${NEEDS_UI_ERRORS.join(' or ')} (OIDC Core §3.1.2.6), got ${JSON.stringify(silent.get('error'))}`,
  )
  expectEqual(silent.get('state'), silentAged.state, `state (${silentLabel})`)

  // max_age=0: any elapsed time exceeds it, so the OP re-authenticates (OIDC Core §3.1.2.1;
  // the OpenID Connect WG's resolution of its issue 993: effectively prompt=login); the login
  // above is more than a second old
  const zero = await authorize(ctx, { context, params: { max_age: '0' } })
  expectThat(
    zero.outcome.loginShown,
    'max_age=0, 2 s after the login, did not show the login page (OIDC Core §3.1.2.1: re-authenticate when the elapsed time is greater than max_age)',
  )
  const zeroBody = await redeemCode(ctx, codeOf(zero), zero.verifier, client, 'max_age=0')
  const t4 = await verifiedAuthTime(ctx, zeroBody, 'max_age=0')
  expectThat(
    t4 > t3,
    `auth_time after the max_age=0 login (${t4}) is not later than the one before (${t3})`,
  )
})

const AUTHZ_16 = check(async (ctx) => {
  // its own browser: the subject is the user's cancel, on the first page of the flow that
  // offers one: the login page's (login.cancel, else a button, submit or link "Cancel"), else a
  // deny control of a page after it (a consent page's "Cancel" or "Deny"), signed in first
  const context = await ctx.newBrowserContext()
  const cancelled = await authorize(ctx, { context, cancel: true })
  const at = cancelled.outcome.cancelledAt
  if (at === undefined) {
    const stop = cancelled.outcome.stopped
    // a flow that stopped where the suite could not go on never showed the pages after it
    if (stop)
      throw new Error(`the flow stopped before any page offered a cancel: ${couldNotGetPast(stop)}`)
    expectThat(cancelled.outcome.loginShown, 'no login page was shown')
    const cancel = ctx.target.login?.cancel
    ctx.skip(
      `no page of the flow offers a cancel control the suite recognises: the login page has no ${cancel ? `${cancel} (login.cancel)` : 'button, submit input or link labelled Cancel (another is configured as login.cancel)'}, and no page after it a control labelled Cancel, Deny, Reject, Decline or Don't allow (INFO: the user cannot deny)`,
    )
  }
  ctx.note(`cancelled at ${at}`)
  expectThat(
    cancelled.callback,
    `cancelling did not send the browser back to the client (cancelled at ${at})`,
  )
  const p = cancelled.callback.searchParams
  // RFC 6749 §4.1.2.1: access_denied, with the state, and no code
  expectEqual(p.get('error'), 'access_denied', 'error after cancel')
  expectEqual(p.get('state'), cancelled.state, 'state after cancel')
  expectThat(!p.has('code'), 'a code was issued although the user cancelled')
})

/**
 * The authorize checks of the session and the user's say: prompt=none, prompt=login, max_age
 * and the login page's cancel (the other rows of catalogue/authorize.ts:
 * authorize-validation.ts, authorize-success.ts).
 */
export const authorizeSessionChecks = {
  'AUTHZ-14': AUTHZ_14,
  'AUTHZ-15': AUTHZ_15,
  'AUTHZ-16': AUTHZ_16,
} satisfies Partial<AreaChecks<typeof catalogue>>
