import { appendFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
// Issue 21, fast to start: this module imports only plain data and small modules (the
// catalogue, the threat table, the needs table, the report formatters). The checks, the
// browser, the HTTP client, the embedded server and the configuration schema are imported when
// a run needs them, so --help and --list answer without loading them
// (scripts/cli-startup.test.ts keeps it so).
import type { Embedded } from './harness/embedded.ts'
import type { RunInfo } from './runner.ts'
import {
  BROWSER_CHECKS_AT_ONCE,
  CHECK_TIMEOUT_MS,
  embeddedOnlyReason,
  predictSkips,
  predictUnjudgedParts,
} from './harness/needs.ts'
import type { Target, TargetConfig } from './harness/target.ts'
import { gatedShoulds, profileChecks } from './threats.ts'
import { markdownSummary } from './report/markdown.ts'
import {
  checkKnownFailures,
  gate,
  loadKnownFailures,
  type GateVerdict,
  type KnownFailure,
} from './gate.ts'
import { formatResultLine, formatSummary, useColor } from './report/terminal.ts'
import { plural } from './report/words.ts'
import { Progress, progressWriter, showProgress } from './report/progress.ts'
import { DEFAULT_RERUN_REPORT, failedChecks, recordedDurations } from './previous-run.ts'
import { checkName, requirementIds, requirements, type RequirementId } from './requirements.ts'
import type { TargetFlags } from './target-config.ts'
import { UsageError } from './usage-error.ts'
import { idGlob } from './id-glob.ts'
import { runStop } from './stop.ts'
import { settledWithin } from './harness/settled.ts'
import { describeSpeed, Pace, type RunSpeed } from './harness/pace.ts'
import { guardRun } from './harness/guard.ts'
import type { CheckResult } from './harness/types.ts'

/**
 * Exit codes: the contract CI pipelines rely on. `incomplete`: the run was stopped by its
 * --run-timeout (or by an error of the harness) before every check had run; the reports are
 * written, the rest marked not run. A run stopped by SIGINT or SIGTERM exits 128 + the signal's
 * number (130, 143), as a shell reports it, after writing its reports as well.
 */
export const EXIT = { ok: 0, failures: 1, usage: 2, unreachable: 3, incomplete: 4 } as const

/** Whether an exit code says the run was stopped before its end (see EXIT). */
export const stoppedEarly = (code: number): boolean => code === EXIT.incomplete || code >= 128

/**
 * How long a stopped run waits for the checks in flight to end (each is told to stop at once)
 * before its reports are written from what has finished, the rest marked not run.
 */
export const STOP_GRACE_MS = 15_000

const SIGNAL_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 }

export interface Io {
  readonly out: { write(s: string): unknown; isTTY?: boolean }
  readonly err: { write(s: string): unknown }
  readonly env: NodeJS.ProcessEnv
}

/**
 * Checks at once against the embedded server. Most checks send HTTP only (their codes come from
 * the users' shared IdP sessions), at most BROWSER_CHECKS_AT_ONCE of them drive Chromium at a
 * time, and the exclusive ones run on a twin of the server beside the rest (runner.ts). Measured
 * with `npm run bench -- --suite` on the quiet 2-core machine (2026-11-24 evening, Debian's
 * headless shell, about 13 CPU-seconds a run), medians of 3: 15.7 s wall at 1 (no twin: one
 * check at a time), 11.7 s at 2, 11.6 s at 4 and 12.1 s at 6.
 */
export const DEFAULT_PARALLEL = 4

/**
 * Checks at once against a remote deployment: the IdP's work is done elsewhere and most of a
 * check is waiting on the network, so more run at once than against the embedded server;
 * `--parallel 1` stays for deployments with tight limits. Exclusive checks still run alone
 * (a deployment has no twin to run them on; see runner.ts).
 */
export const DEFAULT_PARALLEL_REMOTE = 8

const USAGE = `usage: idp-conformance [run] [options]

  (no target)            start the embedded reference server and run the suite against it
  --base-url URL         run against this deployment (https)
  --config FILE          JSON: clients, users and other facts about the target
  --ca FILE              PEM certificate authority to trust for the target
  --report-dir DIR       write junit.xml, report.json and report.html there
  --only PATTERNS        comma-separated IDs, ID globs (PKCE-*) or prefixes (PKCE), areas or
                         levels to run; 'security' runs the security profile (SEC-* and the
                         checks of its threat table), whose gate fails the run on a SHOULD
                         warning behind an account takeover or a token theft (README)
  --skip PATTERNS        the same, to leave out
  --strict               SHOULD-level warnings fail the run too
  --known-failures FILE  JSON [{id, reason, expires}]: listed failures do not fail the run
                         until they expire; a listed check that passes is a stale entry (fails).
                         Read before the run: an ID no check has, a pattern or an expired
                         entry is a usage error (exit 2)
  --allow-skips          skipped checks do not fail the run (by default they do)
  --allow-errors         inconclusive (ERROR) checks, which the harness could not drive, do
                         not fail the run (by default they do; they are never failures)
  --check-timeout S      seconds one check may take before it is stopped as inconclusive
                         (default ${CHECK_TIMEOUT_MS / 1000}, scaled by the run's measured speed: the
                         median browser round against 2 s, up to x10; time spent waiting for
                         the browser or a shared session is not counted); given, not scaled
  --run-timeout S        seconds the whole run may take, from the start (the embedded server's
                         start-up and the preflight count; default: no limit); then the checks in
                         flight are stopped, the reports written with the rest marked not run,
                         and the exit code is ${EXIT.incomplete} (SIGINT/SIGTERM do the same, exit 130/143)
  --parallel N           run up to N checks at once (default against the embedded server:
                         ${DEFAULT_PARALLEL}; against a remote deployment: ${DEFAULT_PARALLEL_REMOTE}; --parallel 1
                         for deployments with tight limits); at most ${BROWSER_CHECKS_AT_ONCE} of them drive the
                         browser at a time. Checks that change shared state (clock, rate
                         limits) run one at a time: on a twin of the embedded server beside
                         the rest, or alone against a deployment. Codes for checks that are
                         not about the login page come from each user's IdP session, signed
                         in once in the browser
  --shuffle SEED         start the checks in an order shuffled from SEED (an integer from 0 to
                         4294967295) instead of the catalogue's; the summary names the seed,
                         so the same order can be replayed. Verdicts must not depend on it
  --login-dry-run        only sign the primary user in, once, and show what happened: a log
                         line per login step and screenshots in the report dir (default
                         reports/login-dry-run); exit 0 when the IdP redirected with a code
  --no-preflight         run the checks without trying the settings first. By default, before
                         any check, discovery and the JWKS are fetched, the main client
                         authenticates and the primary user signs in; a wrong secret, password
                         or CA (or an unreachable target) stops the run in seconds, naming
                         the setting, and no check runs
  --print-config         print the resolved target configuration (secrets redacted) and exit
  --rerun-failed [FILE]  run only the checks that failed or were inconclusive in that
                         report.json (default ${DEFAULT_RERUN_REPORT}), within --only/--skip
  --list                 list the checks and exit; with --config, also the checks the
                         configuration will skip and why, and the embedded-only ones
  -h, --help             this text

  environment: IDP_BASE_URL, IDP_CONFIG, IDP_CA (as the flags); IDP_PROPERTY_RUNS (cases per
  property check, default 25); IDP_PROPERTY_SEED (their seed: fixed by default, so every run
  sends the same cases; set another to vary them, or the noted one to replay a run)

  exit codes: ${EXIT.ok} every MUST check passed, and nothing the flags do not allow was left
              (skipped or inconclusive checks, stale known failures); --login-dry-run signed in
              ${EXIT.failures} the run failed (what fails it is listed at its end)
              ${EXIT.usage} usage or configuration error: nothing was run (a bad flag or known-failures
                file, or a setting the preflight found wrong: clients.main.secret,
                users.primary.password, --ca)
              ${EXIT.unreachable} the target is unreachable, or the embedded server did not start
              ${EXIT.incomplete} stopped by --run-timeout (or an error of the harness): reports written,
                the rest of the checks not run
              130, 143 stopped by SIGINT, SIGTERM: reports written, the rest not run
`

const suiteVersion = (): string => {
  try {
    return (
      JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
        version: string
      }
    ).version
  } catch {
    return 'unknown'
  }
}

/**
 * Selects checks by ID, ID glob, ID prefix, area or level (case-insensitive), from the
 * catalogue: every row has its registered check (suite.test.ts and cli.test.ts prove it), so
 * the selection needs no check module loaded.
 */
export function selectChecks(patterns: string | undefined): RequirementId[] {
  const all = requirementIds
  if (!patterns) return all
  const wanted = patterns
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  const matches = (id: RequirementId, p: string): boolean => {
    const req = requirements[id]
    const glob = idGlob(p)
    return (
      glob.test(id) ||
      // an ID's prefix names its area too: DISC is DISC-*
      id.startsWith(`${p.toUpperCase()}-`) ||
      req.area.toLowerCase() === p.toLowerCase() ||
      req.level === p.toUpperCase() ||
      // the security profile: its own SEC-* checks and every check its threat table names
      (p.toLowerCase() === 'security' && profile.has(id))
    )
  }
  const profile = new Set(profileChecks())
  const selected = all.filter((id) => wanted.some((p) => matches(id, p)))
  if (selected.length === 0) throw new UsageError(`--only ${patterns} selects no check`)
  return selected
}

/** Whether `--only` names the security profile (its gate then holds some SHOULDs at MUST). */
export function selectsSecurityProfile(patterns: string | undefined): boolean {
  return (patterns ?? '').split(',').some((p) => p.trim().toLowerCase() === 'security')
}

/** `--parallel N`: a whole number from 1 to 16. */
export function parseParallel(value: string | undefined, remote = false): number {
  if (value === undefined) return remote ? DEFAULT_PARALLEL_REMOTE : DEFAULT_PARALLEL
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1 || n > 16)
    throw new UsageError(`--parallel must be a whole number from 1 to 16, got ${value}`)
  return n
}

/** `--run-timeout S`: whole seconds from 1 to 604800 (a week), in ms; undefined: no limit. */
export function parseRunTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1 || n > 604_800)
    throw new UsageError(`--run-timeout must be whole seconds from 1 to 604800, got ${value}`)
  return n * 1000
}

/** `--check-timeout S`: whole seconds from 5 to 3600, in ms. */
export function parseCheckTimeout(value: string | undefined): number {
  // absent: the default, which the run scales by its measured speed (runner.ts)
  if (value === undefined) return CHECK_TIMEOUT_MS
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 5 || n > 3600)
    throw new UsageError(`--check-timeout must be whole seconds from 5 to 3600, got ${value}`)
  return n * 1000
}

/** The seed of --shuffle: a 32-bit unsigned integer; undefined keeps the catalogue's order. */
export function parseShuffle(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!/^\d{1,10}$/.test(value) || n > 0xffffffff)
    throw new UsageError(`--shuffle must be an integer from 0 to 4294967295, got ${value}`)
  return n
}

/**
 * Before a run against a deployment: the checks its configuration will skip (a client or
 * user it does not name), the embedded-only checks, and the parts of checks that run without
 * them (an expired access token, without a usable accessTokenLifetime), each with why.
 */
export function plannedSkips(ids: readonly RequirementId[], config: TargetConfig): string {
  const embeddedOnly = ids.flatMap((id) => {
    const why = embeddedOnlyReason(id)
    return why ? [`  ${id}: ${why}`] : []
  })
  const run = ids.filter((id) => !embeddedOnlyReason(id))
  const skipped = predictSkips(run, config)
  const skips = skipped.map(({ id, why }) => `  ${id}: ${why}`)
  const lines: string[] = []
  if (embeddedOnly.length)
    lines.push(
      `Embedded only (not run against a deployment, not counted): ${embeddedOnly.length}`,
      ...embeddedOnly,
    )
  if (skips.length)
    lines.push(`The configuration will skip ${plural(skips.length, 'check')}:`, ...skips)
  // a check that runs with a part left out: its verdict does not cover that part
  const parts = predictUnjudgedParts(
    run.filter((id) => !skipped.some((s) => s.id === id)),
    config,
  ).map(({ id, why }) => `  ${id}: ${why}`)
  if (parts.length)
    lines.push(
      `Not judged against a deployment (the check runs without this part): ${parts.length}`,
      ...parts,
    )
  return lines.length ? `${lines.join('\n')}\n` : ''
}

/**
 * `--rerun-failed` takes its report's path as an optional value: alone, or before another
 * option, it means the default report (parseArgs wants a value for a string option).
 */
export function withRerunDefault(argv: readonly string[]): string[] {
  return argv.map((arg, i) =>
    arg === '--rerun-failed' && (i + 1 >= argv.length || argv[i + 1]?.startsWith('-'))
      ? `--rerun-failed=${DEFAULT_RERUN_REPORT}`
      : arg,
  )
}

/** Runs the CLI; returns the exit code. Never throws for usage, configuration or network problems. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let values
  try {
    const parsed = parseArgs({
      args: withRerunDefault(argv[0] === 'run' ? argv.slice(1) : argv),
      options: {
        'base-url': { type: 'string' },
        config: { type: 'string' },
        ca: { type: 'string' },
        'report-dir': { type: 'string' },
        only: { type: 'string' },
        skip: { type: 'string' },
        strict: { type: 'boolean' },
        'known-failures': { type: 'string' },
        'allow-skips': { type: 'boolean' },
        'allow-errors': { type: 'boolean' },
        'check-timeout': { type: 'string' },
        'run-timeout': { type: 'string' },
        parallel: { type: 'string' },
        shuffle: { type: 'string' },
        'print-config': { type: 'boolean' },
        'login-dry-run': { type: 'boolean' },
        'rerun-failed': { type: 'string' },
        'no-preflight': { type: 'boolean' },
        list: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    })
    values = parsed.values
  } catch (err) {
    io.err.write(`idp-conformance: ${(err as Error).message}\n${USAGE}`)
    return EXIT.usage
  }
  if (values.help) {
    io.out.write(USAGE)
    return EXIT.ok
  }
  let ids: RequirementId[]
  let knownFailures: KnownFailure[]
  let concurrency: number
  let checkTimeoutMs: number
  let shuffle: number | undefined
  let runTimeoutMs: number | undefined
  let remote: string | undefined
  const flags = { baseUrl: values['base-url'], config: values.config, ca: values.ca }
  try {
    const skipped = values.skip ? new Set(selectChecks(values.skip)) : new Set<RequirementId>()
    ids = selectChecks(values.only).filter((id) => !skipped.has(id))
    const rerun = values['rerun-failed']
    if (rerun !== undefined) {
      const again = new Set(failedChecks(rerun))
      ids = ids.filter((id) => again.has(id))
      if (ids.length === 0) {
        io.out.write(`${rerun} has no failed or inconclusive check to run again\n`)
        return EXIT.ok
      }
    }
    if (ids.length === 0) throw new UsageError('--only/--skip leave no check to run')
    // a typo, a pattern or an expired entry is found now, not after the run (issue 32)
    knownFailures = values['known-failures']
      ? checkKnownFailures(loadKnownFailures(values['known-failures']), {
          path: values['known-failures'],
          knownIds: requirementIds,
          today: new Date(),
        })
      : []
    remote = values['base-url'] ?? values.config ?? io.env.IDP_BASE_URL
    concurrency = parseParallel(values.parallel, Boolean(remote))
    checkTimeoutMs = parseCheckTimeout(values['check-timeout'])
    shuffle = parseShuffle(values.shuffle)
    runTimeoutMs = parseRunTimeout(values['run-timeout'])
    if (values.list) {
      for (const id of ids) io.out.write(`${checkName(id)}\n`)
      if (remote) io.out.write(plannedSkips(ids, await targetConfig(flags, io.env)))
      return EXIT.ok
    }
    if (values['print-config']) {
      const config = remote ? await targetConfig(flags, io.env) : undefined
      io.out.write(`${JSON.stringify(redactConfig(config), null, 2)}\n`)
      return EXIT.ok
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err.write(`idp-conformance: ${err.message}\n`)
      return EXIT.usage
    }
    io.err.write(`idp-conformance: ${(err as Error).message}\n`)
    return EXIT.unreachable
  }

  const dryRun = values['login-dry-run'] ?? false
  const startedAt = new Date()
  let embedded: Embedded | undefined
  // the embedded server's start, left behind by a stop: stopped once it is up (bounded)
  let starting: Promise<Embedded> | undefined
  let target: Target | undefined
  // the progress line under the results, on a terminal only (report/progress.ts)
  let progress: Progress | undefined
  let live: ReturnType<typeof progressWriter> | undefined
  let ticking: NodeJS.Timeout | undefined
  let say = (s: string): unknown => io.out.write(s)
  // the checks that have finished, by ID
  const finished = new Map<string, CheckResult>()
  // Issue 29: from here on, every way the run ends writes its reports. SIGINT, SIGTERM and
  // --run-timeout stop it (stop.ts) during the embedded server's start and the preflight as
  // well as during the checks; the login dry run is no run of checks and keeps the process's
  // own signal handling.
  const stop = dryRun
    ? undefined
    : runStop({
        runTimeoutMs,
        graceMs: STOP_GRACE_MS,
        incompleteCode: EXIT.incomplete,
        signalCodes: SIGNAL_CODES,
        tell: (line) => say(`${line}\n`),
      })
  // an error that escapes every await outside the checks (the runner guards those) is a note,
  // and the run goes on (harness/guard.ts)
  let checksRunning = false
  const unguard = guardRun((message) => {
    if (!checksRunning) say(`Note: ${message}\n`)
  })

  /** The reports, from the results and why the run was stopped (if it was); the gate's verdict. */
  const writeReports = async (
    results: readonly CheckResult[],
    stopped: string | undefined,
    /** The run's measured speed, once its checks ran (report.json `speed`). */
    speed?: RunSpeed,
  ): Promise<GateVerdict> => {
    const finishedAt = new Date()
    const verdict = gate(results, {
      strict: values.strict ?? false,
      // the security profile's gate: a warning that ships an account takeover or a token theft
      ...(selectsSecurityProfile(values.only)
        ? { raised: gatedShoulds((id) => requirements[id].level) }
        : {}),
      allowSkips: values['allow-skips'] ?? false,
      allowErrors: values['allow-errors'] ?? false,
      knownIds: new Set(Object.keys(requirements)),
      knownFailures,
      today: new Date(),
    })
    const baseUrl = target?.baseUrl ?? 'the embedded reference server (not started)'
    const summary = markdownSummary(results, verdict, baseUrl)
    const { writeReportDir } = await import('./report/all-formats.ts')
    const { configNames } = await import('./report/cause-detail.ts')
    if (values['report-dir'])
      writeReportDir(values['report-dir'], results, {
        target: { baseUrl, embedded: target?.embedded ?? !remote },
        version: suiteVersion(),
        startedAt,
        finishedAt,
        verdict,
        stopped,
        names: target ? configNames(target) : undefined,
        speed,
      })
    // GitHub Actions shows this file as the job summary
    if (io.env.GITHUB_STEP_SUMMARY) appendFileSync(io.env.GITHUB_STEP_SUMMARY, `${summary}\n`)
    return verdict
  }

  /**
   * The run ends early, before any check ran (a stop, a preflight that found a setting wrong, a
   * target that cannot be reached or started) or by an error of the harness: every report is
   * written all the same, each selected check that did not finish not run with why, and the exit
   * code is `code`. The login dry run writes no reports (its directory holds its screenshots).
   */
  const endEarly = async (why: string, code: number): Promise<number> => {
    if (dryRun) return code
    // against a deployment, the embedded-only checks are left out as a run leaves them out
    const planned = remote ? ids.filter((id) => !embeddedOnlyReason(id)) : ids
    const { notRunResult } = await import('./harness/check.ts')
    try {
      // (a harness error after the checks keeps the verdicts of those that finished)
      await writeReports(
        planned.map((id) => finished.get(id) ?? notRunResult(id, why)),
        why,
      )
    } catch (err) {
      io.err.write(`idp-conformance: could not write the reports: ${(err as Error).message}\n`)
      return code
    }
    if (values['report-dir'])
      io.out.write(
        `${finished.size === 0 ? 'No check was run' : 'The run ended early'} (${why}); the reports are in ${values['report-dir']}\n`,
      )
    if (stop?.stopped || code === EXIT.incomplete) io.out.write(`Result: INCOMPLETE (${why})\n`)
    return code
  }
  /** Why a stop before the checks stopped the run, and in what step; its exit code. */
  const stoppedBefore = (step: string): Promise<number> => {
    const stopped = stop?.stopped ?? { why: 'the run was stopped', code: EXIT.incomplete }
    return endEarly(`${stopped.why}, before any check ran (${step})`, stopped.code)
  }
  const harnessFailed = (step: string, err: unknown): Promise<number> => {
    const message = err instanceof Error ? err.message : String(err)
    io.err.write(`idp-conformance: the harness failed (${step}): ${message}\n`)
    return endEarly(`the harness failed (${step}): ${message}`, EXIT.incomplete)
  }

  try {
    // the first line, before anything slow is loaded or started
    const where = remote
      ? `target ${values['base-url'] ?? io.env.IDP_BASE_URL ?? 'from the configuration file'}`
      : 'starting the embedded reference server'
    io.out.write(`idp-conformance ${suiteVersion()}: ${where}\n`)
    if (remote) {
      try {
        const { resolveTarget } = await import('./harness/target.ts')
        target = resolveTarget(await targetConfig(flags, io.env))
      } catch (err) {
        if (!(err instanceof UsageError)) throw err
        io.err.write(`idp-conformance: ${err.message}\n`)
        return EXIT.usage
      }
    } else {
      starting = import('./harness/embedded.ts').then(({ startEmbedded }) => startEmbedded())
      let up
      try {
        up = await (stop ? stop.until(starting) : starting.then((value) => ({ value })))
      } catch (err) {
        const message = (err as Error).message
        io.err.write(`idp-conformance: could not start the embedded server: ${message}\n`)
        return await endEarly(`the embedded server did not start: ${message}`, EXIT.unreachable)
      }
      if (!up) return await stoppedBefore('the embedded reference server was starting')
      embedded = up.value
      target = embedded.target
    }
    if (stop?.stopped) return await stoppedBefore('the target was being set up')

    // the run's speed (pace.ts): seeded with the preflight's sign-in, when it reached the client,
    // so that the checks that start before the run's own browser rounds are timed get limits
    // that fit the machine
    const pace = new Pace()
    if (values['no-preflight'] || dryRun) {
      // the dry run is the sign-in's own diagnosis: it needs only a target that answers
      const reachable = await probe(target)
      if (!reachable.ok) {
        io.err.write(`idp-conformance: target ${target.baseUrl}: ${reachable.message}\n`)
        return await endEarly(
          reachable.message,
          reachable.exit === 'usage' ? EXIT.usage : EXIT.unreachable,
        )
      }
    } else {
      // the settings the run stands on, tried before any check (preflight.ts)
      let done
      try {
        const { preflight } = await import('./preflight.ts')
        const checking = preflight(target, { configFile: values.config ?? io.env.IDP_CONFIG })
        done = stop ? await stop.until(checking) : { value: await checking }
      } catch (err) {
        return await harnessFailed('the preflight', err)
      }
      if (!done) return await stoppedBefore('the preflight was trying the settings')
      const checked = done.value
      for (const note of checked.notes) io.out.write(`Note (preflight): ${note}\n`)
      if (!checked.ok) {
        io.err.write(
          `idp-conformance: preflight: ${checked.message}\nNo check was run (--no-preflight runs them anyway).\n`,
        )
        return await endEarly(
          `preflight: ${checked.message}`,
          checked.exit === 'usage' ? EXIT.usage : EXIT.unreachable,
        )
      }
      io.out.write(
        `Preflight: ${checked.confirmed.join('; ') || 'nothing could be confirmed (see the notes); the run goes on'} (${(checked.durationMs / 1000).toFixed(1)} s)\n`,
      )
      if (checked.signIn) pace.seed(checked.signIn.ms, checked.signIn.from)
    }
    if (dryRun) {
      const dir = values['report-dir'] ?? join('reports', 'login-dry-run')
      io.out.write(`Login dry run against ${target.baseUrl}\n`)
      const { loginDryRun } = await import('./harness/login-dry-run.ts')
      const dry = await loginDryRun(target, dir, (line) => io.out.write(`${line}\n`))
      io.out.write(`log and screenshots in ${dir}\n`)
      io.out.write(dry.signedIn ? 'Result: SIGNED IN\n' : 'Result: NOT SIGNED IN\n')
      return dry.signedIn ? EXIT.ok : EXIT.failures
    }
    if (!stop) throw new Error('a run of checks has its stop')
    const loading = await stop.until(import('./runner.ts'))
    if (!loading) return await stoppedBefore('the checks were being loaded')
    const { notRunResult, runChecks } = loading.value
    const color = useColor(io.out, io.env)
    if (!target.embedded) {
      // checks that only the embedded server can host are not run, and not counted as skipped
      const embeddedOnly = ids.filter((id) => embeddedOnlyReason(id))
      ids = ids.filter((id) => !embeddedOnlyReason(id))
      io.out.write(plannedSkips([...ids, ...embeddedOnly], target))
      if (ids.length === 0) {
        io.err.write('idp-conformance: every selected check runs only on the embedded server\n')
        return EXIT.usage
      }
    }
    io.out.write(
      `Running ${plural(ids.length, 'check')} against ${target.baseUrl}${target.embedded ? ' (embedded reference server)' : ''}${shuffle === undefined ? '' : `, in an order shuffled with seed ${shuffle}`}\n`,
    )
    const checksStartedAt = new Date()
    if (showProgress(io.out, io.env)) {
      // the time left from the durations the last report of this target recorded, if any
      const previous =
        values['rerun-failed'] ??
        (values['report-dir'] ? join(values['report-dir'], 'report.json') : undefined)
      const recorded = previous === undefined ? undefined : recordedDurations(previous, target)
      progress = new Progress(ids, recorded, checksStartedAt.getTime())
      live = progressWriter(io.out, progress)
      const drawn = live
      drawn.tick()
      ticking = setInterval(() => drawn.tick(), 1000).unref()
      say = (s) => drawn.write(s)
    }
    let info: RunInfo | undefined
    const started = embedded
    const twin = started && ((): Promise<Embedded> => started.twin())
    checksRunning = true
    const run = await stop.settle(
      runChecks(target, {
        ids,
        concurrency,
        checkTimeoutMs,
        pace,
        // an explicit --check-timeout holds as given; the default scales with the run's speed
        scaleCheckTimeout: values['check-timeout'] === undefined,
        onResult: (r) => {
          finished.set(r.id, r)
          progress?.done(r)
          say(`${formatResultLine(r, color)}\n`)
        },
        onFinished: (i) => (info = i),
        onNotice: (message) => say(`Note: ${message}\n`),
        ...(shuffle === undefined ? {} : { shuffle }),
        // the exclusive checks run on a second embedded server beside the rest (runner.ts)
        ...(twin ? { twin } : {}),
        stop: stop.signal,
      }),
    )
    checksRunning = false
    clearInterval(ticking)
    live?.end()
    say = (s) => io.out.write(s)
    const stopped = stop.stopped
    // a run that did not come back in time (or failed) reports what finished, the rest not run
    const results =
      run ??
      ids.map((id) => finished.get(id) ?? notRunResult(id, stopped?.why ?? 'the run was stopped'))
    io.out.write(`${formatSummary(results, Date.now() - checksStartedAt.getTime())}\n`)
    if (info) io.out.write(`${formatRunInfo(info)}\n`)
    if (shuffle !== undefined)
      io.out.write(`Order: shuffled with seed ${shuffle} (--shuffle ${shuffle} replays it)\n`)
    const verdict = await writeReports(results, stopped?.why, info?.speed)
    for (const line of verdict.excused) io.out.write(`known failure: ${line}\n`)
    for (const line of verdict.unused) io.out.write(`unused known-failures entry: ${line}\n`)
    for (const line of verdict.problems) io.out.write(`fails the run: ${line}\n`)
    if (stopped) {
      io.out.write(`Result: INCOMPLETE (${stopped.why})\n`)
      return stopped.code
    }
    io.out.write(verdict.passed ? 'Result: PASSED\n' : 'Result: FAILED\n')
    return verdict.passed ? EXIT.ok : EXIT.failures
  } catch (err) {
    // an error of the harness itself, outside the checks: reported, never a crash
    return await harnessFailed('outside the checks', err)
  } finally {
    clearInterval(ticking)
    live?.end()
    stop?.dispose()
    unguard()
    // a stopped run may leave checks (or the server's start) behind it: neither is waited for
    // without end
    const closing = embedded
      ? embedded.stop()
      : starting
        ? starting.then((e) => e.stop())
        : (target?.dispatcher.close() ?? Promise.resolve())
    if (stop?.stopped || !embedded) await settledWithin(closing, STOP_GRACE_MS)
    else await closing
  }
}

/**
 * How the run signed users in and what it sent: one line the benchmark reads, and the fallback
 * to browser sign-ins when the target's session could not be replayed.
 */
export function formatRunInfo(info: RunInfo): string {
  const c = info.counters
  const lines = [
    `Harness: ${plural(c.browserSignIns, 'browser sign-in')}, ${plural(c.browserChecks, 'check')} drove the browser, ${plural(c.sessionReplays, 'code')} from a replayed IdP session, ${plural(c.browserContexts, 'browser context')}, ${plural(c.httpRequests, 'HTTP request')}`,
  ]
  const speed = info.speed && describeSpeed(info.speed)
  if (speed) lines.push(`Speed: ${speed}`)
  return lines.join('\n')
}

/** The target configuration of the flags and environment (its schema loaded on first use). */
async function targetConfig(flags: TargetFlags, env: NodeJS.ProcessEnv): Promise<TargetConfig> {
  const { loadTargetConfig } = await import('./target-config.ts')
  return loadTargetConfig(flags, env)
}

/**
 * Whether the discovery document can be fetched over verified TLS (--no-preflight and the
 * login dry run), else why: a certificate not trusted is a setting to fix (exit 2), anything
 * else the target unreachable (exit 3).
 */
async function probe(
  target: Target,
): Promise<{ ok: true } | { ok: false; exit: 'usage' | 'unreachable'; message: string }> {
  const { fetchVia } = await import('./harness/target.ts')
  const { transportProblem } = await import('./harness/transport.ts')
  try {
    const res = await fetchVia(
      target.dispatcher,
      `${target.baseUrl}/.well-known/openid-configuration`,
      {
        redirect: 'manual',
      },
    )
    await res.arrayBuffer()
    return { ok: true }
  } catch (err) {
    const problem = transportProblem(err)
    if (problem?.kind === 'tls') return { ok: false, exit: 'usage', message: problem.message }
    if (problem) return { ok: false, exit: 'unreachable', message: problem.message }
    const cause = (err as Error & { cause?: Error & { code?: string } }).cause
    const why = cause ? `${cause.code ?? cause.name}: ${cause.message}` : (err as Error).message
    return { ok: false, exit: 'unreachable', message: `the target is unreachable (${why})` }
  }
}

/** The resolved configuration with every secret replaced, for --print-config. */
export function redactConfig(config: TargetConfig | undefined): unknown {
  if (!config) return { target: 'embedded reference server (no --base-url)' }
  const clients = Object.fromEntries(
    Object.entries(config.clients).map(([k, c]) => [k, { ...c, secret: '[redacted]' }]),
  )
  const users = Object.fromEntries(
    Object.entries(config.users).map(([k, u]) => [k, { ...u, password: '[redacted]' }]),
  )
  return { ...config, ca: config.ca ? '[PEM certificate]' : undefined, clients, users }
}
