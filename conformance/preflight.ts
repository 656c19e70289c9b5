import { launchBrowser, browse, clientOrigins } from './harness/browser.ts'
import { DISCOVERY, resolveEndpoints } from './harness/endpoints.ts'
import { signInByFormPost, textMatching } from './harness/form-sign-in.ts'
import { createHttp, type Http, type HttpResponse } from './harness/http.ts'
import { learnSignInOrigins } from './harness/idp-origins.ts'
import { oidc } from './harness/oidc.ts'
import type { PaceSeed, SeedSource } from './harness/pace.ts'
import { authorizeUrl, clientCredentialsRaw, JWKS, redeemRaw } from './harness/requests.ts'
import { redactKnown, redactUrl } from './harness/redact.ts'
import { settledWithin } from './harness/settled.ts'
import type { Target } from './harness/target.ts'
import { transportProblem } from './harness/transport.ts'

/**
 * The preflight (issue 32): before any check, the settings a run stands on are tried once, so
 * that a wrong one is named in seconds instead of surfacing as dozens of failed checks: the
 * discovery document and the JWKS answer, over TLS the suite trusts; the main client
 * authenticates at the token endpoint; the primary user signs in. A provider may answer a
 * probe in any way the standards allow, so only an unambiguous answer stops the run: a TLS
 * verification failure, an unreachable host, `invalid_client` (RFC 6749 §5.2) for the main
 * client's credentials, and a sign-in that lands back on the login page with an error.
 * Anything else is a note, and the run goes on (the checks judge it).
 */

/** How long one preflight request (or the sign-in) may take. */
export const PREFLIGHT_STEP_MS = 15_000

export type PreflightOutcome =
  | {
      readonly ok: true
      /** What was confirmed, one item each ("discovery", "client app authenticated …"). */
      readonly confirmed: readonly string[]
      /** What could not be told apart, and why the run goes on anyway. */
      readonly notes: readonly string[]
      readonly durationMs: number
      /**
       * How long the primary user's sign-in took, from the authorization request to the
       * redirect to the client with a code, and how it went: the run's pace until its own
       * browser rounds are measured (pace.ts `seed`). Absent when it did not reach the client.
       */
      readonly signIn?: PaceSeed
    }
  | {
      readonly ok: false
      /** `usage`: a setting is wrong (exit 2); `unreachable`: no connection (exit 3). */
      readonly exit: 'usage' | 'unreachable'
      /** One line naming the setting to fix and what the target answered. */
      readonly message: string
      readonly confirmed: readonly string[]
      readonly notes: readonly string[]
      readonly durationMs: number
    }

export interface PreflightOptions {
  /** Where the settings came from (the --config file), named in messages. */
  readonly configFile?: string | undefined
  /** Bound of each request and of the sign-in (default PREFLIGHT_STEP_MS). */
  readonly stepTimeoutMs?: number
  /** Whether the sign-in may fall back to the browser when a form post does not sign in. */
  readonly browser?: boolean
}

/** An unambiguous answer: the run stops. */
class Stop extends Error {
  readonly exit: 'usage' | 'unreachable'
  constructor(exit: 'usage' | 'unreachable', message: string) {
    super(message)
    this.exit = exit
  }
}

/** How long the browser sign-in waits for each page or navigation. */
const BROWSER_WAIT_MS = 8_000

/** Words with which a login page says the credentials were refused. */
const REFUSED = /\b(incorrect|invalid|wrong|failed|error|not recogni[sz]ed|unknown|denied)\b/i

type Json = Record<string, unknown>
const field = (res: HttpResponse, name: string): string | undefined => {
  const value = (res.json as Json | undefined)?.[name]
  return typeof value === 'string' ? value : undefined
}

/** "HTTP 401 error=invalid_client (client authentication failed)" */
const answer = (res: HttpResponse): string => {
  const error = field(res, 'error')
  const description = field(res, 'error_description')
  return `HTTP ${res.status}${error ? ` error=${error}` : ''}${description ? ` (${description.slice(0, 200)})` : ''}`
}

/** Tries the target's settings; never throws for what the target answers. */
export async function preflight(
  target: Target,
  options: PreflightOptions = {},
): Promise<PreflightOutcome> {
  const started = performance.now()
  const ms = options.stepTimeoutMs ?? PREFLIGHT_STEP_MS
  const where = options.configFile ? ` in ${options.configFile}` : ''
  const confirmed: string[] = []
  const notes: string[] = []
  const elapsed = (): number => Math.round(performance.now() - started)

  /**
   * One bounded request (or exchange) with the target; a failed connection stops the run, and
   * so does no answer at all to the first request. Once the target has answered, a slow step
   * is no verdict on a setting (a loaded machine, a slow login): the preflight ends with a note.
   */
  const bounded = async <T>(
    what: string,
    send: (http: Http) => Promise<T>,
    first = false,
  ): Promise<T> => {
    const signal = AbortSignal.timeout(ms)
    try {
      return await send(createHttp(at, signal))
    } catch (err) {
      const problem = transportProblem(err)
      if (problem)
        throw new Stop(
          problem.kind === 'tls' ? 'usage' : 'unreachable',
          `${what}: ${problem.message}`,
        )
      if (signal.aborted && first)
        throw new Stop('unreachable', `${what}: the target did not answer within ${ms / 1000} s`)
      if (signal.aborted) throw new Error(`${what}: no answer within ${ms / 1000} s`)
      throw err
    }
  }

  let at: Target = target
  let signIn: PaceSeed | undefined
  try {
    const discovery = await bounded(
      `GET ${target.baseUrl}${DISCOVERY}`,
      (http) => http.get(DISCOVERY),
      true,
    )
    const doc = discovery.json
    if (discovery.status === 200 && doc !== null && typeof doc === 'object' && !Array.isArray(doc))
      confirmed.push('discovery')
    else
      notes.push(
        `the discovery document answered HTTP ${discovery.status}${discovery.status === 200 ? ', not a JSON object' : ''}; the run goes on (the DISC checks judge it)`,
      )
    // the endpoints as the checks will use them (endpoints.ts)
    at = { ...target, endpoints: await resolveEndpoints(target, ms) }
    const jwksUrl = at.endpoints?.urls.jwks_uri ?? JWKS
    const jwks = await bounded(`GET ${jwksUrl}`, (http) => http.get(JWKS))
    const keys = (jwks.json as Json | undefined)?.keys
    if (jwks.status === 200 && Array.isArray(keys) && keys.length > 0)
      confirmed.push(`JWKS (${keys.length} ${keys.length === 1 ? 'key' : 'keys'})`)
    else
      notes.push(
        `the JWKS at ${jwksUrl} answered HTTP ${jwks.status}${jwks.status === 200 ? ' without keys' : ''}; the run goes on (the JWKS checks judge it)`,
      )
    await clientAuthenticates(at, bounded, where, confirmed, notes)
    signIn = await userSignsIn(at, bounded, where, confirmed, notes, ms, options.browser ?? true)
  } catch (err) {
    // an IdP's error_description or page text could echo a credential: none is printed
    if (err instanceof Stop)
      return {
        ok: false,
        exit: err.exit,
        message: redactKnown(err.message),
        confirmed,
        notes: notes.map(redactKnown),
        durationMs: elapsed(),
      }
    // a fault of the preflight itself decides nothing about the target: the run goes on
    notes.push(`the preflight could not finish (${(err as Error).message}); the run goes on`)
  }
  return {
    ok: true,
    confirmed,
    notes: notes.map(redactKnown),
    durationMs: elapsed(),
    ...(signIn ? { signIn } : {}),
  }
}

type Bounded = <T>(what: string, send: (http: Http) => Promise<T>, first?: boolean) => Promise<T>

/**
 * The main client authenticates: a client_credentials token (the main client has the grant,
 * docs/INTERFACE.md §2.9 and target.ts), else a token request for a code that was never
 * issued, which an authenticated client gets refused with invalid_grant and a client whose
 * credentials are wrong with invalid_client (RFC 6749 §5.2).
 */
async function clientAuthenticates(
  target: Target,
  bounded: Bounded,
  where: string,
  confirmed: string[],
  notes: string[],
): Promise<void> {
  const client = target.clients.main
  const refused = (res: HttpResponse, how: string): Stop =>
    new Stop(
      'usage',
      `clients.main.secret (or clients.main.id "${client.id}")${where} was refused: ${how} answered ${answer(res)}`,
    )
  const cc = await bounded('the client_credentials request', (http) =>
    clientCredentialsRaw({ http }, client, client.scope),
  )
  if (field(cc, 'error') === 'invalid_client') throw refused(cc, 'a client_credentials request')
  if (cc.status === 200 && field(cc, 'access_token')) {
    confirmed.push(`client ${client.id} authenticated (client_credentials)`)
    return
  }
  const code = oidc.randomState()
  const bogus = await bounded('the token request for a code never issued', (http) =>
    redeemRaw(
      { http },
      {
        code,
        verifier: oidc.randomPKCECodeVerifier(),
        client,
        redirectUri: client.redirectUri,
      },
    ),
  )
  const error = field(bogus, 'error')
  if (error === 'invalid_client') throw refused(bogus, 'a token request for a code never issued')
  if (error === 'invalid_grant') {
    confirmed.push(
      `client ${client.id} authenticated (a code never issued was refused as invalid_grant)`,
    )
    return
  }
  notes.push(
    `whether client ${client.id} authenticates could not be told: client_credentials answered ${answer(cc)}, a code never issued ${answer(bogus)}; the run goes on`,
  )
}

/** The sentence of a page's text that says the sign-in was refused. */
function refusal(text: string): string | undefined {
  const said = text.split(/(?<=[.!?])\s+/).find((s) => REFUSED.test(s) && s.length < 200)
  return said?.trim()
}

/**
 * The primary user signs in: by posting the login form over HTTP (form-sign-in.ts), else, for
 * a login with configured steps or one the form post does not complete, in the browser. The
 * user's credentials are refused when the login page comes back after they were sent, with a
 * 4xx status or words of refusal; any other end is a note. Returns how long a sign-in that
 * reached the client with a code took, and how it went.
 */
async function userSignsIn(
  target: Target,
  bounded: Bounded,
  where: string,
  confirmed: string[],
  notes: string[],
  ms: number,
  mayUseBrowser: boolean,
): Promise<PaceSeed | undefined> {
  const client = target.clients.main
  const user = target.users.primary
  if (!client.redirectUri) {
    notes.push(
      `clients.main has no redirectUri${where}: the sign-in of users.primary was not tried (the checks that sign in are skipped)`,
    )
    return undefined
  }
  const url = authorizeUrl({ target }, [
    ['response_type', 'code'],
    ['client_id', client.id],
    ['redirect_uri', client.redirectUri],
    ['scope', 'openid'],
    ['state', oidc.randomState()],
    ['nonce', oidc.randomNonce()],
    ['code_challenge', await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier())],
    ['code_challenge_method', 'S256'],
  ])
  const wrongPassword = (status: number | undefined, said: string): Stop =>
    new Stop(
      'usage',
      `users.primary.password (or users.primary.username "${user.username}")${where} was refused: the login page came back after the sign-in${status === undefined ? '' : ` (HTTP ${status})`}${said ? `: "${said}"` : ''}`,
    )
  /** The sign-in reached the client after `took` ms (timed from its first request). */
  const signedIn = (callback: string, from: SeedSource, took: number): PaceSeed | undefined => {
    const back = new URL(callback)
    if (back.searchParams.has('code') && !back.searchParams.has('error')) {
      confirmed.push(
        `${user.username} signed in (${from === 'browser' ? 'browser' : 'login form post'})`,
      )
      return { ms: took, from }
    }
    notes.push(
      `the sign-in of ${user.username} ended at the client with error=${back.searchParams.get('error') ?? '(none)'}; the run goes on`,
    )
    return undefined
  }
  let why: string
  if (!target.login?.steps) {
    const began = performance.now()
    const posted = await bounded('the sign-in', (http) =>
      signInByFormPost(http, url, user, clientOrigins(target)),
    )
    if (posted.kind === 'signed-in')
      return signedIn(posted.callback, 'form post', performance.now() - began)
    const again = posted.loginAgain
    if (again && again.status !== 429) {
      const said = textMatching(again.text, REFUSED)
      if (again.status >= 400 || said) throw wrongPassword(again.status, said ?? '')
    }
    why = posted.why
  } else why = 'the configuration gives login.steps'
  if (!mayUseBrowser) {
    notes.push(`the sign-in of ${user.username} was not completed (${why}); the run goes on`)
    return undefined
  }
  // a login driven by scripts or configured steps: the browser, as the checks sign in
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined
  try {
    browser = await launchBrowser(target)
    const context = await browser.newContext()
    // a script login that refuses the password shows it in place: no navigation comes, and
    // each wait for one lasts this long (a slower provider gets a note, never a stop)
    // the round is timed as browser.ts `browse` times the run's (pace.ts)
    const began = performance.now()
    const outcome = await browse(context, target, url, createHttp(target), {
      user,
      timeoutMs: Math.min(ms, BROWSER_WAIT_MS),
    })
    const took = performance.now() - began
    // where the IdP sent the browser on the way to the client (a login app on an origin of its
    // own) is the IdP's for the run (idp-origins.ts)
    learnSignInOrigins(target, outcome.origins ?? [], outcome.callback, clientOrigins(target))
    if (outcome.callback) return signedIn(outcome.callback, 'browser', took)
    const stop = outcome.stopped
    if (stop?.kind === 'login-again' && stop.status !== 429) {
      const said = refusal(stop.text)
      if ((stop.status ?? 0) >= 400 || said) throw wrongPassword(stop.status, said ?? '')
    }
    notes.push(
      `the sign-in of ${user.username} did not reach the client (${stop ? `${stop.kind} at ${stop.address ?? stop.url}: "${stop.title}"` : redactUrl(outcome.page.url())}); the run goes on (--login-dry-run shows each step)`,
    )
  } catch (err) {
    if (err instanceof Stop) throw err
    const problem = transportProblem(err)
    if (problem)
      throw new Stop(
        problem.kind === 'tls' ? 'usage' : 'unreachable',
        `the sign-in: ${problem.message}`,
      )
    notes.push(
      `the sign-in of ${user.username} in the browser could not be driven (${(err as Error).message.split('\n')[0] ?? ''}); the run goes on`,
    )
  } finally {
    if (browser) await settledWithin(browser.close(), 10_000)
  }
  return undefined
}
