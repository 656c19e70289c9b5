import { setTimeout as sleep } from 'node:timers/promises'
import { decodeJwt } from 'jose'
import type { CookieJar } from 'tough-cookie'
import type { Page } from '@playwright/test'
import { authorizationIsSubject, type CheckContext } from './check.ts'
import {
  browse,
  clientOrigins,
  rememberSessionUser,
  type BrowserOutcome,
  type BrowserStop,
} from './browser.ts'
import { giveSession, signInByFormPost } from './form-sign-in.ts'
import { idpOrigins, learnSignInOrigins } from './idp-origins.ts'
import { jarOf } from './session.ts'
import { redactUrl } from './redact.ts'
import { throttleOf } from './throttle.ts'
import { failedSignIn, onFirstLoginPage } from './failed-sign-in.ts'
import {
  about,
  expectControl,
  expectJsonObject,
  expectOAuthError,
  expectStatus,
  expectThat,
  show,
} from './expect.ts'
import type { HttpResponse } from './http.ts'
import { oidc, oidcConfig } from './oidc.ts'
import { clientCredentialsRaw, redeemRaw, refreshRaw } from './requests.ts'
import type { TargetClient, TargetUser } from './target.ts'
import type { RequirementId } from '../requirements.ts'
import {
  ACCESS_TOKEN_EXPIRY_TOLERANCE_S,
  DEFAULT_ACCESS_TOKEN_LIFETIME_S,
  expiredTokenPartWhy,
  MAX_ACCESS_TOKEN_WAIT_S,
} from './needs.ts'

type Json = Record<string, unknown>

/** The result of driving an authorization request through the browser. */
export interface AuthorizeResult {
  readonly client: TargetClient
  readonly redirectUri: string
  readonly config: oidc.Configuration
  readonly verifier: string
  readonly challenge: string
  readonly state: string
  readonly nonce: string | undefined
  /** The authorization request URL. */
  readonly url: string
  /** The URL the IdP sent the browser to at the client, if any. */
  readonly callback: URL | undefined
  /**
   * How the flow ended. When the code came from a replay of the user's IdP session over HTTP
   * (`via: 'session'`) there is no page: reading `page` then throws (a harness error, so the
   * check is inconclusive, never judged). Requests that need the page (a check's own context,
   * `user: null`, `cancel`, `screenshot`, interaction parameters) always go through the browser.
   */
  readonly outcome: BrowserOutcome
  /**
   * Whether the code came through the browser, from a replay of the IdP session, or from a
   * sign-in by form post over HTTP (`byFormPost`).
   */
  readonly via: 'browser' | 'session' | 'form-post'
  /**
   * The authorization is a step before the check's subject (a check whose subject is not the
   * authorization endpoint): a flow that never reached the client is inconclusive (`codeOf`).
   */
  readonly beforeSubject?: boolean
}

export interface AuthorizeOptions {
  readonly client?: TargetClient
  /** The scope parameter (default openid); null sends none. */
  readonly scope?: string | null
  /** Extra or overriding authorization request parameters. */
  readonly params?: Record<string, string>
  /** The user to sign in as (default: the primary user); null to stop at the login form. */
  readonly user?: TargetUser | null
  readonly cancel?: boolean
  /** Browser context to reuse (keeps the IdP session cookie). */
  readonly context?: Awaited<ReturnType<CheckContext['newBrowserContext']>>
  /** Keep a screenshot of the login page as evidence. */
  readonly screenshot?: boolean
  readonly nonce?: boolean
  /**
   * The check needs the scope's offline_access honoured (a refresh token): the request carries
   * prompt=consent, without which OIDC Core §11 lets the OP ignore offline_access. Without it,
   * offline_access is asked like any scope and prompt is not sent. The request may still be
   * replayed with the user's IdP session, whose replay answers a one-form consent page.
   */
  readonly offline?: boolean
  /**
   * A new session whose subject is what follows the sign-in (a session to log out, session
   * identifiers to sample), not the login page: the login form is posted over HTTP
   * (form-sign-in.ts) and the session's cookies go into `context`, when one is given. A login
   * with configured steps, or one the form post does not complete, goes through the browser.
   */
  readonly byFormPost?: boolean
  /**
   * The check misuses what this authorization gives on purpose (replays its code or a rotated
   * refresh token, presents them with wrong secrets or as another client, revokes them): the
   * code comes from a new session of its own (a form post over HTTP, as `byFormPost`, else the
   * browser in a new context), never from the run's shared session, so that a provider that
   * defends itself by revoking the grant or the session (RFC 9700 §4.14.2, RFC 6749 §4.1.2)
   * touches only this check's tokens, whatever order the checks run in.
   */
  readonly ownSession?: boolean
}

type BrowserContext = Awaited<ReturnType<CheckContext['newBrowserContext']>>

/** The main client, which every target configuration names. */
export const mainClient = (ctx: Pick<CheckContext, 'target'>): TargetClient =>
  ctx.target.clients.main

export function redirectUriOf(ctx: Pick<CheckContext, 'skip'>, client: TargetClient): string {
  if (!client.redirectUri)
    ctx.skip(`client ${client.id} has no redirectUri in the target configuration`)
  return client.redirectUri
}

/**
 * Builds an authorization request with openid-client (PKCE S256, state, nonce), opens it in a
 * fresh browser context and signs in through the login page.
 */
export async function authorize(
  ctx: CheckContext,
  options: AuthorizeOptions = {},
): Promise<AuthorizeResult> {
  const client = options.client ?? mainClient(ctx)
  const redirectUri = redirectUriOf(ctx, client)
  const config = await oidcConfig(ctx, client)
  const verifier = oidc.randomPKCECodeVerifier()
  const challenge = await oidc.calculatePKCECodeChallenge(verifier)
  const state = oidc.randomState()
  // a null scope sends none (INTERFACE.md §4.1: scope is optional)
  const scope = options.scope === null ? '' : (options.scope ?? 'openid')
  // OIDC Core §3.1.2.1: nonce is an OpenID Connect parameter; providers rightly refuse it in
  // a request without the openid scope
  const nonce =
    options.nonce === false || !scope.split(' ').includes('openid') ? undefined : oidc.randomNonce()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    ...(options.scope === null ? {} : { scope }),
    state,
    ...(nonce ? { nonce } : {}),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    // OIDC Core §11: an OP MUST ignore offline_access unless prompt contains consent (or other
    // conditions permit it), so a check that needs offline access honoured asks the way the
    // standard says; any other request asks for no interaction it does not need (a consent
    // page the suite then cannot answer ends the check inconclusive, saying it asked: codeOf)
    ...(options.offline && scope.split(' ').includes('offline_access')
      ? { prompt: 'consent' }
      : {}),
    ...options.params,
  })
  const user = options.user === null ? undefined : (options.user ?? ctx.target.users.primary)
  // a request with the check's own parameters (a challenge, a prompt) is part of its subject
  const beforeSubject =
    ctx.id !== undefined && !authorizationIsSubject(ctx.id) && options.params === undefined
  const base = {
    client,
    redirectUri,
    config,
    verifier,
    challenge,
    state,
    nonce,
    url: url.toString(),
  }
  const sessions = replayable(ctx, options) && user ? ctx.sessions : undefined
  let establish: ((context: BrowserContext | undefined) => Promise<void>) | undefined
  /** The session whose replay stopped at a page it could not read (maybe a script's login). */
  let unread: CookieJar | undefined
  if (sessions && user) {
    // one wait for a sign-in in flight, one replay; anything else goes to the browser
    const jar = await sessions.current(user)
    if (jar) {
      const replayed = await sessions.replay(
        ctx.http,
        jar,
        url.toString(),
        clientOrigins(ctx.target),
        LOGIN_FORM,
        ctx.target.interactions,
        idpOrigins(ctx.target),
      )
      if (replayed.kind === 'callback') {
        ctx.note(
          `sign-in: authorization code from ${user.username}'s IdP session (HTTP replay${replayed.answered.length > 0 ? `, answering ${replayed.answered.join(', ')}` : ''})`,
        )
        return {
          ...base,
          callback: new URL(replayed.callback),
          outcome: {
            callback: replayed.callback,
            get page(): Page {
              throw new Error('no browser page: the code came from a replay of the IdP session')
            },
            loginShown: false,
            loginPostStatus: undefined,
          },
          via: 'session',
          beforeSubject,
        }
      }
      if (replayed.kind === 'login') {
        await sessions.forget(user, jar)
        ctx.note(`sign-in: ${user.username}'s IdP session was gone; signing in again`)
      } else {
        ctx.note(`sign-in: the session replay did not reach the client (${replayed.why})`)
        if (replayed.atPage && !options.context) unread = jar
      }
    }
    establish = sessions.claim(user)
  }
  const newSession = options.byFormPost === true || options.ownSession === true
  if (newSession && user && !options.cancel && !options.screenshot && !ctx.target.login?.steps) {
    // the context's cookies go with the requests, as the browser's would: a session that still
    // lives there sends the request to the client without a login form
    const held = options.context ? await jarOf(options.context) : undefined
    const posted = await signInByFormPost(
      ctx.http,
      url.toString(),
      user,
      clientOrigins(ctx.target),
      held,
    )
    if (posted.kind === 'signed-in') {
      if (options.context) {
        await giveSession(options.context, posted.jar)
        rememberSessionUser(options.context, user)
      }
      ctx.note(
        `sign-in: ${user.username}'s login form posted over HTTP (a new session${options.ownSession ? ' of its own: the check misuses its credentials on purpose' : ''})`,
      )
      return {
        ...base,
        callback: new URL(posted.callback),
        outcome: {
          callback: posted.callback,
          get page(): Page {
            throw new Error('no browser page: the sign-in was a form post over HTTP')
          },
          loginShown: true,
          loginPostStatus: undefined,
        },
        via: 'form-post',
        beforeSubject,
      }
    }
    ctx.note(`sign-in: through the browser, since the form post did not sign in (${posted.why})`)
  }
  // a browser that goes on with the shared session holds it (SharedSessions.hold): another
  // check answering an interaction on the same session at once would leave one of the two on
  // the provider's error page, a verdict that depends on what runs beside it
  // (the time spent waiting for it is not the check's: ctx.waitingFor)
  const holding = unread && sessions ? sessions.hold(unread) : undefined
  const held = holding && (await (ctx.waitingFor ? ctx.waitingFor(holding) : holding))
  if (unread && !held) {
    ctx.note(
      `sign-in: ${user?.username ?? ''}'s IdP session was in use by other checks for too long; signing in on a session of its own`,
    )
    unread = undefined
  }
  let outcome: BrowserOutcome
  let context: BrowserContext
  try {
    // the sign-in that establishes the user's session, or holds it, skips the browser pool:
    // checks that hold a place in it may be waiting for this session
    context =
      options.context ??
      (await ctx.newBrowserContext(establish || held ? { outsidePool: true } : undefined))
    // the browser goes on with the session's cookies, as the user's browser would: a login page
    // there (one a script renders, which the replay cannot see) means the session has ended
    if (held) {
      await giveSession(context, held.jar)
      if (user) rememberSessionUser(context, user)
    }
    outcome = await browse(context, ctx.target, url.toString(), ctx.http, {
      ...(user ? { user } : {}),
      // the sign-in's answer gets what is left of the check's time, not Playwright's fixed 30 s:
      // at the reference server's default hash cost on a loaded machine it took up to 60 s
      signInTimeoutMs: Math.max(30_000, ctx.timeLeftMs()),
      // a sign-in waits out the run's sign-in throttle, and retries once past one it meets,
      // within the check's time (throttle.ts)
      timeLeftMs: () => ctx.timeLeftMs(),
      ...(options.cancel ? { cancel: true } : {}),
      onLoginPage: async (page) => {
        if (options.screenshot) await ctx.screenshot('login page', page, { fullPage: true })
      },
    })
    // the check's time spent waiting out the IdP's sign-in throttle is said in its report
    noteThrottleWaits(ctx, outcome)
    // a plain sign-in (no parameter of the check's own) that reached the client with a code
    // shows where the IdP itself sends the browser: a login app on another origin is the IdP's
    if (!options.params || Object.keys(options.params).length === 0)
      learnSignInOrigins(
        ctx.target,
        outcome.origins ?? [],
        outcome.callback,
        clientOrigins(ctx.target),
      )
    // the cookies the browser reached the client with are the session from then on (the
    // provider may have given it a new identifier on the way); a sign-in is handled below
    if (held && outcome.callback && !outcome.loginShown)
      held.release(await jarOf(context).catch(() => undefined))
  } finally {
    held?.release()
  }
  if (!outcome.callback && outcome.stopped && stuckAtStop(outcome.stopped))
    await ctx.screenshot(
      `the page the suite could not get past: ${outcome.stopped.address ?? outcome.stopped.url}`,
      outcome.page,
      {
        fullPage: true,
      },
    )
  if (unread && sessions && user && outcome.loginShown && outcome.callback) {
    // dropped, and this sign-in is the user's session from now on: once, in this request
    await sessions.forget(user, unread)
    establish = sessions.claim(user)
    ctx.note(
      `sign-in: ${user.username}'s IdP session had ended (given its cookies, the browser met the login page); dropped and signed in again`,
    )
  }
  if (establish) {
    // the session is shared only when this sign-in went through the login page to the client
    await establish(outcome.loginShown && outcome.callback ? context : undefined)
    if (outcome.loginShown && outcome.callback)
      ctx.note(
        `sign-in: through the login page in the browser (full PKCE flow); ${user?.username ?? ''}'s session is shared with later checks`,
      )
  }
  if (!establish && ctx.sessions)
    ctx.note(
      `sign-in: through the browser (${options.ownSession ? 'a session of its own: the check misuses its credentials on purpose' : options.context || !replayable(ctx, options) ? 'the check drives the browser itself' : held ? `on ${user?.username ?? ''}'s shared IdP session, which it held while it answered the pages the replay left to it` : 'no reusable session'})`,
    )
  // a flow the IdP throttled (or was unavailable for) judges nothing, for whatever the caller
  // meant to read from it (the code, the login page, a silent answer): inconclusive at once
  if (!outcome.callback)
    expectNotThrottled(outcome, `${redirectUri} (${whereLeftBrowser(outcome)})`)
  return {
    client,
    redirectUri,
    config,
    verifier,
    challenge,
    state,
    nonce,
    url: url.toString(),
    callback: outcome.callback ? new URL(outcome.callback) : undefined,
    outcome,
    via: 'browser',
    beforeSubject,
  }
}

/** A login form in an HTML page the replay received: the session was not honoured. */
const LOGIN_FORM = /<input\b[^>]*\btype\s*=\s*["']?password\b/i

/**
 * Parameters that make the request about the login interaction itself (a forced or aged
 * login, a hint, a silent request): such a request always goes through the browser.
 */
const INTERACTION_PARAMS = ['prompt', 'max_age', 'login_hint', 'id_token_hint', 'acr_values']

/**
 * Whether an authorization request may take its code from the user's IdP session: not when the
 * check brings its own browser context (it tests the session or the page), stops at or cancels
 * the form, wants the page as evidence, or asks for an interaction by its parameters.
 */
function replayable(ctx: CheckContext, options: AuthorizeOptions): boolean {
  if (!ctx.sessions) return false
  if (options.context || options.user === null || options.cancel || options.screenshot) return false
  // a new session is asked for
  if (options.byFormPost || options.ownSession) return false
  return !Object.keys(options.params ?? {}).some((k) => INTERACTION_PARAMS.includes(k))
}

/**
 * Where the browser stopped at a page the suite could not answer (an unrecognised page, a loop,
 * the step bound): the suite's limit, not the provider's verdict. An error page of the
 * provider, or the login page shown again after the sign-in, is not among them.
 */
export function stuckAt(result: AuthorizeResult): BrowserStop | undefined {
  if (result.via !== 'browser' || result.callback) return undefined
  const stop = result.outcome.stopped
  return stop && stuckAtStop(stop) ? stop : undefined
}

const stuckAtStop = (stop: BrowserStop): boolean =>
  stop.kind === 'unrecognised' ||
  stop.kind === 'unsettled' ||
  stop.kind === 'loop' ||
  stop.kind === 'limit'

/**
 * "the suite could not get past <title> at <url>": one message (and so one cause in the
 * report) for every check that stopped on the same page, with what the suite had asked for.
 */
export function couldNotGetPast(stop: BrowserStop, url?: string): string {
  const why =
    stop.kind === 'loop'
      ? ': the same page came back after each answer'
      : stop.kind === 'limit'
        ? ': the provider asked for more pages than the suite answers in one flow'
        : stop.kind === 'unsettled'
          ? ': after the sign-in the page still showed a login form but never settled (requests in flight, or its text still changing) within the watch, so whether the IdP showed its login page again could not be told'
          : ': no configured interaction or built-in recogniser (login, consent, continue, account chooser) matched it'
  const prompt = url ? new URL(url).searchParams.get('prompt') : null
  const asked = prompt
    ? ` (the suite's own request asked for prompt=${prompt}${prompt.includes('consent') ? ', which offline_access needs (OIDC Core §11): a consent page must be answerable, so configure it under interactions' : ''})`
    : ''
  return `the suite could not get past "${stop.title}" at ${stop.address ?? stop.url}${why}${asked}`
}

/** Throws the inconclusive "could not get past" when the flow stopped at an unanswered page. */
export function expectGotPast(result: AuthorizeResult): void {
  const stop = stuckAt(result)
  if (stop) throw new Error(couldNotGetPast(stop, result.url))
}

/**
 * The flow reached the client. A check whose subject comes after the authorization (the token
 * endpoint, the tokens) and never got there is inconclusive: it was stuck before its subject,
 * on whatever page (the provider's error page included; AUTHZ-* judge the authorization
 * endpoint). For a check whose subject is the authorization, it is a failure.
 */
function expectCallback(result: AuthorizeResult): asserts result is AuthorizeResult & {
  callback: URL
} {
  // a page the suite could not answer is its own limit: inconclusive, never the IdP's failure
  expectGotPast(result)
  if (result.callback) return
  const where = `${result.redirectUri} (${whereLeft(result)})`
  if (result.via === 'browser') expectNotThrottled(result.outcome, where)
  if (result.beforeSubject)
    throw new Error(
      `stuck before the check's subject: the authorization step never reached ${where}; the authorization endpoint is judged by the AUTHZ-* checks`,
    )
  expectThat(false, `the IdP never redirected to ${where}`)
}

/**
 * Throws the inconclusive "throttled or unavailable" when a browser flow's sign-in was
 * throttled (its credential request answered 429, or 503 with Retry-After, and the flow could
 * not wait it out: browser.ts `throttled`) or the flow stopped on the IdP's 429 or 503 page (its
 * error page, or its login page served again with that status): a throttled or unavailable IdP
 * (the sign-in budget of this address used up by other checks, a hashing queue full) judges
 * nothing about the step, whatever the check's subject, never a failure (RFC 6585 §4; RFC 9110
 * §15.6.4). `where` names where the flow was going.
 */
export function expectNotThrottled(
  outcome: Pick<BrowserOutcome, 'stopped' | 'throttled'>,
  where: string,
): void {
  if (outcome.throttled)
    throw new Error(
      `the sign-in on the way to ${where} was throttled: ${outcome.throttled.message}`,
    )
  const stop = outcome.stopped
  if (!stop || (stop.kind !== 'error-page' && stop.kind !== 'login-again')) return
  if (stop.status === 429 || stop.status === 503)
    throw new Error(
      `the IdP answered HTTP ${String(stop.status)} on the way to ${where}: a throttled or unavailable sign-in judges nothing`,
    )
}

/** The code of a successful authorization, or a check failure saying what came back instead. */
export function codeOf(result: AuthorizeResult): string {
  expectCallback(result)
  const error = result.callback.searchParams.get('error')
  expectThat(
    !error,
    `the authorization failed with error=${error ?? ''} (${result.callback.searchParams.get('error_description') ?? ''})`,
  )
  const code = result.callback.searchParams.get('code')
  expectThat(code, `no code in the redirect to ${result.redirectUri}`)
  return code
}

/** Where a flow that did not reach the client was left, for messages. */
export function whereLeft(result: AuthorizeResult): string {
  if (result.via === 'session') return 'the replay of the IdP session ended elsewhere'
  if (result.via === 'form-post') return 'the sign-in by form post ended elsewhere'
  return whereLeftBrowser(result.outcome)
}

/** The check's time a browser flow spent waiting out the IdP's sign-in throttle, as notes. */
export function noteThrottleWaits(
  ctx: Pick<CheckContext, 'note'>,
  outcome: Pick<BrowserOutcome, 'throttleWaits'>,
): void {
  for (const wait of outcome.throttleWaits ?? []) ctx.note(`sign-in: ${wait}`)
}

/** Where a browser flow that did not reach the client was left, for messages. */
export function whereLeftBrowser(outcome: BrowserOutcome): string {
  const at = `page at ${redactUrl(outcome.page.url())}`
  // a throttled sign-in's page (its login form again, its error page) is the throttle's answer
  if (outcome.throttled) return at
  const stop = outcome.stopped
  if (stop?.kind === 'error-page')
    return `${at}: an error page of the IdP${stop.status === undefined ? '' : ` (HTTP ${stop.status})`}, "${stop.title}": ${stop.text.slice(0, 160)}`
  if (stop?.kind === 'login-again')
    return `${at}: the IdP showed its login page again after the sign-in: ${stop.text.slice(0, 160)}`
  return at
}

/** Redeems through openid-client, which checks state, nonce and the response's shape. */
export async function redeemWithClient(
  result: AuthorizeResult,
): Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> {
  expectCallback(result)
  return oidc.authorizationCodeGrant(result.config, result.callback, {
    pkceCodeVerifier: result.verifier,
    expectedState: result.state,
    ...(result.nonce ? { expectedNonce: result.nonce } : {}),
    idTokenExpected: false,
  })
}

/**
 * Redeems a code obtained outside `authorize` (a hand-built or POSTed request) for `client`
 * with a raw request; returns the 200 JSON body.
 */
export async function redeemCode(
  ctx: CheckContext,
  code: string,
  verifier: string,
  client: TargetClient,
  what: string,
): Promise<Record<string, unknown>> {
  const res = await redeemRaw(ctx, {
    code,
    verifier,
    client,
    redirectUri: redirectUriOf(ctx, client),
  })
  expectStatus(res, 200, `${what}: token response`)
  return res.json as Record<string, unknown>
}

/** Signs in and redeems the code with a raw request; returns the parsed 200 body. */
export async function tokensFor(
  ctx: CheckContext,
  options: AuthorizeOptions = {},
): Promise<{ body: Record<string, unknown>; res: HttpResponse; auth: AuthorizeResult }> {
  const auth = await authorize(ctx, options)
  const res = await redeem(ctx, auth)
  expectStatus(res, 200, 'token response')
  return { body: expectJsonObject(res, 'token response'), res, auth }
}

/** Redeems the code of a successful authorization with a raw request, as the flow's client. */
export function redeem(
  ctx: Pick<CheckContext, 'http'>,
  auth: AuthorizeResult,
): Promise<HttpResponse> {
  return redeemRaw(ctx, {
    code: codeOf(auth),
    verifier: auth.verifier,
    client: auth.client,
    redirectUri: auth.redirectUri,
  })
}

/** A fresh PKCE pair (S256). */
export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = oidc.randomPKCECodeVerifier()
  return { verifier, challenge: await oidc.calculatePKCECodeChallenge(verifier) }
}

// a type, not an interface, so that it stays assignable to a parameter record
export type AuthorizeParams = {
  client_id: string
  redirect_uri: string
  response_type: string
  scope: string
  state: string
  code_challenge: string
  code_challenge_method: string
}

/** The parameters of a valid authorization request (INTERFACE.md §4.1), in the usual order. */
export async function validParams(
  ctx: Pick<CheckContext, 'target' | 'skip'>,
  client: TargetClient = mainClient(ctx),
): Promise<AuthorizeParams> {
  const { challenge } = await pkcePair()
  return {
    client_id: client.id,
    redirect_uri: redirectUriOf(ctx, client),
    response_type: 'code',
    scope: 'openid',
    state: oidc.randomState(),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }
}

/** The tokens of one authorization code redemption. */
export interface TokenSet {
  readonly accessToken: string
  readonly refreshToken: string | undefined
  readonly idToken: string | undefined
  readonly scope: string
  readonly body: Record<string, unknown>
  readonly auth: AuthorizeResult
}

/**
 * Signs in (through the browser or a replayed session), redeems the code and returns the
 * tokens. The browser's `submitLogin` only fills in and submits the login page.
 */
export async function signIn(ctx: CheckContext, options: AuthorizeOptions): Promise<TokenSet> {
  const { body, auth } = await tokensFor(ctx, options)
  expectThat(
    typeof body.access_token === 'string' && body.access_token !== '',
    `token response without an access_token: ${JSON.stringify(Object.keys(body))}`,
  )
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
  return {
    accessToken: body.access_token,
    refreshToken: str(body.refresh_token),
    idToken: str(body.id_token),
    // RFC 6749 §5.1: an omitted scope means the requested one
    scope: str(body.scope) ?? options.scope ?? 'openid',
    body,
    auth,
  }
}

/** The refresh token of a token set, or a failure saying it is missing. */
export function refreshTokenOf(set: TokenSet): string {
  expectThat(
    set.refreshToken,
    `no refresh_token in the token response for scope "${set.scope}" (offline_access granted)`,
  )
  return set.refreshToken
}

export function idTokenOf(set: TokenSet): string {
  expectThat(set.idToken, `no id_token in the token response for scope "${set.scope}"`)
  return set.idToken
}

/**
 * The client_credentials client: the service client when configured, else the main client,
 * which has all three grants (TargetConfig), as other checks do.
 */
export function serviceClient(ctx: Pick<CheckContext, 'target' | 'skip'>): TargetClient {
  return ctx.target.clients.service ?? ctx.target.clients.main
}

/**
 * The scope a client_credentials request asks for: the client's configured `scope`, never a
 * name guessed from the reference server's fixtures; undefined without one, and the request
 * goes without scope (RFC 6749 §3.3: the server "MUST either process the request using a
 * pre-defined default value or fail the request indicating an invalid scope").
 */
export function clientCredentialsScope(client: TargetClient): string | undefined {
  return client.scope ? client.scope : undefined
}

/**
 * Skips the check when a client_credentials request without scope was refused with
 * invalid_scope (RFC 6749 §3.3 allows that) and the configuration names no scope to ask for.
 */
export function skipUnlessScoped(
  ctx: Pick<CheckContext, 'skip'>,
  client: TargetClient,
  res: HttpResponse,
): void {
  if (
    clientCredentialsScope(client) === undefined &&
    res.status === 400 &&
    (res.json as Json | undefined)?.error === 'invalid_scope'
  )
    ctx.skip(
      `client_credentials without scope was refused with invalid_scope (RFC 6749 §3.3 allows it) and the target configuration gives client ${client.id} no scope to ask for (clients.*.scope)`,
    )
}

/** The second client for cross-client checks, or the check is skipped. */
export function otherClient(ctx: Pick<CheckContext, 'target' | 'skip'>): TargetClient {
  const client = ctx.target.clients.other
  if (!client) ctx.skip('the target configuration names no second (other) client')
  return client
}

/** An access token for the credential checks: the service client's, else the main client's. */
export async function someAccessToken(
  ctx: CheckContext,
  options: Pick<AuthorizeOptions, 'ownSession'> = {},
): Promise<{ token: string; client: TargetClient }> {
  const service = ctx.target.clients.service
  if (service) {
    const res = await clientCredentialsRaw(ctx, service)
    expectStatus(res, 200, 'client_credentials token for the check')
    return { token: String(expectJsonObject(res, 'token').access_token), client: service }
  }
  const set = await signIn(ctx, { scope: 'openid', ...options })
  return { token: set.accessToken, client: ctx.target.clients.main }
}

/**
 * ARCHITECTURE.md (C1): a Basic header instead of the body is a SHOULD-level note; either way
 * a 4xx must be 401 invalid_client with a challenge (RFC 6749 §5.2).
 */
export async function probeBasic(
  ctx: CheckContext,
  path: string,
  token: string,
  client: TargetClient,
): Promise<void> {
  const basic = Buffer.from(
    `${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`,
  ).toString('base64')
  const res = await ctx.http.request(path, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}` },
    form: { token },
  })
  if (res.status === 200) {
    ctx.note(`${path}: client_secret_basic is accepted (RFC 6749 §2.3.1)`)
    return
  }
  const what = `${path} with an Authorization: Basic header instead of the body`
  about(what, () => expectOAuthError(res, 401, 'invalid_client'))
  expectThat(
    res.headers.get('www-authenticate'),
    `${what}: 401 without WWW-Authenticate (RFC 6749 §5.2)`,
  )
  ctx.note(`${path}: client_secret_basic is refused (INTERFACE.md allows client_secret_post only)`)
}

/** An access token to present past its expiry, as its token response gave it. */
export interface IssuedToken {
  readonly accessToken: string
  /** The token response's expires_in. */
  readonly expiresIn: unknown
  /** Date.now() when the token response was received (the token was issued before). */
  readonly receivedAt: number
}

/**
 * Brings an access token past its expiry for the rest of the check, and returns whether it did;
 * else notes why that part (`what`) is not judged and returns false. On the embedded server its
 * clock is moved (the harness puts it back afterwards). Against a deployment, for the checks
 * that wait (harness/needs.ts) and an accessTokenLifetime of at most MAX_ACCESS_TOKEN_WAIT_S, it
 * waits until the token's own expiry, as the later of its `exp` (the target's clock) and
 * `receivedAt` + expires_in (this machine's clock: a target whose clock lags is waited for too),
 * plus ACCESS_TOKEN_EXPIRY_TOLERANCE_S, no longer; the check's limit is extended to allow it.
 */
export async function expireTokens(
  ctx: CheckContext,
  id: RequirementId,
  token: IssuedToken,
  what: string,
): Promise<boolean> {
  const controls = ctx.target.controls
  const expiresIn = typeof token.expiresIn === 'number' ? token.expiresIn : undefined
  if (controls) {
    controls.advanceClock((expiresIn ?? DEFAULT_ACCESS_TOKEN_LIFETIME_S) + 1)
    return true
  }
  const why = expiredTokenPartWhy(id, ctx.target)
  if (why !== undefined) {
    ctx.note(`${what}: not judged against this deployment: ${why}`)
    return false
  }
  const ends: number[] = []
  if (expiresIn !== undefined) ends.push(token.receivedAt + expiresIn * 1000)
  const exp = jwtExp(token.accessToken)
  if (exp !== undefined) ends.push(exp * 1000)
  if (ends.length === 0) {
    ctx.note(
      `${what}: not judged: the token response gave no expires_in and the token is not a JWT with exp, so its expiry is unknown`,
    )
    return false
  }
  const untilMs = Math.max(...ends) + ACCESS_TOKEN_EXPIRY_TOLERANCE_S * 1000
  const waitMs = Math.max(0, untilMs - Date.now())
  const limitS = MAX_ACCESS_TOKEN_WAIT_S + ACCESS_TOKEN_EXPIRY_TOLERANCE_S
  if (waitMs > limitS * 1000) {
    ctx.note(
      `${what}: not judged: the token expires ${Math.round(waitMs / 1000)} s from now (with ${ACCESS_TOKEN_EXPIRY_TOLERANCE_S} s of clock tolerance), longer than a check waits (${limitS} s), though accessTokenLifetime is ${String(ctx.target.accessTokenLifetime)} s (CODE-01 compares expires_in with it)`,
    )
    return false
  }
  // the wait, and a margin for the requests that follow it
  ctx.extendTimeout(waitMs + 30_000)
  if (ctx.timeLeftMs() < waitMs + 10_000) {
    ctx.note(
      `${what}: not judged: waiting ${Math.round(waitMs / 1000)} s for the token to expire does not fit in the check's time limit (--check-timeout)`,
    )
    return false
  }
  await sleep(waitMs)
  ctx.note(
    `${what}: presented ${Math.round((Date.now() - Math.max(...ends)) / 1000)} s after its expiry (waited ${Math.round(waitMs / 1000)} s; accessTokenLifetime ${String(ctx.target.accessTokenLifetime)} s)`,
  )
  return true
}

/** A JWT's exp claim, or undefined for a token that is not a JWT with a numeric exp. */
function jwtExp(token: string): number | undefined {
  try {
    const { exp } = decodeJwt(token)
    return typeof exp === 'number' ? exp : undefined
  } catch {
    return undefined
  }
}

/** Polls `probe` until it holds or `ms` have passed; returns whether it held. */
export async function within(ms: number, probe: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + ms
  for (;;) {
    if (await probe()) return true
    if (performance.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * A client_credentials token response (a client that may use the grant), for checks whose
 * subject is something else: asked with the client's configured scope, else without one. A
 * refusal leaves them nothing to judge (inconclusive); the grant itself is CC-01's subject.
 */
export async function clientCredentials(
  ctx: Pick<CheckContext, 'http'>,
  client: TargetClient,
): Promise<Json> {
  const scope = clientCredentialsScope(client)
  const res = await clientCredentialsRaw(ctx, client, scope)
  const asked = scope === undefined ? 'without scope' : `for scope "${scope}"`
  const error = (res.json as Json | undefined)?.error
  expectControl(
    res.status === 200,
    `client_credentials ${asked} for ${client.id} was answered HTTP ${res.status}${typeof error === 'string' ? ` ${error}` : ''}, so there is no token to examine (CC-01 judges the grant)${scope === undefined ? '; a server may refuse a request without scope (RFC 6749 §3.3): give the client a scope in the target configuration (clients.*.scope)' : ''}`,
  )
  return expectJsonObject(res, `client_credentials token response for ${client.id}`)
}

/** A refresh_token grant; the parsed 200 body. */
export async function refresh(
  ctx: Pick<CheckContext, 'http' | 'target'>,
  client: TargetClient,
  refreshToken: unknown,
): Promise<Json> {
  expectThat(
    typeof refreshToken === 'string' && refreshToken.length > 0,
    `the authorization_code grant with offline_access returned no refresh_token (INTERFACE.md §2.2), got ${show(refreshToken)}`,
  )
  const res = await refreshRaw(ctx, refreshToken, { client })
  expectStatus(res, 200, 'refresh_token token response')
  return expectJsonObject(res, 'refresh_token token response')
}

/**
 * The refresh token to present next after a refresh answered `body`: the new one when the
 * server rotated it (RFC 6749 §6: the client MUST discard the old one then), else `current`.
 * Presenting a rotated-out token again is a reuse a server may answer by revoking the grant and
 * the session (RFC 9700 §4.14.2), which only a check about reuse may provoke.
 */
export function nextRefreshToken(body: unknown, current: string): string {
  const issued = (body as { refresh_token?: unknown } | null | undefined)?.refresh_token
  return typeof issued === 'string' && issued !== '' ? issued : current
}

/** 128 characters with the reserved characters, a space and UTF-8 (RFC 6749 App. A.5: VSCHAR). */
export function awkwardState(): string {
  const head = 'a+b/c=d%20e&f g?h#i;j:k@l€ü漢😀'
  const filler = oidc.randomState().replace(/[^A-Za-z0-9]/g, 'x')
  // counted in code points, so the emoji is one character
  const chars = Array.from(head)
  while (chars.length < 128) chars.push(...Array.from(filler))
  return chars.slice(0, 128).join('')
}

/** One answer to a sign-in posted in the browser: its status and its headers. */
export interface LoginAnswer {
  readonly status: number
  header(name: string): string | null
}

/**
 * Opens the login page in `context` and returns a sender that signs in with the credentials
 * `credentials()` gives (a new pair each time: the throttling and spraying probes) and resolves
 * with the provider's answer to the request that carried the password (the form's post, or a
 * script's fetch/XHR call), or to the last request posted when the provider refused an earlier
 * step (failedSignIn). Steps that only follow a success (a one-time code after the password) are
 * not waited for. The next attempt starts on the same page when it shows the sign-in's first
 * page again, else from a fresh authorization request (a login over several pages leaves the
 * browser on its password page after a refusal).
 */
export async function failedLogins(
  ctx: CheckContext,
  context: BrowserContext,
  credentials: () => TargetUser,
): Promise<() => Promise<LoginAnswer>> {
  const loginPage = async (): Promise<Page> => {
    const { outcome } = await authorize(ctx, { context, user: null })
    expectThat(outcome.loginShown, 'the authorization request did not show the login page')
    // the page's own waits (a click's navigation, a fill) get what is left of the check's time
    // too, not Playwright's fixed 30 s: a loaded server's password hash may take longer
    outcome.page.setDefaultTimeout(Math.max(30_000, ctx.timeLeftMs()))
    return outcome.page
  }
  let page = await loginPage()
  let fresh = true
  return async () => {
    if (!fresh && !(await onFirstLoginPage(page, ctx.target.login, idpOrigins(ctx.target)))) {
      if (!page.isClosed()) await page.close().catch(() => undefined)
      page = await loginPage()
    }
    fresh = false
    page.setDefaultTimeout(Math.max(30_000, ctx.timeLeftMs()))
    // bounded by what is left of the check's time (at least 10 s), not by a fixed 10 s: a
    // password hash on a loaded machine may take longer, and the check's limit ends it anyway
    const attempt = await failedSignIn(
      page,
      credentials(),
      ctx.target.login,
      Math.max(10_000, ctx.timeLeftMs()),
      idpOrigins(ctx.target),
    )
    const res = attempt.response
    const headers: Record<string, string> = await res.allHeaders().catch(() => ({}))
    // the run counts its own failed sign-ins, so a throttle a real sign-in meets later is named
    // for what it is; a 429 here is not taught to the run: these probes trip limits on purpose,
    // often per user name (RFC 6749 §10.10), which the real users' sign-ins need not meet (the
    // embedded suite's RATE-04/05 then waited 95 s for nothing); a real sign-in that meets a
    // throttle records it (browser.ts)
    throttleOf(context)?.failedSignIn()
    await attempt.end()
    return { status: res.status(), header: (name) => headers[name] ?? null }
  }
}

/**
 * A username no account has, shaped like the real one (an e-mail address stays one, a plain
 * name stays letters and digits), so that a form validating the username's shape answers it
 * through the same credential logic as a wrong password.
 */
export function unknownUsername(real: string): string {
  const suffix = oidc
    .randomState()
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 8)
    .toLowerCase()
  const at = real.lastIndexOf('@')
  if (at > 0) return `nobody${suffix}${real.slice(at)}`
  return `nobody${suffix}`.slice(0, Math.max(real.length + 8, 12))
}
