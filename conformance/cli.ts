import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import { registeredChecks, runChecks } from './harness/runner.ts'
import { fetchVia, resolveTarget, type Target } from './harness/target.ts'
import type { CheckResult } from './harness/types.ts'
import { buildReport } from './report/json.ts'
import { htmlReport } from './report/html.ts'
import { junitReport } from './report/junit.ts'
import { runPassed } from './report/summary.ts'
import { formatResultLine, formatSummary, useColor } from './report/terminal.ts'
import { requirements, type RequirementId } from './requirements.ts'
import { loadTargetConfig, UsageError } from './target-config.ts'

/** Exit codes: the contract CI pipelines rely on. */
export const EXIT = { ok: 0, failures: 1, usage: 2, unreachable: 3 } as const

export interface Io {
  readonly out: { write(s: string): unknown; isTTY?: boolean }
  readonly err: { write(s: string): unknown }
  readonly env: NodeJS.ProcessEnv
}

const USAGE = `usage: idp-conformance [run] [options]

  (no target)            start the embedded reference server and run the suite against it
  --base-url URL         run against this deployment (https)
  --config FILE          JSON: clients, users and other facts about the target
  --ca FILE              PEM certificate authority to trust for the target
  --report-dir DIR       write junit.xml, report.json and report.html there
  --only PATTERNS        comma-separated IDs, ID globs (PKCE-*), areas or levels to run
  --strict               SHOULD-level warnings fail the run too
  --list                 list the checks and exit
  -h, --help             this text
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

/** Selects checks by ID, ID glob, area or level (case-insensitive). */
export function selectChecks(patterns: string | undefined): RequirementId[] {
  const all = registeredChecks()
  if (!patterns) return all
  const wanted = patterns
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  const matches = (id: RequirementId, p: string): boolean => {
    const req = requirements[id]
    const glob = new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
      'i',
    )
    return (
      glob.test(id) || req.area.toLowerCase() === p.toLowerCase() || req.level === p.toUpperCase()
    )
  }
  const selected = all.filter((id) => wanted.some((p) => matches(id, p)))
  if (selected.length === 0) throw new UsageError(`--only ${patterns} selects no check`)
  return selected
}

/** Runs the CLI; returns the exit code. Never throws for usage, configuration or network problems. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let values
  try {
    const parsed = parseArgs({
      args: argv[0] === 'run' ? argv.slice(1) : [...argv],
      options: {
        'base-url': { type: 'string' },
        config: { type: 'string' },
        ca: { type: 'string' },
        'report-dir': { type: 'string' },
        only: { type: 'string' },
        strict: { type: 'boolean' },
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
  let embedded: Embedded | undefined
  let target: Target
  let ids: RequirementId[]
  try {
    ids = selectChecks(values.only)
    if (values.list) {
      for (const id of ids)
        io.out.write(`${id} [${requirements[id].level}] ${requirements[id].title}\n`)
      return EXIT.ok
    }
    const remote = values['base-url'] ?? values.config ?? io.env.IDP_BASE_URL
    if (remote) {
      target = resolveTarget(
        loadTargetConfig(
          { baseUrl: values['base-url'], config: values.config, ca: values.ca },
          io.env,
        ),
      )
    } else {
      embedded = await startEmbedded()
      target = embedded.target
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err.write(`idp-conformance: ${err.message}\n`)
      return EXIT.usage
    }
    io.err.write(
      `idp-conformance: could not start the embedded server: ${(err as Error).message}\n`,
    )
    return EXIT.unreachable
  }

  try {
    const reachable = await probe(target)
    if (reachable !== true) {
      io.err.write(`idp-conformance: target ${target.baseUrl} is unreachable: ${reachable}\n`)
      return EXIT.unreachable
    }
    const color = useColor(io.out, io.env)
    io.out.write(
      `Running ${ids.length} checks against ${target.baseUrl}${target.embedded ? ' (embedded reference server)' : ''}\n`,
    )
    const startedAt = new Date()
    const results = await runChecks(target, {
      ids,
      onResult: (r) => io.out.write(`${formatResultLine(r, color)}\n`),
    })
    const finishedAt = new Date()
    io.out.write(`${formatSummary(results)}\n`)
    const strict = values.strict ?? false
    if (values['report-dir'])
      writeReports(values['report-dir'], results, target, { startedAt, finishedAt, strict })
    const passed = runPassed(results, strict)
    io.out.write(passed ? 'Result: PASSED (every MUST check passed)\n' : 'Result: FAILED\n')
    return passed ? EXIT.ok : EXIT.failures
  } finally {
    await embedded?.stop()
    if (!embedded) await target.dispatcher.close()
  }
}

/** true when the discovery document can be fetched over verified TLS, else the reason. */
async function probe(target: Target): Promise<true | string> {
  try {
    const res = await fetchVia(
      target.dispatcher,
      `${target.baseUrl}/.well-known/openid-configuration`,
      {
        redirect: 'manual',
      },
    )
    await res.arrayBuffer()
    return true
  } catch (err) {
    const cause = (err as Error & { cause?: Error & { code?: string } }).cause
    return cause ? `${cause.code ?? cause.name}: ${cause.message}` : (err as Error).message
  }
}

function writeReports(
  dir: string,
  results: readonly CheckResult[],
  target: Target,
  run: { startedAt: Date; finishedAt: Date; strict: boolean },
): void {
  mkdirSync(dir, { recursive: true })
  const report = buildReport({
    results,
    target: { baseUrl: target.baseUrl, embedded: target.embedded },
    version: suiteVersion(),
    ...run,
  })
  writeFileSync(join(dir, 'junit.xml'), junitReport(results))
  writeFileSync(join(dir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`)
  writeFileSync(join(dir, 'report.html'), htmlReport(report))
}
