import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../server/test-helpers.ts'
import { startNode, startReferenceServer, stop, waitForLine } from './process.ts'
import { runScenario, type ScenarioResult } from './scenarios.ts'

/** How many failed sign-ins the flood keeps running at once (issue 33: 24 from one address). */
export const FLOOD = 24

export interface FloodResult {
  /** client_credentials (4 connections) and /health/ready (1 connection) without the flood. */
  readonly calm: { readonly token: ScenarioResult; readonly ready: ScenarioResult }
  /** The same two, measured at the same time, while the flood runs. */
  readonly flooded: { readonly token: ScenarioResult; readonly ready: ScenarioResult }
  /** The login POST statuses the flood saw (0: a network error). */
  readonly statuses: Record<string, number>
  /** flooded p99 / calm p99 of each. */
  readonly ratios: { readonly token: number; readonly ready: number }
}

/**
 * Starts flood-client.ts against `base` (`loops` failed sign-ins at once, each retried at once)
 * and resolves once it is under way; `stop` ends it and resolves with the login statuses it
 * saw (0: a network error). Bounded: the start waits 120 s at most, the stop 5 s.
 */
export async function startFloodClient(
  base: string,
  caPath: string,
  loops = FLOOD,
): Promise<{ stop(): Promise<Record<string, number>> }> {
  const client = startNode('scripts/bench/flood-client.ts', {
    BASE_URL: base,
    CA_PATH: caPath,
    FLOOD: String(loops),
  })
  let out = ''
  client.stdout?.on('data', (c: Buffer) => (out += c.toString()))
  // 'close', not 'exit': the child's stdout is read to its end
  const closed = new Promise<void>((resolve) => client.once('close', () => resolve()))
  try {
    // bounded: the first login post answered (a refusal, held at most PASSWORD_HASH_BUSY_HOLD)
    await waitForLine(client, /flooding/, 120_000)
  } catch (err) {
    await stop(client)
    throw err
  }
  return {
    async stop() {
      await stop(client)
      await closed
      const line = out.split('\n').find((l) => l.startsWith('{"statuses"'))
      return line ? (JSON.parse(line) as { statuses: Record<string, number> }).statuses : {}
    },
  }
}

/**
 * The sign-in flood scenario (issue 33): client_credentials at a moderate load and
 * /health/ready beside it, first alone, then while FLOOD failed sign-ins run at once (each a
 * password hash, retried at once whatever the answer), as ratios of p99s measured in the same
 * run. The flood comes from a process of its own (flood-client.ts), so the load generator's
 * latencies are the server's and not the flood client's own event loop.
 */
export async function floodScenario(opts: {
  readonly base: string
  readonly caPath: string
  readonly serverPid: number
  readonly seconds: number
  readonly warmup: number
  readonly ccBody: string
}): Promise<FloodResult> {
  const token = {
    url: `${opts.base}/auth/token`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: opts.ccBody,
    connections: 4,
    duration: opts.seconds,
  }
  const ready = { url: `${opts.base}/health/ready`, connections: 1, duration: opts.seconds }
  const both = async (label: string) => {
    const [t, r] = await Promise.all([
      runScenario(`client_credentials, 4 connections${label}`, opts.serverPid, token, opts.warmup),
      runScenario(`GET /health/ready, 1 connection${label}`, opts.serverPid, ready, opts.warmup),
    ])
    return { token: t, ready: r }
  }
  const calm = await both(' (p99 baseline)')
  const client = await startFloodClient(opts.base, opts.caPath)
  let statuses: Record<string, number> = {}
  let flooded: FloodResult['flooded']
  try {
    flooded = await both(`, ${FLOOD} failed sign-ins at once`)
  } finally {
    statuses = await client.stop()
  }
  const ratio = (a: ScenarioResult, b: ScenarioResult) => a.p99Ms / Math.max(1, b.p99Ms)
  return {
    calm,
    flooded,
    statuses,
    ratios: { token: ratio(flooded.token, calm.token), ready: ratio(flooded.ready, calm.ready) },
  }
}

/** The bench report's sentence for the flood. */
export function floodSummary({ calm, flooded, statuses, ratios }: FloodResult): string {
  const answers = Object.entries(statuses)
    .map(([status, n]) => `${n} × ${status === '0' ? 'network error' : status}`)
    .join(', ')
  return `Sign-in flood (${FLOOD} failed sign-ins at once, retried at once: ${answers || 'no answer'}): client_credentials p99 ${flooded.token.p99Ms} ms against ${calm.token.p99Ms} ms without, ${ratios.token.toFixed(2)} ×; /health/ready p99 ${flooded.ready.p99Ms} ms against ${calm.ready.p99Ms} ms, ${ratios.ready.toFixed(2)} × (target ≤ 2 × each).`
}

/** npm run bench -- --flood [--quick]: the flood scenario alone, against a server of its own. */
export async function benchFlood(quick: boolean): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'idp-bench-'))
  const port = await freePort()
  const server = startReferenceServer(port, dataDir)
  try {
    await waitForLine(server, /listening on/)
    const result = await floodScenario({
      base: `https://127.0.0.1:${port}`,
      caPath: join(dataDir, 'tls', 'ca.pem'),
      serverPid: server.pid ?? 0,
      seconds: quick ? 3 : 10,
      warmup: quick ? 1 : 3,
      ccBody: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'service-client',
        client_secret: 'service-secret',
        scope: 'api:reports',
      }).toString(),
    })
    console.log(`${cpus().length} cores, Node ${process.version}${quick ? ' (quick mode)' : ''}`)
    for (const r of [
      result.calm.token,
      result.flooded.token,
      result.calm.ready,
      result.flooded.ready,
    ])
      console.log(
        `${r.name}: ${r.reqPerSec} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, ${r.errors + r.non2xx} errors`,
      )
    console.log(floodSummary(result))
  } finally {
    await stop(server)
    rmSync(dataDir, { recursive: true, force: true })
  }
}
