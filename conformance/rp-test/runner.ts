import { spawn } from 'node:child_process'
import type { Agent } from 'undici'
import { RP_CONTROL, RP_TESTS, type RpTest } from '../../server/rp/catalogue.ts'
import type { RpEvent } from '../../server/rp/observations.ts'
import type { CheckResult, Verdict } from '../harness/types.ts'

/** What the integrator's sign-in gets to know, as environment variables. */
export interface SignInEnv {
  /** The test issuer: discover it at `${RP_TEST_ISSUER}/.well-known/openid-configuration`. */
  readonly RP_TEST_ISSUER: string
  readonly RP_TEST_ID: string
  /** `refuse` for a negative test, `sign-in` for a positive one (for logs; judge nothing by it). */
  readonly RP_TEST_EXPECT: 'refuse' | 'sign-in'
  /** Where a page of the client may report that it shows a signed-in user (GET or POST). */
  readonly RP_TEST_SIGNED_IN_URL: string
  readonly [name: string]: string
}

/** Runs one sign-in; resolves to its exit code (0: signed in, anything else: refused). */
export type SignIn = (
  env: SignInEnv,
) => Promise<{ exitCode: number; output: string; timedOut?: boolean }>

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

/**
 * The verdict of one test from the sign-in's exit code and what the test issuer saw (pure).
 * A negative test passes when the sign-in failed and nothing the fault tainted was used; a
 * positive one when the sign-in succeeded and redeemed a code at the test issuer. A run that
 * never reached the fault proves nothing: it is skipped as inconclusive, never passed.
 */
export function judge(
  test: RpTest,
  exitCode: number,
  events: readonly RpEvent[],
  controlPassed: boolean,
): { verdict: Verdict; message: string } {
  const kinds = new Set(events.map((e) => e.kind))
  const signedIn = exitCode === 0
  if (!kinds.has('authorize'))
    return {
      verdict: 'skip',
      message: `inconclusive: the sign-in (exit ${exitCode}) never started at this test issuer; point the client at RP_TEST_ISSUER`,
    }
  if (test.kind === 'positive') {
    if (!signedIn)
      return {
        verdict: NOT_MET[test.level],
        message: `your client refused a correct sign-in (exit ${exitCode}): ${test.title}. It should ${test.fix} (${test.reference})`,
      }
    if (!kinds.has('token-issued'))
      return {
        verdict: 'skip',
        message:
          'inconclusive: the sign-in reported success but never redeemed a code at this test issuer',
      }
    return { verdict: 'pass', message: `signed in: ${test.title}` }
  }
  const uses = events.filter((e) => e.kind === 'tainted-use' || e.kind === 'signed-in')
  if (!kinds.has('fault-delivered')) {
    const why = events.find((e) => e.kind === 'not-applicable')?.detail
    return {
      verdict: 'skip',
      message: why
        ? `not applicable: ${why}`
        : `inconclusive: the sign-in (exit ${exitCode}) never reached this fault (${test.stage})`,
    }
  }
  if (signedIn || uses.length > 0) {
    const how = [
      ...(signedIn ? ['the sign-in command exited 0'] : []),
      ...uses.map((e) => e.detail ?? e.kind),
    ]
    return {
      verdict: NOT_MET[test.level],
      message: `your client accepted ${test.accepted ?? test.title} (${how.join('; ')}). Fix: ${test.fix}. See ${test.reference}`,
    }
  }
  if (!controlPassed)
    return {
      verdict: 'skip',
      message: `inconclusive: the control (${RP_CONTROL}) did not sign in, so this refusal proves nothing`,
    }
  return {
    verdict: 'pass',
    message: `refused (exit ${exitCode}) and used nothing it was given`,
  }
}

/** Selects tests by ID or prefix (`rp-id_token`), comma-separated; the control is always in. */
export function selectRpTests(only: readonly string[] | undefined): RpTest[] {
  const picked = only?.length
    ? RP_TESTS.filter((t) => t.id === RP_CONTROL || only.some((p) => t.id.startsWith(p)))
    : [...RP_TESTS]
  return [
    ...picked.filter((t) => t.id === RP_CONTROL),
    ...picked.filter((t) => t.id !== RP_CONTROL),
  ]
}

/** Runs the sign-in once per selected test issuer, the control first, and judges each. */
export async function runRpTests(options: RpRunOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = []
  let controlPassed = false
  for (const test of selectRpTests(options.only)) {
    const issuer = `${options.baseUrl}/rp/${test.id}`
    const started = Date.now()
    const { last } = (await fetchJson(`${options.baseUrl}/rp`, options.dispatcher)) as {
      last: number
    }
    let exitCode: number
    let output = ''
    let timedOut: boolean | undefined
    try {
      ;({ exitCode, output, timedOut } = await options.signIn({
        ...options.env,
        RP_TEST_ISSUER: issuer,
        RP_TEST_ID: test.id,
        RP_TEST_EXPECT: test.kind === 'negative' ? 'refuse' : 'sign-in',
        RP_TEST_SIGNED_IN_URL: `${issuer}/signed-in`,
      }))
    } catch (err) {
      exitCode = -1
      output = `the sign-in could not run: ${(err as Error).message}`
    }
    const { events } = await eventsSince(options.baseUrl, test.id, last, options.dispatcher)
    const judged: { verdict: Verdict; message: string } = timedOut
      ? { verdict: 'skip', message: 'inconclusive: the sign-in timed out' }
      : judge(test, exitCode, events, controlPassed)
    const { verdict, message } = judged
    if (test.id === RP_CONTROL) controlPassed = verdict === 'pass'
    const result: CheckResult = {
      id: test.id,
      title: test.title,
      level: test.level,
      source: test.reference,
      area: test.kind === 'negative' ? 'rp-negative' : 'rp-positive',
      verdict,
      message,
      notes: [
        `issuer ${issuer}; exit code ${exitCode}`,
        ...events.map((e) => `${e.kind}${e.detail ? `: ${e.detail}` : ''}`),
        ...(output.trim()
          ? [`output (last lines):\n${output.trim().split('\n').slice(-20).join('\n')}`]
          : []),
      ],
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
 * A sign-in that is a shell command: run with the test's variables added to the environment,
 * judged by its exit code; killed (its whole process group, by PID) after `timeoutMs`.
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
      const keep = (chunk: Buffer) => {
        const text = chunk.toString('utf8')
        options.echo?.(text)
        output = (output + text).slice(-16_384)
      }
      child.stdout.on('data', keep)
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
        resolve({ exitCode: -1, output: `${output}\n${err.message}` })
      })
      child.once('close', (code) => {
        clearTimeout(timer)
        resolve({
          exitCode: code ?? -1,
          output: timedOut ? `${output}\n(timed out after ${options.timeoutMs} ms)` : output,
          timedOut,
        })
      })
    })
}
