import cluster from 'node:cluster'
import { parseArgs } from 'node:util'
import type { Logger } from 'pino'
import { createServer } from '../server/app.ts'
import { ConfigError, loadConfig, type Config } from '../server/config.ts'
import { formatFinding } from '../server/explain/findings.ts'
import { createLogger, eventLog } from '../server/logging.ts'
import { serveClusterMetrics } from '../server/metrics.ts'
import { RegistrationError } from '../server/registry/registrations.ts'
import { devCertificateHosts, loadTls, type TlsMaterial } from '../server/tls.ts'

const USAGE = `usage: idp-conformance serve [--clients FILE] [--users FILE] [--explain | --no-explain]
                             [--workers N]

  --clients FILE   your clients (JSON), upserted at every start; env CLIENTS_FILE
  --users FILE     your users (JSON), upserted at every start; env USERS_FILE
  --explain        record what each client does against the RFCs (default, unless NODE_ENV=production
                   or --workers > 1: each worker keeps its own findings)
  --no-explain     do not; env EXPLAIN=false
  --workers N      N processes (node:cluster) on one port and one PostgreSQL database; env WORKERS

Everything else is configured by environment (README: Running the reference server).`

// npm run serve: the reference server on https://127.0.0.1:8443 (ARCHITECTURE.md contracts)
try {
  let args
  try {
    args = parseArgs({
      args: process.argv.slice(2).filter((a, i) => !(i === 0 && a === 'serve')),
      options: {
        clients: { type: 'string' },
        users: { type: 'string' },
        explain: { type: 'boolean' },
        'no-explain': { type: 'boolean' },
        workers: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values
  } catch (err) {
    throw new ConfigError([`${(err as Error).message}\n\n${USAGE}`])
  }
  if (args.help) {
    console.log(USAGE)
    process.exit(0)
  }
  const workersArg = args.workers ?? process.env.WORKERS ?? '1'
  if (!/^([1-9]|[1-5][0-9]|6[0-4])$/.test(workersArg))
    throw new ConfigError([`--workers must be a whole number from 1 to 64, not ${workersArg}`])
  const workers = Number(workersArg)
  const env: NodeJS.ProcessEnv = {
    // client-check mode is on by default when serving by one process, and never in production
    ...(process.env.NODE_ENV === 'production' || workers > 1 ? {} : { EXPLAIN: 'true' }),
    ...process.env,
    ...(args.clients !== undefined ? { CLIENTS_FILE: args.clients } : {}),
    ...(args.users !== undefined ? { USERS_FILE: args.users } : {}),
    ...(args.explain ? { EXPLAIN: 'true' } : {}),
    ...(args['no-explain'] ? { EXPLAIN: 'false' } : {}),
  }
  const config = loadConfig(env)
  if (workers > 1 && config.databaseUrl.startsWith('sqlite:'))
    throw new ConfigError([
      '--workers needs PostgreSQL (DATABASE_URL=postgres://…): a SQLite file is served by exactly one process',
    ])
  const tls = await loadTls({ ...config, hosts: devCertificateHosts(config.host, config.baseUrl) })
  // JSON lines on stdout (pretty on a terminal): an access line per request, every event
  const logger = createLogger({ level: config.logLevel })
  if (workers > 1 && cluster.isPrimary) {
    await runPrimary(config, tls, workers, logger)
  } else {
    await runServer(config, tls, logger)
  }
} catch (err) {
  console.error(
    err instanceof ConfigError || err instanceof RegistrationError
      ? err.message
      : `failed to start: ${(err as Error).message}`,
  )
  process.exit(err instanceof ConfigError || err instanceof RegistrationError ? 2 : 1)
}

function banner(config: Config, tls: TlsMaterial, workers: number, logger: Logger): void {
  logger.info(
    { event: 'listening', baseUrl: config.baseUrl, workers },
    `reference server listening on ${config.baseUrl}${workers > 1 ? ` (${workers} workers)` : ''}`,
  )
  if (tls.caPath)
    logger.info(
      { event: 'dev-ca', caPath: tls.caPath },
      `dev CA certificate: ${tls.caPath} (curl --cacert ${tls.caPath} ${config.baseUrl}/.well-known/openid-configuration)`,
    )
  if (config.httpPort !== undefined)
    logger.info(
      { event: 'plain-listener', httpPort: config.httpPort },
      `plain HTTP listener on port ${config.httpPort} answers every request with an error`,
    )
  if (config.explain)
    logger.info(
      { event: 'explain-mode' },
      `explain mode: findings print here and at ${config.baseUrl}/dev/findings (JSON: /dev/findings.json); --no-explain turns it off`,
    )
  if (config.metrics)
    logger.info(
      { event: 'metrics' },
      `metrics: ${config.baseUrl}/metrics (Prometheus); keep it private (README: Metrics)`,
    )
}

/** One server process: the whole of `serve`, or one worker of the cluster. */
async function runServer(config: Config, tls: TlsMaterial, logger: Logger): Promise<void> {
  const worker = cluster.isWorker
  const app = await createServer(config, {
    tls,
    logger,
    onFinding: (finding) => console.log(formatFinding(finding)),
    // the primary has loaded fixtures and registrations once, before forking
    seed: !worker,
  })
  if (!worker)
    for (const warning of app.registrationWarnings)
      logger.warn({ event: 'registration-warning' }, warning)
  await app.start()
  if (!worker) banner(config, tls, 1, logger)
  const stop = (): void => {
    void app.stop().then(() => process.exit(0))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

/**
 * The cluster's primary: migrates, seeds and bootstraps the key set once, then forks the
 * workers, which share the port (node:cluster) and the database, and replaces a worker that
 * dies. SIGTERM/SIGINT stop the workers, then the primary.
 */
async function runPrimary(
  config: Config,
  tls: TlsMaterial,
  workers: number,
  logger: Logger,
): Promise<void> {
  const setup = await createServer(config, { tls, log: eventLog(logger) })
  for (const warning of setup.registrationWarnings)
    logger.warn({ event: 'registration-warning' }, warning)
  // every worker's /metrics asks the primary for the sum over all workers
  if (config.metrics) serveClusterMetrics()
  await setup.stop()
  let stopping = false
  const listening = new Set<number>()
  let recentDeaths: number[] = []
  let announced = false
  cluster.on('listening', (worker, address) => {
    if (address.port !== config.port) return
    listening.add(worker.id)
    if (!announced && listening.size === workers) {
      announced = true
      banner(config, tls, workers, logger)
    }
  })
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return
    const now = Date.now()
    recentDeaths = [...recentDeaths.filter((t) => t >= now - 60_000), now]
    const how = signal ? signal : `code ${String(code)}`
    logger.error(
      { event: 'worker-exit', workerPid: worker.process.pid, exitCode: code, signal },
      `worker ${String(worker.process.pid)} exited (${how}); ${recentDeaths.length > 5 ? 'too many exits in a minute, stopping' : 'starting another'}`,
    )
    if (recentDeaths.length > 5) {
      stopping = true
      for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM')
      process.exitCode = 1
      return
    }
    cluster.fork()
  })
  for (let i = 0; i < workers; i++) cluster.fork()
  const stop = (): void => {
    stopping = true
    const alive = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined)
    let left = alive.length
    if (left === 0) process.exit(0)
    for (const w of alive) {
      w.once('exit', () => {
        if (--left === 0) process.exit(0)
      })
      w.kill('SIGTERM')
    }
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}
