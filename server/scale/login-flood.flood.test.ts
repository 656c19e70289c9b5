import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startFloodClient } from '../../scripts/bench/flood.ts'
import { httpTo, type Http } from '../../scripts/bench/http-flow.ts'
import type { App } from '../app.ts'
import { loadConfig, type RateLimit, type RateLimitGroup } from '../config.ts'
import { listeningApp } from '../test-helpers.ts'

// Issue 33, done-when: "a sign-in flood leaves /health/ready and the token endpoint answering
// within their normal p99 × 2". Timings are never compared with a number of milliseconds: each
// round measures the normal p99 (before and after the flood) and the flooded p99 in the same
// run, on the same server, and compares them. The flood comes from a process of its own (an
// attacker is not inside the server), FLOOD failed sign-ins at once, each retried at once.
// It runs alone with npm run test:flood (not in .ci/run): what it compares is latency, which any
// other work on the machine moves, and the target is not yet met reliably on a loaded machine.

const FLOOD = 24
/** How long each phase samples; a round is calm, flooded, calm. */
const PHASE_MS = 3000
/** Rounds at most: a round passes or the next one measures again (a loaded CI machine). */
const ROUNDS = 3
/**
 * A p99 below this many ms is taken as this: on a 2-core machine the scheduler's own slices
 * are milliseconds, and 2 × a 3-ms p99 would be judging the kernel, not the server.
 */
const P99_FLOOR_MS = 10

let app: App
let base: string
let http: Http
let dir: string
let caPath: string
beforeAll(async () => {
  const lifted: RateLimit = { limit: 1_000_000_000, window: 60 }
  const limits = loadConfig({}, {}).rateLimits
  const started = await listeningApp({
    // the server's default hash (Argon2id at OWASP's minimum, 19 MiB, tens of ms), with the
    // gate's production shape: 2 at once, a short queue
    passwordHashConcurrency: 2,
    passwordHashQueue: 4,
    // the measured endpoints and the flood are not stopped by their limits (the bench lifts
    // them too): what is judged is the server's latency, not its rate limiting
    rateLimits: Object.fromEntries(Object.keys(limits).map((group) => [group, lifted])) as Record<
      RateLimitGroup,
      RateLimit
    >,
  })
  app = started.app
  const ca = started.tls.ca ?? ''
  base = `https://127.0.0.1:${started.port}`
  http = httpTo(base, ca)
  dir = mkdtempSync(join(tmpdir(), 'login-flood-'))
  caPath = join(dir, 'ca.pem')
  writeFileSync(caPath, ca)
})
afterAll(async () => {
  await app.stop()
  rmSync(dir, { recursive: true, force: true })
})

const tokenBody = new URLSearchParams({
  grant_type: 'client_credentials',
  client_id: 'service-client',
  client_secret: 'service-secret',
  scope: 'api:reports',
}).toString()

/** One request after another for `ms`; each one's latency. Every answer must be 200. */
async function sample(
  ms: number,
  request: () => Promise<Response>,
): Promise<{ latencies: number[]; statuses: Set<number> }> {
  const latencies: number[] = []
  const statuses = new Set<number>()
  const end = performance.now() + ms
  while (performance.now() < end) {
    const t0 = performance.now()
    const res = await request()
    await res.arrayBuffer()
    latencies.push(performance.now() - t0)
    statuses.add(res.status)
  }
  return { latencies, statuses }
}

const p99 = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return Math.max(
    P99_FLOOR_MS,
    sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
  )
}

/** /health/ready and a client_credentials token, side by side, for `ms`: their p99s. */
async function phase(ms: number) {
  const [ready, token] = await Promise.all([
    sample(ms, () => http('/health/ready')),
    sample(ms, () =>
      http('/auth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: tokenBody,
      }),
    ),
  ])
  expect([...ready.statuses], 'every /health/ready answer').toEqual([200])
  expect([...token.statuses], 'every token answer').toEqual([200])
  return { ready: p99(ready.latencies), token: p99(token.latencies) }
}

describe('a sign-in flood cannot stall the API (issue 33)', () => {
  test(
    `while ${FLOOD} failed sign-ins run at once, /health/ready and the token endpoint answer within 2 × their p99 without them`,
    { timeout: 240_000 },
    async () => {
      // warm: connections open and the measured routes compiled before anything is counted
      await phase(1000)
      const rounds: string[] = []
      let passed = false
      for (let round = 0; round < ROUNDS && !passed; round++) {
        const before = await phase(PHASE_MS)
        const flood = await startFloodClient(base, caPath, FLOOD)
        let flooded: Awaited<ReturnType<typeof phase>>
        let statuses: Record<string, number>
        try {
          flooded = await phase(PHASE_MS)
        } finally {
          statuses = await flood.stop()
        }
        const after = await phase(PHASE_MS)
        // a round counts only if the flood really flooded: the hashing gate was full and
        // refused sign-ins
        const refused = statuses['503'] ?? 0
        const normal = {
          ready: (before.ready + after.ready) / 2,
          token: (before.token + after.token) / 2,
        }
        const ratios = { ready: flooded.ready / normal.ready, token: flooded.token / normal.token }
        rounds.push(
          `round ${round + 1}: /health/ready p99 ${flooded.ready.toFixed(0)} ms flooded vs ${before.ready.toFixed(0)}/${after.ready.toFixed(0)} ms (${ratios.ready.toFixed(2)} ×), token p99 ${flooded.token.toFixed(0)} vs ${before.token.toFixed(0)}/${after.token.toFixed(0)} ms (${ratios.token.toFixed(2)} ×); flood answers ${JSON.stringify(statuses)}`,
        )
        passed = refused > 0 && ratios.ready <= 2 && ratios.token <= 2
      }
      // the measured ratios, pass or fail: what a report of this run quotes
      console.info(rounds.join('\n'))
      expect(passed, rounds.join('\n')).toBe(true)
      // the server is still itself: no hold left behind once the flood stopped
      expect(app.deps.hashing.held).toBe(0)
    },
  )
})
