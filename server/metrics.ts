import cluster from 'node:cluster'
import { randomUUID } from 'node:crypto'
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi'
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
} from 'prom-client'
import type { Deps } from './deps.ts'
import { grants } from './grants/index.ts'

/** Server events (Deps['log']) counted as storage errors, by event. */
const STORAGE_EVENTS = new Set(['storage-unavailable', 'rate-limit-unavailable', 'purge-failed'])

export interface Metrics {
  readonly registry: Registry
  /** Counts an event of Deps['log'] that tells of a storage error. */
  event(event: string): void
  /** The hapi plugin: counts every response and serves GET /metrics. */
  plugin: Plugin<undefined>
}

/**
 * Prometheus metrics (prom-client) of one server process: requests by route, method and
 * status, latency histograms, tokens issued by grant, rate-limit rejections (429), storage
 * errors and the age of the signing key. In a `--workers` cluster each worker registers its
 * registry for prom-client's AggregatorRegistry, and `/metrics`, whichever worker answers it,
 * shows the sum over all workers (the primary aggregates, see `serveClusterMetrics`).
 */
export function createMetrics(deps: Pick<Deps, 'store' | 'keys' | 'clock'>): Metrics {
  const registry = new Registry()
  // prom-client's process and Node.js metrics (CPU, resident memory, heap, event-loop lag, open
  // file descriptors, GC): what an operator looks at first when the server is slow
  collectDefaultMetrics({ register: registry })
  const requests = new Counter({
    name: 'idp_http_requests_total',
    help: 'HTTP requests answered, by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'idp_http_request_duration_seconds',
    help: 'Time from receiving a request to its response, by route and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  })
  const tokens = new Counter({
    name: 'idp_tokens_issued_total',
    help: 'Successful token responses, by grant type',
    labelNames: ['grant'] as const,
    registers: [registry],
  })
  const rejections = new Counter({
    name: 'idp_rate_limit_rejections_total',
    help: 'Requests refused with 429 by a rate limit or the login throttle, by route',
    labelNames: ['route'] as const,
    registers: [registry],
  })
  const storageErrors = new Counter({
    name: 'idp_storage_errors_total',
    help: 'Storage errors: database unavailable, rate-limit counters unavailable, purge failed',
    labelNames: ['event'] as const,
    registers: [registry],
  })
  new Gauge({
    name: 'idp_signing_key_age_seconds',
    help: 'Age of the key tokens are signed with now',
    aggregator: 'max',
    registers: [registry],
    async collect() {
      try {
        const now = deps.clock()
        const { kid } = await deps.keys.signingKey(now)
        const key = (await deps.store.keys.list()).find((k) => k.kid === kid)
        if (key) this.set(now - key.createdAt)
      } catch {
        // the database is down: the storage error counters tell it
      }
    },
  })
  if (cluster.isWorker) {
    // answers the primary's requests for this worker's metrics (prom-client's IPC)
    new AggregatorRegistry()
    AggregatorRegistry.setRegistries([registry])
  }

  const plugin: Plugin<undefined> = {
    name: 'metrics',
    register(server) {
      server.route({
        method: 'GET',
        path: '/metrics',
        handler: async (_request: Request, h: ResponseToolkit) => {
          const text = cluster.isWorker ? await clusterMetrics() : await registry.metrics()
          return h.response(text).type(registry.contentType).header('cache-control', 'no-store')
        },
      })
      server.events.on('response', (request: Request) => {
        const route = request.route.path
        const method = request.method.toUpperCase()
        // no response object when the client went away first
        const raw = request.response as {
          statusCode?: number
          output?: { statusCode: number }
        } | null
        const status = raw?.statusCode ?? raw?.output?.statusCode ?? 0
        requests.inc({ route, method, status: String(status) })
        const end = request.info.completed || request.info.responded || Date.now()
        duration.observe({ route, method }, Math.max(0, end - request.info.received) / 1000)
        if (status === 429) rejections.inc({ route })
        if (route === '/auth/token' && status === 200) {
          const payload = request.payload as Record<string, unknown> | null
          const grant = payload?.grant_type
          if (typeof grant === 'string' && grants.has(grant)) tokens.inc({ grant })
        }
      })
    },
  }
  return {
    registry,
    plugin,
    event(event) {
      if (STORAGE_EVENTS.has(event)) storageErrors.inc({ event })
    },
  }
}

const REQUEST = 'idp-conformance:metrics-req'
const RESPONSE = 'idp-conformance:metrics-res'

/** A worker asks the primary for the metrics of every worker, aggregated. */
function clusterMetrics(): Promise<string> {
  const id = randomUUID()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage)
      reject(new Error('the primary did not answer the metrics request'))
    }, 5000)
    const onMessage = (message: unknown): void => {
      const m = message as { type?: string; id?: string; text?: string; error?: string }
      if (m.type !== RESPONSE || m.id !== id) return
      clearTimeout(timer)
      process.off('message', onMessage)
      if (m.error !== undefined) reject(new Error(m.error))
      else resolve(m.text ?? '')
    }
    process.on('message', onMessage)
    process.send?.({ type: REQUEST, id })
  })
}

/** In the cluster's primary: answers the workers' `/metrics` with every worker's sum. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker, message: { type?: string; id?: string }) => {
    if (message.type !== REQUEST) return
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: RESPONSE, id: message.id, text }),
      (err: unknown) =>
        worker.send({ type: RESPONSE, id: message.id, error: (err as Error).message }),
    )
  })
}
