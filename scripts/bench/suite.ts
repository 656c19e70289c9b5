import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CheckResult } from '../../conformance/harness/types.ts'
import { timing } from '../../conformance/report/summary.ts'

/**
 * `npm run bench -- --suite [--runs N] [--parallel N]`: runs the whole embedded conformance
 * suite N times (default 3), each in its own process as a user would, and reports the min and
 * median wall time, the time per area, and what the harness did (browser sign-ins, browser
 * contexts, HTTP requests), read from each run's summary line. A benchmark, not a test: it
 * asserts nothing about time.
 */
export async function benchSuite(argv: readonly string[]): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const runs = Number(arg('--runs') ?? 3)
  const parallel = arg('--parallel')
  const outDir = arg('--out') ?? 'reports/bench'
  const load = loadavg()[0] ?? 0
  const measured: {
    wallMs: number
    exit: number | null
    harness: string
    areas: { area: string; durationMs: number; checks: number }[]
    verdicts: string
  }[] = []
  for (let run = 1; run <= runs; run++) {
    const dir = mkdtempSync(join(tmpdir(), 'idp-suite-bench-'))
    const args = [
      '--import',
      'tsx',
      'scripts/conformance.ts',
      '--report-dir',
      dir,
      ...(parallel ? ['--parallel', parallel] : []),
    ]
    const started = performance.now()
    const { exit, out } = await new Promise<{ exit: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
      let text = ''
      child.stdout.on('data', (d: Buffer) => (text += d.toString()))
      child.once('close', (code) => resolve({ exit: code, out: text }))
    })
    const wallMs = performance.now() - started
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as {
      checks: CheckResult[]
    }
    rmSync(dir, { recursive: true, force: true })
    const harness = /^Harness: (.*)$/m.exec(out)?.[1] ?? '(no harness line)'
    const verdicts = /^\d+ checks? in .*$/m.exec(out)?.[0] ?? ''
    measured.push({ wallMs, exit, harness, areas: timing(report.checks).areas, verdicts })
    process.stdout.write(
      `run ${run}/${runs}: ${(wallMs / 1000).toFixed(1)} s wall, exit ${String(exit)}\n  ${verdicts}\n  ${harness}\n`,
    )
  }
  const walls = measured.map((m) => m.wallMs).sort((a, b) => a - b)
  const median = walls[Math.floor(walls.length / 2)] ?? 0
  const medianRun = measured.find((m) => m.wallMs === median) ?? measured[0]
  const summary = {
    runs,
    cpus: cpus().length,
    loadAverageAtStart: Number(load.toFixed(2)),
    minWallS: Number(((walls[0] ?? 0) / 1000).toFixed(1)),
    medianWallS: Number((median / 1000).toFixed(1)),
    medianRun: medianRun && {
      harness: medianRun.harness,
      verdicts: medianRun.verdicts,
      areas: medianRun.areas.map((a) => ({
        ...a,
        seconds: Number((a.durationMs / 1000).toFixed(1)),
      })),
    },
  }
  process.stdout.write(
    `\nfull embedded suite, ${runs} runs on ${summary.cpus} cores (load average ${summary.loadAverageAtStart} at start):\n` +
      `  wall time min ${summary.minWallS} s, median ${summary.medianWallS} s\n` +
      `  median run: ${medianRun?.harness ?? ''}\n` +
      `  time per area (median run, sum of check durations):\n` +
      (medianRun?.areas ?? [])
        .map(
          (a) =>
            `    ${a.area.padEnd(20)} ${(a.durationMs / 1000).toFixed(1)} s in ${a.checks} checks`,
        )
        .join('\n') +
      '\n',
  )
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, 'suite.json'), `${JSON.stringify(summary, null, 2)}\n`)
  process.stdout.write(`written to ${join(outDir, 'suite.json')}\n`)
}
