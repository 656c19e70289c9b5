import { rootCertificates } from 'node:tls'
import { Agent } from 'undici'
import { rememberSecret } from './redact.ts'
import type { Endpoints } from './endpoints.ts'

/** A client the suite acts as. */
export interface TargetClient {
  readonly id: string
  readonly secret: string
  readonly redirectUri: string | undefined
  readonly postLogoutRedirectUri: string | undefined
  /**
   * Space-separated scopes the client may ask for with client_credentials (the CC-* checks
   * ask for them; without, those checks skip with why).
   */
  readonly scope?: string | undefined
  /**
   * A scope another application is registered for and this client is not (the main client's
   * only): AUTHZ-11 asks for it and expects it never granted. Without it, that sub-case is
   * skipped with why: whether a scope is another application's is the deployment's to say.
   */
  readonly foreignScope?: string | undefined
}

export interface TargetUser {
  readonly username: string
  readonly password: string
  /**
   * Other names the provider shows this user by on an account chooser (an e-mail address, a
   * display name), besides the user name: the built-in chooser picks the control naming one.
   */
  readonly email?: string | undefined
  readonly name?: string | undefined
}

/**
 * One declarative login step. Selectors are Playwright selectors; in `value`, `{username}` and
 * `{password}` stand for the signing-in user's credentials (never written to logs or reports);
 * in a selector, `{username}` alone (browser.ts stepSelector).
 */
export type LoginStep =
  | { readonly goto: string }
  | { readonly fill: string; readonly value: string }
  | { readonly click: string }
  | { readonly press: string; readonly key: string }
  | { readonly waitFor: string }

/**
 * A step of an interaction: a login step, optionally "if shown": an optional step whose
 * selector is not on the page within `optionalWaitMs` (default 1000 ms at the run's pace) is skipped, not failed.
 * `frame` (not on `goto`): a selector of the iframe the step's selector is looked for in (a
 * login widget in an iframe), or the selectors of the iframes to go through, outermost first (a
 * widget in a frame inside a frame).
 */
export type InteractionStep = LoginStep & {
  readonly optional?: boolean | undefined
  readonly frame?: string | readonly string[] | undefined
}

/** What an interaction does in the flow (how the driver and the dry run name and treat it). */
export type InteractionKind = 'login' | 'consent' | 'continue' | 'account' | 'logout' | 'other'

/**
 * A page of the provider the browser may meet between the authorization request and the
 * client's redirect URI (or a logout and its post-logout URI): recognised by its URL and/or a
 * selector, answered by steps. The first configured interaction that matches the page wins;
 * unconfigured pages fall back to the built-in recognisers (a visible password form, an
 * approve-like button of a consent or "continue" page).
 */
export interface InteractionConfig {
  /** A name for logs and reports ("consent", "mfa", "account chooser"). */
  readonly name: string
  /** What the page is (default other); a `login` interaction is signed in at like `login`. */
  readonly kind?: InteractionKind | undefined
  /** A regular expression (JavaScript syntax) the page's full URL must match. */
  readonly url?: string | undefined
  /** A Playwright selector that must be visible on the page. */
  readonly detect?: string | undefined
  /** Steps that answer the page, in order. */
  readonly steps: readonly InteractionStep[]
  /** How long one step may take, in ms (default 15000). */
  readonly stepTimeoutMs?: number | undefined
  /** How long an optional step's selector is waited for before the step is skipped (1000). */
  readonly optionalWaitMs?: number | undefined
}

/**
 * How to sign in at the target's login page (the login interaction). Each part defaults to the usual username/password
 * form: a page with a password field, filled and submitted.
 */
export interface LoginConfig {
  /** A selector that appears only on the login page (default `input[type=password]`). */
  readonly detect?: string | undefined
  /** Steps that sign the user in, run on the login page in order (any may be optional). */
  readonly steps?: readonly InteractionStep[] | undefined
  /** The control that cancels the login (the access_denied checks). */
  readonly cancel?: string | undefined
  /** How long one step may take, in ms (default 15000). */
  readonly stepTimeoutMs?: number | undefined
  /** How long an optional step's selector is waited for before the step is skipped (1000). */
  readonly optionalWaitMs?: number | undefined
}

/**
 * What the suite knows about a deployment: the `--config FILE` JSON, or the embedded
 * reference server's fixtures. Optional members unlock checks; their absence skips those
 * checks with the reason.
 */
export interface TargetConfig {
  /** The issuer / base URL, without trailing slash. */
  readonly baseUrl: string
  /** PEM of the CA to trust in addition to the public roots. */
  readonly ca?: string | undefined
  readonly clients: {
    /** conformance-client: all three grants, redirect and post-logout URIs registered. */
    readonly main: TargetClient
    /** A second client sharing the main client's redirect URI (cross-client checks). */
    readonly other?: TargetClient | undefined
    /** A client whose redirect URI differs from main's (AUTHZ-04). */
    readonly third?: TargetClient | undefined
    /** A client_credentials-only client (default: the main client, which has the grant). */
    readonly service?: TargetClient | undefined
    /**
     * A client registered without the client_credentials grant, with a default scope that a
     * client_credentials token could carry: its client_credentials request differs from a
     * valid one in the grant type alone (TOK-06, unauthorized_client).
     */
    readonly codeOnly?: TargetClient | undefined
  }
  readonly users: {
    readonly primary: TargetUser
    readonly secondary?: TargetUser | undefined
  }
  /** How to sign in (default: detect and fill the usual username/password form). */
  readonly login?: LoginConfig | undefined
  /**
   * The provider's other pages (consent, "continue", account chooser, MFA, logout
   * confirmation) and how to answer them; common ones are recognised without configuration.
   */
  readonly interactions?: readonly InteractionConfig[] | undefined
  /**
   * A plain-HTTP URL at which to probe the deployment (TLS-01). Default: the base URL's own
   * host and port with the http scheme.
   */
  readonly plainHttpUrl?: string | undefined
  /**
   * The most requests a rate-limit probe may send (RATE-*). Unset, the probes that must
   * exceed a limit to see a 429 are skipped, so nobody hammers a production deployment by
   * accident; set, they run only when the advertised X-RateLimit-Limit + 1 fits in it.
   */
  readonly rateLimitBudget?: number | undefined
  /**
   * The refresh-token lifetime in seconds (RT-11). The embedded server's clock is moved past
   * it; on another deployment RT-11 waits it out when it is short enough, else is skipped.
   */
  readonly refreshTokenLifetime?: number | undefined
  /**
   * The access-token lifetime in seconds (the reference server's ACCESS_TOKEN_TTL; the token
   * response's expires_in, which CODE-01 compares with it; absent, the interface's default of
   * 3600). The embedded server's clock is moved past it; on another deployment UI-07 and
   * INTRO-03 wait a token's `exp` out when it is at most 150 s, else leave that part not judged.
   */
  readonly accessTokenLifetime?: number | undefined
  /**
   * The login-session lifetime in seconds (SEC-11; the reference server's SESSION_TTL). The
   * embedded server's clock is moved past it; on another deployment SEC-11 waits it out when it
   * is short enough, else is skipped.
   */
  readonly sessionLifetime?: number | undefined
  /**
   * Other origins that are the IdP's own (a login app the authorization endpoint hands the
   * browser to): a redirect there stays at the IdP (idp-origins.ts). The base URL's origin,
   * the discovery document's endpoint origins and the origins of the suite's own successful
   * browser sign-ins need not be listed.
   */
  readonly idpOrigins?: readonly string[] | undefined
}

/** A resolved target: its config plus a dispatcher that trusts its CA with TLS checks on. */
export interface Target extends TargetConfig {
  readonly dispatcher: Agent
  /** Whether this is the in-process reference server. */
  readonly embedded: boolean
  /**
   * The endpoints' URLs as the target's discovery document advertises them, read once per run
   * (endpoints.ts); absent, requests go to the interface's paths.
   */
  readonly endpoints?: Endpoints | undefined
  /**
   * Controls only the embedded server offers: moving its clock lets expiry checks run without
   * waiting. Checks that need them are skipped (with the reason) on other targets.
   */
  readonly controls?: TargetControls | undefined
}

export interface TargetControls {
  /** Moves the server's clock forward. */
  advanceClock(seconds: number): void
  /**
   * Lowers one rate-limit group's budget so a 429 probe stays bounded (RATE-*); the group
   * names are the server's (token, introspect, revoke, userinfo, login, loginaddress, public).
   */
  setRateLimit(group: string, limit: number, windowSeconds: number): void
  /** Puts the clock and the rate limits back (done after every check). */
  reset(): void
}

/** The limit a rate-limit probe lowers the embedded server's group to: a 429 after four requests. */
export const PROBE_LIMIT = 3
/** An odd window length, so a probe's counters never share a window with other checks' traffic. */
export const PROBE_WINDOW = 97

/**
 * Builds the undici dispatcher the harness fetches with. TLS verification is never disabled:
 * a given CA is trusted explicitly, beside the public roots (`connect.ca` replaces them).
 */
export function resolveTarget(
  config: TargetConfig,
  embedded = false,
  controls?: TargetControls,
): Target {
  const dispatcher = new Agent({
    connect: config.ca ? { ca: [...rootCertificates, config.ca] } : {},
    keepAliveTimeout: 1000,
  })
  // the configuration's secrets are redacted from every transcript and message of the run
  for (const client of Object.values<TargetClient | undefined>(config.clients))
    rememberSecret(client?.secret)
  for (const user of Object.values<TargetUser | undefined>(config.users))
    rememberSecret(user?.password)
  return { ...config, baseUrl: config.baseUrl, dispatcher, embedded, controls }
}

/** The default plain-HTTP probe URL of TLS-01. */
export function plainHttpUrl(target: TargetConfig): string {
  if (target.plainHttpUrl) return target.plainHttpUrl
  // the target's own host and port over http: where a plain-HTTP request to the deployment
  // would land (URL keeps an explicit port when the scheme changes; 443 stays explicit)
  const u = new URL(target.baseUrl)
  const port = u.port || '443'
  return `http://${u.hostname.includes(':') ? `[${u.hostname}]` : u.hostname}:${port}${u.pathname.replace(/\/$/, '')}`
}

/**
 * Node's fetch with an undici dispatcher (its `dispatcher` option is not in the DOM types).
 * `globalThis.fetch` is looked up per call, so the self-test's msw handlers see every request.
 */
export function fetchVia(
  dispatcher: Agent,
  input: string | URL | Request,
  init: RequestInit = {},
): Promise<Response> {
  return globalThis.fetch(input, { ...init, dispatcher } as RequestInit)
}
