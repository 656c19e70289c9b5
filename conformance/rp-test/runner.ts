import { spawn } from 'node:child_process'
import type { Agent } from 'undici'
import {
  FOUNDATION_PLAN,
  RP_ALIASES,
  RP_CONTROL,
  RP_TESTS,
  type RpTest,
} from '../../server/rp/catalogue.ts'
import type { RpEvent } from '../../server/rp/observations.ts'
import type { CheckResult, Verdict } from '../harness/types.ts'
import { FINDING_KINDS } from '../../server/explain/findings.ts'

/** What the integrator's sign-in gets to know, as environment variables. */
export interface SignInEnv {
  /** The test issuer: discover it at `${RP_TEST_ISSUER}/.well-known/openid-configuration`. */
  readonly RP_TEST_ISSUER: string
  readonly RP_TEST_ID: string
  /** `refuse` for a negative test, `sign-in` for a positive one (for logs; judge nothing by it). */
  readonly RP_TEST_EXPECT: 'refuse' | 'sign-in'
  /** Where a page of the client may report that it shows a signed-in user (GET or POST). */
  readonly RP_TEST_SIGNED_IN_URL: string
  /**
   * Which sign-in of the test this is (`1`, or `2` for the second of a test of two, after which
   * the issuer has changed something the first showed the client), of `RP_TEST_SIGN_INS`.
   */
  readonly RP_TEST_SIGN_IN: string
  readonly RP_TEST_SIGN_INS: string
  /**
   * `1` for the logout test (rp-init-logout): after the sign-in, log out at the issuer's
   * end_session_endpoint and exit 0 once the app handled the redirect back; `0` otherwise. A
   * command that ignores it is "not exercised" on that test, nothing worse.
   */
  readonly RP_TEST_LOGOUT: '0' | '1'
  /**
   * `1` for the refresh test (oidcc-client-test-refresh-token): after the sign-in, redeem the
   * refresh token (grant_type=refresh_token) and call user-info with the new access token, and
   * exit 0 once that answered; `0` otherwise. A command that ignores it is "not exercised" on
   * that test, nothing worse.
   */
  readonly RP_TEST_REFRESH: '0' | '1'
  readonly [name: string]: string
}

/**
 * What the integrator's sign-in reports (the contract of `rp-test --run`): it signed in (the
 * command exited 0), it refused (it printed the line {@link REFUSED_LINE} on stdout, whatever
 * its exit code), or it could not run (anything else: another exit code, a crash, a signal, a
 * timeout). The last is inconclusive, never a refusal: a driver that breaks for its own reasons
 * must not pass the negative tests.
 */
export type SignInOutcome = 'signed-in' | 'refused' | 'could-not-run'

/** The stdout line by which a sign-in command reports that the client refused. */
export const REFUSED_LINE = 'RP_TEST_RESULT=refused'

export interface SignInResult {
  readonly outcome: SignInOutcome
  /** The command's exit code, when it was a command that exited. */
  readonly exitCode?: number
  readonly output: string
  /** For `could-not-run`: why, in one line. */
  readonly why?: string
}

/** Runs one sign-in and reports its outcome. */
export type SignIn = (env: SignInEnv) => Promise<SignInResult>

/** Whether a command's stdout reports a refusal: a line that is exactly {@link REFUSED_LINE}. */
export const reportsRefusal = (stdout: string): boolean =>
  stdout.split(/\r?\n/).some((line) => line.trim() === REFUSED_LINE)

export interface RpRunOptions {
  /** The reference server's base URL (the test issuers are at `${baseUrl}/rp/{id}`). */
  readonly baseUrl: string
  /** Fetches the observations, trusting the server's CA. */
  readonly dispatcher: Agent
  readonly signIn: SignIn
  /** Test IDs to run (default all); the control always runs first. */
  readonly only?: readonly string[]
  /** Extra variables for every sign-in (client, user, CA file). */
  readonly env?: Readonly<Record<string, string>>
  readonly onResult?: (result: CheckResult) => void
}

const fetchJson = async (url: string, dispatcher: Agent): Promise<unknown> => {
  const res = await globalThis.fetch(url, { dispatcher, cache: 'no-store' } as RequestInit)
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`)
  return res.json()
}

/** Whether the server has the RP test issuers; resolves to a reason when it does not. */
export async function probeRpIssuers(baseUrl: string, dispatcher: Agent): Promise<true | string> {
  try {
    const body = (await fetchJson(`${baseUrl}/rp`, dispatcher)) as { tests?: unknown }
    return Array.isArray(body.tests)
      ? true
      : `${baseUrl}/rp does not list RP tests (is RP_TESTS off?)`
  } catch (err) {
    return (err as Error).message
  }
}

async function eventsSince(
  baseUrl: string,
  test: string,
  since: number,
  dispatcher: Agent,
): Promise<{ events: RpEvent[]; last: number }> {
  return (await fetchJson(`${baseUrl}/rp/${test}/observations?since=${since}`, dispatcher)) as {
    events: RpEvent[]
    last: number
  }
}

const NOT_MET: Record<RpTest['level'], Verdict> = { MUST: 'fail', SHOULD: 'warn', MAY: 'info' }

const times = (n: number): string => (n > 1 ? ` ×${n}` : '')

/**
 * What the test issuer saw, in plain words and nothing more: the discovery document fetched,
 * the sign-in started, the JWKS
 * fetched, a code redeemed, a refresh token redeemed, user-info answered (and how often to a
 * refreshed access token), a request refused by the issuer, the uses of what a fault tainted and
 * the pages marked signed-in.
 */
export function observed(events: readonly RpEvent[]): string {
  const n = (kind: RpEvent['kind']) => events.filter((e) => e.kind === kind).length
  const toRefreshed = events.filter(
    (e) => e.kind === 'userinfo' && e.grant === 'refresh_token',
  ).length
  const parts = [
    ...(n('discovery') ? [`discovery fetched${times(n('discovery'))}`] : []),
    n('authorize') ? `sign-in started${times(n('authorize'))}` : 'no sign-in started',
    n('jwks') ? `JWKS fetched${times(n('jwks'))}` : 'JWKS never fetched',
    ...(n('key-rotated') ? [`signing key replaced${times(n('key-rotated'))}`] : []),
    ...(n('token-issued') ? [`code redeemed${times(n('token-issued'))}`] : []),
    ...(n('refreshed') ? [`refresh token redeemed${times(n('refreshed'))}`] : []),
    ...(n('userinfo')
      ? [
          `user-info answered${times(n('userinfo'))}${toRefreshed ? ` (${toRefreshed} to a refreshed access token)` : ''}`,
        ]
      : []),
    ...(n('logout') ? [`logout called${times(n('logout'))}`] : []),
    ...(n('issuer-refused') ? [`issuer refused a request${times(n('issuer-refused'))}`] : []),
    ...(n('tainted-use') ? [`tainted token or code used${times(n('tainted-use'))}`] : []),
    ...(n('signed-in') ? [`page marked signed-in${times(n('signed-in'))}`] : []),
  ]
  return `the issuer saw: ${parts.join(', ')}`
}

/** Why a sign-in failed, from the issuer's refusals (with the explain finding's fix when known). */
export function refusalCauses(events: readonly RpEvent[]): string | undefined {
  const causes = [
    ...new Set(
      events
        .filter((e) => e.kind === 'issuer-refused')
        .map((e) => {
          const finding = e.finding
            ? (FINDING_KINDS as Record<string, { advice: string } | undefined>)[e.finding]
            : undefined
          return `${e.detail ?? 'a request was refused'}${finding ? ` (${e.finding}: ${finding.advice})` : ''}`
        }),
    ),
  ]
  return causes.length ? `the test issuer refused your client: ${causes.join('; ')}` : undefined
}

const reported = (run: Pick<SignInResult, 'outcome' | 'exitCode'>): string =>
  run.outcome === 'signed-in'
    ? 'the sign-in command reported signed in (exit 0)'
    : run.outcome === 'refused'
      ? `the sign-in command reported refused (${REFUSED_LINE}${run.exitCode === undefined ? '' : `, exit ${run.exitCode}`})`
      : `the sign-in command could not run${run.exitCode === undefined ? '' : ` (exit ${run.exitCode})`}`

/**
 * The verdict of one test from what the sign-in reported and what the test issuer saw (pure).
 * A negative test passes when the sign-in reported a refusal and nothing the fault tainted was
 * used; a positive one when it signed in, redeemed a code here and did what the fault needs (a
 * JWKS fetch for a key test, a correct logout for the logout test). A sign-in that could not run
 * is ERROR (inconclusive), unless the issuer saw the client use what a fault tainted or send a
 * logout that carried the wrong things; a fault the client never reached because of what it does
 * (no nonce sent, no JWKS fetched, no user-info call, no discovery, no logout) is "not exercised"
 * (skip). Only the discovery test counts a sign-in never started as a refusal, and only when
 * the issuer served its document and the command reported refused.
 */
export function judge(
  test: RpTest,
  run: Pick<SignInResult, 'outcome' | 'exitCode' | 'why'>,
  events: readonly RpEvent[],
  controlPassed: boolean,
): { verdict: Verdict; message: string } {
  const kinds = new Set(events.map((e) => e.kind))
  const seen = observed(events)
  const uses = events.filter((e) => e.kind === 'tainted-use' || e.kind === 'signed-in')
  const delivered = kinds.has('fault-delivered')
  const cannotRun = (): { verdict: Verdict; message: string } => ({
    verdict: 'error',
    message: `inconclusive: the sign-in could not run (${run.why ?? reported(run)}), so it says nothing about your client; ${seen}. The command must exit 0 when signed in and print ${REFUSED_LINE} when the client refused`,
  })
  // the logout test: a logout request that carried the wrong things fails on the issuer's
  // record, whatever the command reported (the issuer answered it with an error page)
  const logouts = events.filter((e) => e.kind === 'logout')
  if (test.exercisedBy === 'logout') {
    const wrong = logouts.map(logoutFault).find((fault) => fault !== undefined)
    if (wrong)
      return {
        verdict: NOT_MET[test.level],
        message: `your client called the end_session_endpoint ${wrong}. Fix: ${test.fix}. See ${test.reference}; ${seen}`,
      }
  }
  // the refresh test: a refresh_token grant the issuer refused fails on the issuer's record,
  // whatever the command reported (the Foundation's module fails a wrong refresh request too)
  const refreshes = events.filter((e) => e.kind === 'refreshed')
  if (test.exercisedBy === 'refresh') {
    const refused = [
      ...new Set(
        events
          .filter((e) => e.kind === 'issuer-refused' && e.grant === 'refresh_token')
          .map((e) => e.detail ?? 'a refresh_token grant was refused'),
      ),
    ]
    if (refused.length)
      return {
        verdict: NOT_MET[test.level],
        message: `the issuer refused your client's refresh_token grant: ${refused.join('; ')}. Fix: ${test.fix}. See ${test.reference}; ${seen}`,
      }
  }
  // evidence outweighs a broken driver: a use of what a fault tainted is an acceptance
  if (run.outcome === 'could-not-run' && !(test.kind === 'negative' && delivered && uses.length))
    return cannotRun()
  // a client that refuses a faulty discovery document never starts a sign-in: that is its
  // refusal, but only when the issuer saw the document fetched and the command reported refused
  const refusedAtDiscovery =
    test.stage === 'discovery' && delivered && kinds.has('discovery') && run.outcome === 'refused'
  if (!kinds.has('authorize') && !refusedAtDiscovery)
    return {
      verdict: 'error',
      message: `inconclusive: ${reported(run)} but never started a sign-in at this test issuer; point the client at RP_TEST_ISSUER (it differs per test)`,
    }
  if (test.kind === 'positive') {
    if (test.backFromLogout && logouts.length)
      return judgeBackFromLogout(test, run, logouts, delivered, seen)
    if (run.outcome !== 'signed-in' && test.exercisedBy === 'refresh' && refreshes.length)
      return {
        verdict: NOT_MET[test.level],
        message: `your client did not finish after a correct refresh (${reported(run)}): the refresh_token grant answered a new access token. It should ${test.fix} (${test.reference}); ${seen}`,
      }
    if (run.outcome !== 'signed-in' && test.exercisedBy === 'logout' && logouts.length)
      return {
        verdict: NOT_MET[test.level],
        message: `your client refused the redirect back from a correct logout (${reported(run)}): ${logoutEcho(logouts)}. It should accept the redirect to its post_logout_redirect_uri when the state is the one it sent (${test.reference}); ${seen}`,
      }
    if (run.outcome !== 'signed-in') {
      const cause = refusalCauses(events)
      return {
        verdict: NOT_MET[test.level],
        message:
          test.id === RP_CONTROL
            ? `your client did not sign in at an issuer that makes no fault (${reported(run)}): ${cause ?? `${seen}; the issuer recorded no refusal, so the cause is in your client (see its output in the notes)`}. Until the control signs in, no refusal in the other tests proves anything`
            : `your client did not sign in (${reported(run)}): ${test.title}. ${cause ? `${cause}. ` : ''}It should ${test.fix} (${test.reference}); ${seen}`,
      }
    }
    if (!kinds.has('token-issued'))
      return {
        verdict: 'error',
        message: `inconclusive: the sign-in reported success but never redeemed a code at this test issuer; ${seen}`,
      }
    if (test.exercisedBy === 'jwks' && !kinds.has('jwks'))
      return {
        verdict: 'skip',
        message: `not exercised: your client signed in without fetching this issuer's JWKS, so it never looked a key up (${test.title}); ${seen}`,
      }
    if (test.exercisedBy === 'userinfo' && !kinds.has('userinfo'))
      return {
        verdict: 'skip',
        message: `not exercised: your client signed in without calling user-info at this test issuer (${test.title}); ${seen}`,
      }
    if (test.exercisedBy === 'refresh') {
      if (!refreshes.length)
        return {
          verdict: 'skip',
          message: `not exercised: your client signed in but never redeemed its refresh token at this test issuer (the command got RP_TEST_REFRESH=1: after the sign-in, redeem the refresh token, call user-info with the new access token, and exit 0); ${seen}`,
        }
      if (!events.some((e) => e.kind === 'userinfo' && e.grant === 'refresh_token'))
        return {
          verdict: 'skip',
          message: `not exercised: your client redeemed its refresh token but never called user-info with the access token the refresh answered, so its use was never shown; ${seen}`,
        }
      return {
        verdict: 'pass',
        message: `signed in and refreshed: the refresh_token grant answered a new access token, user-info answered it, and the command reported signed in (exit 0); ${seen}`,
      }
    }
    if (test.exercisedBy === 'logout') {
      if (!logouts.length)
        return {
          verdict: 'skip',
          message: `not exercised: your client signed in but never sent the user to this issuer's end_session_endpoint (the command got RP_TEST_LOGOUT=1: after the sign-in, log out there and exit 0 once your app handled the redirect back); ${seen}`,
        }
      return {
        verdict: 'pass',
        message: `signed in and logged out: id_token_hint an ID token this issuer issued, post_logout_redirect_uri registered, ${logoutEcho(logouts)}, and the command reported the redirect back handled (exit 0); ${seen}`,
      }
    }
    return { verdict: 'pass', message: `signed in: ${test.title}; ${seen}` }
  }
  if (!delivered) {
    const why = events.find((e) => e.kind === 'not-applicable')?.detail
    if (why) return { verdict: 'skip', message: `not exercised: ${why}; ${seen}` }
    if (test.stage === 'discovery' && !kinds.has('discovery'))
      return {
        verdict: 'skip',
        message: `not exercised: your client never fetched this issuer's discovery document (configured without discovery?), so the document naming another issuer was never delivered; ${seen}`,
      }
    if (test.exercisedBy === 'userinfo' && !kinds.has('userinfo'))
      return {
        verdict: 'skip',
        message: `not exercised: your client never called user-info at this test issuer, so the faulty user-info response was never delivered; ${seen}`,
      }
    return {
      verdict: 'error',
      message: `inconclusive: ${reported(run)} but never reached this fault (${test.stage}); ${seen}`,
    }
  }
  if (run.outcome === 'signed-in' || uses.length > 0) {
    const how = [
      ...(run.outcome === 'signed-in' ? [reported(run)] : []),
      ...uses.map((e) => e.detail ?? e.kind),
    ]
    const inSession =
      test.stage === 'userinfo-response' && run.outcome === 'signed-in'
        ? ` (if your client discarded that response and only kept the session of the ID token, have the command print ${REFUSED_LINE}: a refusal of the response counts)`
        : ''
    return {
      verdict: NOT_MET[test.level],
      message: `your client accepted ${test.accepted ?? test.title}: ${how.join('; ')}${inSession}. Fix: ${test.fix}. See ${test.reference}`,
    }
  }
  if (!controlPassed)
    return {
      verdict: 'error',
      message: `inconclusive: the control (${RP_CONTROL}) did not sign in, so this refusal proves nothing; ${seen}`,
    }
  return {
    verdict: 'pass',
    message: `refused: ${reported(run)} and used nothing the fault tainted; ${seen}`,
  }
}

/**
 * A logout test whose redirect back carries another state or none (rp-init-logout-other-state,
 * rp-init-logout-no-state), once the client sent a correct logout request and the command
 * reported how its app handled the redirect back: passed either way, and the message says which
 * (RP-Initiated Logout §2 sets the RP no duty to check the state it gets back, and the
 * Foundation's module cannot see the handling); not exercised when the request carried no state
 * (the Foundation's module skips then).
 */
function judgeBackFromLogout(
  test: RpTest,
  run: Pick<SignInResult, 'outcome' | 'exitCode'>,
  logouts: readonly RpEvent[],
  delivered: boolean,
  seen: string,
): { verdict: Verdict; message: string } {
  const back =
    test.backFromLogout === 'no-state'
      ? 'without the state it sent'
      : 'with another state than the one it sent'
  if (!logouts.some((e) => e.logout?.state))
    return {
      verdict: 'skip',
      message: `not exercised: your client's logout request carried no state (OPTIONAL, RP-Initiated Logout §2), so a redirect back ${back} proves nothing (the Foundation's module skips then too); ${seen}`,
    }
  if (!delivered)
    return {
      verdict: 'error',
      message: `inconclusive: ${reported(run)} but the issuer never redirected your client back ${back}; ${seen}`,
    }
  const handled =
    run.outcome === 'signed-in'
      ? `your app accepted the redirect back ${back} (${reported(run)})`
      : `your app turned down the redirect back ${back} (${reported(run)})`
  return {
    verdict: 'pass',
    message: `logged out: id_token_hint an ID token this issuer issued, post_logout_redirect_uri registered, state sent; ${handled}: recorded, not judged, as RP-Initiated Logout §2 sets the RP no duty to check the state it gets back; ${seen}`,
  }
}

/** What was wrong with one logout request, in words, or undefined when nothing was. */
function logoutFault(e: RpEvent): string | undefined {
  const call = e.logout
  if (!call) return 'with a request the issuer could not read'
  const wrong = [
    ...(call.hint === 'missing'
      ? ['without id_token_hint (the Foundation requires the ID token of the sign-in)']
      : call.hint === 'not-issued-here'
        ? ['with an id_token_hint that is not an ID token this issuer issued']
        : []),
    ...(call.redirectUri === 'missing'
      ? ['without post_logout_redirect_uri (the Foundation requires a registered one)']
      : call.redirectUri === 'not-registered'
        ? ['with a post_logout_redirect_uri not registered for your client (compared exactly)']
        : []),
  ]
  return wrong.length ? wrong.join(' and ') : undefined
}

/** What the correct logout did with state, in words. */
const logoutEcho = (logouts: readonly RpEvent[]): string =>
  logouts.every((e) => e.logout?.state)
    ? 'state sent and echoed unchanged on the redirect back'
    : 'no state sent (OPTIONAL, RP-Initiated Logout §2), so the redirect back carried none'

/** `*` matches any run of characters, `?` one; everything else literally. */
const globRegExp = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
      .join('')}$`,
  )

/**
 * The tests one `--only` entry names: an exact ID (or a former ID, {@link RP_ALIASES}), or a
 * glob over the current IDs (`rp-id_token-*`).
 */
export function matchRpTests(pattern: string): RpTest[] {
  if (!/[*?]/.test(pattern)) {
    const id = RP_ALIASES[pattern] ?? pattern
    return RP_TESTS.filter((t) => t.id === id)
  }
  const re = globRegExp(pattern)
  return RP_TESTS.filter((t) => re.test(t.id))
}

/** Selects tests by exact ID or glob, comma-separated; the control is always in, first. */
export function selectRpTests(only: readonly string[] | undefined): RpTest[] {
  const ids = new Set(only?.length ? only.flatMap((p) => matchRpTests(p).map((t) => t.id)) : [])
  const picked = only?.length
    ? RP_TESTS.filter((t) => t.id === RP_CONTROL || ids.has(t.id))
    : [...RP_TESTS]
  return [
    ...picked.filter((t) => t.id === RP_CONTROL),
    ...picked.filter((t) => t.id !== RP_CONTROL),
  ]
}

/** Verdict counts of one level, with "not exercised" for skip and ERROR for error. */
export interface RpLevelCounts {
  readonly pass: number
  readonly fail: number
  readonly warn: number
  readonly info: number
  readonly notExercised: number
  readonly error: number
}

/**
 * The run's outcome: counts per level, and whether it passed: the control signed in, no test
 * failed, and every MUST test was exercised and passed (a MUST not exercised is allowed only
 * with `allowUnexercised`; a MUST that was inconclusive never is).
 */
export function rpOutcome(
  results: readonly CheckResult[],
  allowUnexercised = false,
): { passed: boolean; counts: Record<RpTest['level'], RpLevelCounts>; line: string } {
  const count = (level: RpTest['level']): RpLevelCounts => {
    const of = results.filter((r) => r.level === level)
    const n = (v: Verdict) => of.filter((r) => r.verdict === v).length
    return {
      pass: n('pass'),
      fail: n('fail'),
      warn: n('warn'),
      info: n('info'),
      notExercised: n('skip'),
      error: n('error'),
    }
  }
  const counts = { MUST: count('MUST'), SHOULD: count('SHOULD'), MAY: count('MAY') }
  const control = results.find((r) => r.id === RP_CONTROL)
  const must = results.filter((r) => r.level === 'MUST')
  const passed =
    control?.verdict === 'pass' &&
    !results.some((r) => r.verdict === 'fail') &&
    must.every((r) => r.verdict === 'pass' || (allowUnexercised && r.verdict === 'skip'))
  const line = (['MUST', 'SHOULD', 'MAY'] as const)
    .filter((level) => results.some((r) => r.level === level))
    .map((level) => {
      const c = counts[level]
      return `${level}: ${c.pass} PASS, ${c.fail} FAIL, ${c.warn} WARN, ${c.info} INFO, ${c.notExercised} not exercised, ${c.error} ERROR`
    })
    .join('; ')
  return { passed, counts, line }
}

/** One sign-in of a test: what the command reported and what the issuer saw meanwhile. */
interface SignInRound {
  readonly run: SignInResult
  readonly events: RpEvent[]
  /** Why the observations could not be read, if they could not. */
  readonly unreadable?: string
}

/**
 * The verdict of a test of several sign-ins (pure): each is judged as one sign-in would be, and
 * the test passes only when every one passes; otherwise the first sign-in that did not pass
 * gives the verdict, and says which it was.
 */
export function judgeSignIns(
  test: RpTest,
  rounds: readonly {
    readonly run: Pick<SignInResult, 'outcome' | 'exitCode' | 'why'>
    readonly events: readonly RpEvent[]
  }[],
  controlPassed: boolean,
): { verdict: Verdict; message: string } {
  const judged = rounds.map((r) => judge(test, r.run, r.events, controlPassed))
  if (judged.length === 1 && judged[0]) return judged[0]
  const first = judged.findIndex((j) => j.verdict !== 'pass')
  const of = `of ${rounds.length}`
  if (first === -1)
    return {
      verdict: 'pass',
      message: `signed in ${rounds.length} times: ${test.title}; ${rounds.map((r, i) => `sign-in ${i + 1}: ${observed(r.events).replace(/^the issuer saw: /, '')}`).join('; ')}`,
    }
  const j = judged[first] as { verdict: Verdict; message: string }
  // "not exercised:" and "inconclusive:" stay first, as in every message of one sign-in
  const led = /^(not exercised|inconclusive): ([\s\S]*)$/.exec(j.message)
  return {
    verdict: j.verdict,
    message: led
      ? `${led[1]}: in sign-in ${first + 1} ${of}, ${led[2]}`
      : `sign-in ${first + 1} ${of}: ${j.message}`,
  }
}

/** Runs the sign-in once per selected test issuer (twice for a test of two), the control first. */
export async function runRpTests(options: RpRunOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = []
  let controlPassed = false
  const signInOnce = async (test: RpTest, round: number, of: number): Promise<SignInRound> => {
    const issuer = `${options.baseUrl}/rp/${test.id}`
    // the observations are the evidence: a server that cannot give them makes the test
    // inconclusive, never a crash of the run
    let last: number
    try {
      const listed = (await fetchJson(`${options.baseUrl}/rp`, options.dispatcher)) as {
        last?: unknown
      }
      if (typeof listed.last !== 'number') throw new Error(`${options.baseUrl}/rp gave no last`)
      last = listed.last
    } catch (err) {
      return {
        run: { outcome: 'could-not-run', output: '', why: 'not started' },
        events: [],
        unreadable: (err as Error).message,
      }
    }
    let run: SignInResult
    try {
      run = await options.signIn({
        ...options.env,
        RP_TEST_ISSUER: issuer,
        RP_TEST_ID: test.id,
        RP_TEST_EXPECT: test.kind === 'negative' ? 'refuse' : 'sign-in',
        RP_TEST_SIGNED_IN_URL: `${issuer}/signed-in`,
        RP_TEST_SIGN_IN: String(round),
        RP_TEST_SIGN_INS: String(of),
        RP_TEST_LOGOUT: test.exercisedBy === 'logout' ? '1' : '0',
        RP_TEST_REFRESH: test.exercisedBy === 'refresh' ? '1' : '0',
      })
    } catch (err) {
      const why = `the sign-in threw: ${(err as Error).message}`
      run = { outcome: 'could-not-run', output: why, why }
    }
    try {
      const answer = await eventsSince(options.baseUrl, test.id, last, options.dispatcher)
      if (!Array.isArray(answer.events)) throw new Error('the observations have no events')
      return { run, events: answer.events }
    } catch (err) {
      return { run, events: [], unreadable: (err as Error).message }
    }
  }
  for (const test of selectRpTests(options.only)) {
    const issuer = `${options.baseUrl}/rp/${test.id}`
    const started = Date.now()
    const of = test.signIns ?? 1
    const rounds: SignInRound[] = []
    for (let round = 1; round <= of; round++) {
      const one = await signInOnce(test, round, of)
      rounds.push(one)
      // a later sign-in proves nothing once one could not be observed or did not pass
      if (
        one.unreadable !== undefined ||
        judge(test, one.run, one.events, controlPassed).verdict !== 'pass'
      )
        break
    }
    const unreadable = rounds.find((r) => r.unreadable !== undefined)?.unreadable
    const { verdict, message }: { verdict: Verdict; message: string } =
      unreadable !== undefined
        ? {
            verdict: 'error',
            message: `inconclusive: could not read what the test issuer observed (${unreadable})`,
          }
        : judgeSignIns(test, rounds, controlPassed)
    if (test.id === RP_CONTROL) controlPassed = verdict === 'pass'
    const numbered = (i: number) => (of > 1 ? `sign-in ${i + 1} of ${of}: ` : '')
    const result: CheckResult = {
      id: test.id,
      title: test.title,
      level: test.level,
      source: test.foundation
        ? `${test.reference}; OpenID Foundation RP test ${test.foundation.id}: ${test.foundation.relation}`
        : `${test.reference}; no OpenID Foundation RP test of this name (ours)`,
      area: test.kind === 'negative' ? 'rp-negative' : 'rp-positive',
      verdict,
      message,
      notes: rounds.flatMap((r, i) => [
        `${numbered(i)}issuer ${issuer}; ${r.run.outcome}${r.run.exitCode === undefined ? '' : `; exit code ${r.run.exitCode}`}`,
        ...(i === 0 && test.foundation
          ? [
              `OpenID Foundation RP test ${test.foundation.id} (${test.foundation.plan ?? FOUNDATION_PLAN})`,
            ]
          : []),
        ...r.events.map(
          (e) => `${e.kind}${e.detail ? `: ${e.detail}` : ''}${e.finding ? ` [${e.finding}]` : ''}`,
        ),
        ...(r.run.output.trim()
          ? [`output (last lines):\n${r.run.output.trim().split('\n').slice(-20).join('\n')}`]
          : []),
      ]),
      exchanges: [],
      screenshots: [],
      durationMs: Date.now() - started,
    }
    results.push(result)
    options.onResult?.(result)
  }
  return results
}

/**
 * A sign-in that is a shell command, run with the test's variables added to the environment and
 * killed (its whole process group, by PID) after `timeoutMs`. Exit 0: signed in; the line
 * {@link REFUSED_LINE} on stdout: refused (even if the command then hangs until the timeout);
 * anything else (another exit code, a signal, a failure to start, the timeout): could not run.
 */
export function commandSignIn(
  command: string,
  options: { timeoutMs: number; baseEnv: NodeJS.ProcessEnv; echo?: (chunk: string) => void },
): SignIn {
  return (env) =>
    new Promise((resolve) => {
      const child = spawn(command, {
        shell: true,
        detached: true,
        env: { ...options.baseEnv, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      let refused = false
      // stdout is scanned line by line for the refusal, whatever its length
      let partial = ''
      const keep = (chunk: Buffer) => {
        const text = chunk.toString('utf8')
        options.echo?.(text)
        output = (output + text).slice(-16_384)
      }
      child.stdout.on('data', (chunk: Buffer) => {
        keep(chunk)
        const lines = (partial + chunk.toString('utf8')).split(/\r?\n/)
        partial = (lines.pop() ?? '').slice(-1024)
        if (reportsRefusal(lines.join('\n'))) refused = true
      })
      child.stderr.on('data', keep)
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        if (child.pid !== undefined) {
          try {
            process.kill(-child.pid, 'SIGTERM')
          } catch {
            // already gone
          }
        }
      }, options.timeoutMs)
      child.once('error', (err) => {
        clearTimeout(timer)
        resolve({
          outcome: 'could-not-run',
          output: `${output}\n${err.message}`,
          why: `the command could not start: ${err.message}`,
        })
      })
      child.once('close', (code, signal) => {
        clearTimeout(timer)
        if (reportsRefusal(partial)) refused = true
        const exit = code === null ? {} : { exitCode: code }
        // a refusal the command reported stands even if it then hung until the timeout
        if (refused)
          resolve({
            outcome: 'refused',
            ...exit,
            output: timedOut ? `${output}\n(stopped after ${options.timeoutMs} ms)` : output,
          })
        else if (timedOut)
          resolve({
            outcome: 'could-not-run',
            ...exit,
            output: `${output}\n(timed out after ${options.timeoutMs} ms)`,
            why: `the command timed out after ${options.timeoutMs / 1000} s and was stopped`,
          })
        else if (code === 0) resolve({ outcome: 'signed-in', exitCode: 0, output })
        else
          resolve({
            outcome: 'could-not-run',
            ...exit,
            output,
            why:
              code === null
                ? `the command was killed by ${signal ?? 'a signal'}`
                : `the command exited ${code} without printing ${REFUSED_LINE}`,
          })
      })
    })
}
