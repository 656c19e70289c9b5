import autocannon, { type Options, type Result } from 'autocannon'
import { cpuSeconds, sampleRss } from './process.ts'

export interface ScenarioResult {
  readonly name: string
  readonly requests: number
  readonly reqPerSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
  readonly non2xx: number
  /** Server CPU seconds per request (process CPU over the run / requests). */
  readonly cpuMsPerRequest: number
  readonly peakRssMiB: number
  /** Throughput over the scenario's baseline, when it has one. */
  ratio?: { readonly to: string; readonly value: number }
}

/**
 * Runs autocannon (in this process, so the load comes from outside the server's process)
 * against one scenario, bounded by duration or amount, and reads the server's CPU and RSS.
 * A warm-up of `warmupSeconds` with the same requests comes first and is not counted, so the
 * figures are of compiled code (the JIT), not of start-up; a scenario whose requests can only
 * succeed once (codes) warms up on its own.
 */
export async function runScenario(
  name: string,
  serverPid: number,
  options: Options,
  warmupSeconds = 0,
): Promise<ScenarioResult> {
  if (warmupSeconds > 0) {
    const { amount: _amount, ...rest } = options
    await autocannon({
      ...rest,
      duration: warmupSeconds,
      tlsOptions: { rejectUnauthorized: false },
    })
  }
  const cpu0 = cpuSeconds(serverPid)
  const rss = sampleRss(serverPid)
  // the load generator skips certificate checks: it only ever talks to the server it started
  const result: Result = await autocannon({ ...options, tlsOptions: { rejectUnauthorized: false } })
  const cpu = cpuSeconds(serverPid) - cpu0
  const { peak } = rss.stop()
  const total = result.requests.total
  return {
    name,
    requests: total,
    reqPerSec: Math.round(total / (result.duration || 1)),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuMsPerRequest: total > 0 ? (cpu * 1000) / total : 0,
    peakRssMiB: Math.round(peak),
  }
}

/** Runs `n` async jobs with at most `concurrency` at once; returns each job's duration, ms. */
export async function pool(
  n: number,
  concurrency: number,
  job: (i: number) => Promise<void>,
): Promise<number[]> {
  const durations: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++
        const t0 = performance.now()
        await job(i)
        durations.push(performance.now() - t0)
      }
    }),
  )
  return durations
}

export const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}
