import { once } from 'node:events'
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs'
import type { Server as HttpServer } from 'node:http'
import type { ServerOptions } from 'node:https'
import { dirname } from 'node:path'
import Hapi from '@hapi/hapi'
import Inert from '@hapi/inert'
import type { Logger } from 'pino'
import { passwordHashing, type Config } from './config.ts'
import { systemClock, type Clock, type Deps } from './deps.ts'
import { createExplain, type Finding } from './explain/findings.ts'
import { explainPlugin } from './explain/plugin.ts'
import { createKeystore, ensureSigningKey, type Keystore } from './keys/keystore.ts'
import { accessLog, eventLog } from './logging.ts'
import { createMetrics } from './metrics.ts'
import { createPlainListener } from './plain-listener.ts'
import { oauthErrors } from './plugins/oauth-errors.ts'
import { rateLimit } from './plugins/rate-limit.ts'
import { HSTS, transport } from './plugins/transport.ts'
import { answerClientErrors } from './plugins/client-errors.ts'
import { routes } from './routes/index.ts'
import { rpIssuers } from './rp/plugin.ts'
import { registerCookies } from './sessions.ts'
import { createKnexStore, migrate, openDatabase } from './store/knex/index.ts'
import { memoryRateLimits } from './store/memory-rate-limits.ts'
import { applyRegistrations, readRegistrations } from './registry/registrations.ts'
import { cachedClients } from './store/cached-clients.ts'
import { lockSqliteFile } from './store/sqlite-lock.ts'
import type { PurgePolicy, Store } from './store/store.ts'
import type { TlsMaterial } from './tls.ts'
import { loadFixtures } from '../fixtures/index.ts'
import { createHashingGate } from './users/hashing-gate.ts'
import { paddingCosts, verifyPasswordAtCost, type PasswordHashing } from './users/passwords.ts'
import { limitConnections } from './plugins/connections.ts'
import { bodyLimit } from './plugins/body-limit.ts'
import { hostHeader } from './plugins/host-header.ts'

export interface AppOptions {
  /** Certificate and key of the HTTPS listener. */
  readonly tls: TlsMaterial
  /** A store to use instead of opening `config.databaseUrl`. */
  readonly store?: Store
  readonly clock?: Clock
  /** Server events; default: `logger`'s, else errors on stderr. */
  readonly log?: Deps['log']
  /**
   * The JSON logger (logging.ts): an access line per request and every server event at its
   * level. Without it nothing but errors is printed (embedding and tests).
   */
  readonly logger?: Logger
  /** Rate limits to use instead of `config.rateLimits` (the embedded target's probe control). */
  readonly rateLimits?: Deps['rateLimits']
  /**
   * Load fixtures and registrations (default true). A cluster's workers skip it: their primary
   * did it once before forking them.
   */
  readonly seed?: boolean
  /** Called with each client-check finding when `config.explain` is on (serve prints them). */
  readonly onFinding?: (finding: Finding) => void
  /** How a password is checked against its stored hash (default: users/passwords.ts). */
  readonly verifyPassword?: Deps['verifyPassword']
}

export interface App {
  readonly server: Hapi.Server
  readonly deps: Deps
  /** The plain-HTTP listener, when `config.httpPort` is set. */
  readonly plain: HttpServer | undefined
  /** Notes on the registrations files (file:line: what to look at), for the operator. */
  readonly registrationWarnings: readonly string[]
  /** Deletes expired rows now (also every `config.purgeInterval` seconds once started). */
  purge(): Promise<Record<string, number>>
  start(): Promise<void>
  stop(): Promise<void>
}

/** Errors that mean the database is not (yet) there, as opposed to a wrong schema or query. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  // PostgreSQL: starting up, shutting down, too many connections
  '57P03',
  '57P01',
  '53300',
])
const unreachable = (err: unknown): boolean => {
  const e = err as { code?: string; name?: string; message?: string }
  return (
    UNREACHABLE.has(e.code ?? '') ||
    e.name === 'KnexTimeoutError' ||
    /timeout acquiring a connection/i.test(e.message ?? '')
  )
}

/** DATABASE_URL without its password, for messages. */
export function databaseUrlForLog(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return url.startsWith('sqlite:') ? url : '(not a URL)'
  }
}

/**
 * Runs `connect` (the first query: the migrations) until the database answers, for at most
 * `DATABASE_CONNECT_TIMEOUT` seconds, waiting 0.5, 1, 2, 4 s (then 4 s) between tries: a
 * database that starts a moment after the server (compose files, CI services) is waited for.
 * Any other error, or the deadline, ends the start with a message that names DATABASE_URL.
 */
async function untilReachable(
  connect: () => Promise<void>,
  config: Pick<Config, 'databaseUrl' | 'databaseConnectTimeout'>,
  log: Deps['log'],
): Promise<void> {
  const started = Date.now()
  const deadline = started + config.databaseConnectTimeout * 1000
  const where = databaseUrlForLog(config.databaseUrl)
  for (let attempt = 1; ; attempt++) {
    try {
      await connect()
      return
    } catch (err) {
      const message = (err as Error).message
      if (!unreachable(err))
        throw new Error(`the database at DATABASE_URL=${where} could not be migrated: ${message}`, {
          cause: err,
        })
      const wait = Math.min(4000, 500 * 2 ** (attempt - 1))
      if (Date.now() + wait > deadline)
        throw new Error(
          `could not reach the database at DATABASE_URL=${where}: ${attempt} ${attempt === 1 ? 'try' : 'tries'} in ${Math.round((Date.now() - started) / 1000)} s (DATABASE_CONNECT_TIMEOUT=${config.databaseConnectTimeout}), last: ${message}`,
          { cause: err },
        )
      log('storage-unavailable', { phase: 'start', attempt, database: where, error: message })
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
}

const defaultLog: Deps['log'] = (event, detail) => {
  if (event === 'error') console.error(JSON.stringify({ event, ...detail }))
}

/** Creates `file` owner-only (0600) if missing, and tightens it and its WAL/SHM files if not. */
function privateFile(file: string): void {
  closeSync(openSync(file, 'a', 0o600))
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      chmodSync(f, 0o600)
    } catch {
      // absent (no WAL yet), or not ours to change
    }
  }
}

/** What expired rows may still matter for, from the configured lifetimes and limits. */
export function purgePolicy(config: Config, limits: Config['rateLimits']): PurgePolicy {
  return {
    spentCodeRetention: Math.max(config.refreshTokenTtl, config.accessTokenTtl, config.idTokenTtl),
    rateLimitHorizon: Math.max(...Object.values(limits).map((l) => l.window)),
    tokenGrace: 300,
  }
}

/**
 * Builds the reference server: opens and migrates the store, loads fixtures, makes sure a
 * signing key exists, and wires every plugin and route. The only place things are wired.
 */
export async function createServer(config: Config, options: AppOptions): Promise<App> {
  let store = options.store
  let releaseLock = (): void => undefined
  if (!store) {
    const sqlite = config.databaseUrl.startsWith('sqlite:')
    const file = sqlite ? config.databaseUrl.slice('sqlite:'.length) : ':memory:'
    // one process per SQLite file: it keeps the rate-limit counters in its memory
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
      releaseLock = lockSqliteFile(file)
      // the database holds the signing keys: owner-only, WAL and shared-memory files included
      // (SQLite gives those the database file's mode)
      privateFile(file)
    }
    try {
      const knex = openDatabase(config.databaseUrl, config.databaseSchema)
      await untilReachable(
        () => migrate(knex, config.databaseSchema),
        config,
        options.log ?? defaultLog,
      ).catch(async (err: unknown) => {
        await knex.destroy().catch(() => undefined)
        throw err
      })
      store = createKnexStore(knex, sqlite ? { rateLimits: memoryRateLimits() } : {})
    } catch (err) {
      releaseLock()
      throw err
    }
  }
  // every API request authenticates its client: keep the records in memory for a few seconds
  const opened: Store = { ...store, clients: cachedClients(store.clients) }
  const clock = options.clock ?? systemClock
  let registrationWarnings: readonly string[] = []
  let passwordCosts: readonly PasswordHashing[] = [passwordHashing(config)]
  try {
    const seed = options.seed ?? true
    if (seed && config.loadFixtures) await loadFixtures(opened, passwordHashing(config))
    if (seed && (config.clientsFile || config.usersFile)) {
      const registrations = await readRegistrations({
        clientsFile: config.clientsFile,
        usersFile: config.usersFile,
        existingClient: (id) => opened.clients.get(id),
        existingUser: (username) => opened.users.byUsername(username),
        hashing: passwordHashing(config),
      })
      await applyRegistrations(opened, registrations)
      registrationWarnings = registrations.warnings
    }
    await ensureSigningKey(opened.keys, clock())
    // every cost still stored, after the fixtures' and registrations' hashes were written: a
    // failed sign-in takes all of them, whoever the user (users/passwords.ts, paddingCosts)
    passwordCosts = paddingCosts(passwordHashing(config), await opened.users.hashCosts())
  } catch (err) {
    if (!options.store) {
      await opened.close()
      releaseLock()
    }
    throw err
  }

  const baseLog = options.log ?? (options.logger ? eventLog(options.logger) : defaultLog)
  const keystore = createKeystore(store.keys)
  let activeKid: string | undefined
  const keys: Keystore = {
    ...keystore,
    // `keys rotate` publishes a key that every process starts signing with later: say when
    async signingKey(now) {
      const key = await keystore.signingKey(now)
      if (key.kid !== activeKid) {
        if (activeKid !== undefined)
          log('signing-key-activated', { kid: key.kid, previous: activeKid })
        activeKid = key.kid
      }
      return key
    },
  }
  const metrics = config.metrics ? createMetrics({ store: opened, keys, clock }) : undefined
  function log(event: string, detail?: Record<string, unknown>): void {
    metrics?.event(event)
    baseLog(event, detail)
  }
  const deps: Deps = {
    rateLimits: options.rateLimits ?? (() => config.rateLimits),
    config,
    store: opened,
    keys,
    clock,
    log,
    hashing: createHashingGate({
      concurrency: config.passwordHashConcurrency,
      queue: config.passwordHashQueue,
      busyHold: config.passwordHashBusyHold * 1000,
    }),
    verifyPassword: options.verifyPassword ?? verifyPasswordAtCost,
    passwordCosts,
    explain: config.explain
      ? createExplain(options.onFinding ? { onFinding: options.onFinding } : {})
      : undefined,
  }

  const server = Hapi.server({
    host: config.host,
    port: config.port,
    tls: {
      cert: options.tls.cert,
      key: options.tls.key,
      // RFC 9325 §3.1.1: TLS 1.2 or newer only
      minVersion: 'TLSv1.2',
      // hapi hands these options to https.createServer: a request whose headers or body do
      // not arrive within REQUEST_TIMEOUT is answered 408 and its socket closed (Node's
      // defaults are 60 s for headers and 300 s for the whole request)
      requestTimeout: config.requestTimeout * 1000,
      headersTimeout: config.requestTimeout * 1000,
      connectionsCheckingInterval: 1000,
      // a connection that never completes its handshake is destroyed (Node waits 120 s)
      handshakeTimeout: config.tlsHandshakeTimeout * 1000,
      // Node's own refusal of a request without Host is a bare 400; host-header.ts answers it
      requireHostHeader: false,
    } as ServerOptions,
    router: { stripTrailingSlash: false, isCaseSensitive: true },
    // no HTTP compression: the hosted pages carry a CSRF token beside the username the user
    // typed, and token responses carry tokens, which is what BREACH reads through gzip (RFC 7457
    // §2.6, CVE-2013-3587); and hapi's gzip runs on libuv's pool, which the store and every
    // signature share; gzip was about a sixth of a login page's CPU in issue 33's sign-in flood.
    // Nothing sent is more than a few KiB
    compression: false,
    routes: {
      payload: { maxBytes: 64 * 1024, timeout: config.requestTimeout * 1000 },
      // an idle socket mid-request (a handler waiting on a slow database is not idle traffic
      // for long): closed well after any request could still complete. A handler still running
      // 10 s before that (a password hash starved on a loaded host, a database that stopped
      // answering) is answered 503 temporarily_unavailable (oauth-errors.ts) instead: without
      // it the socket closed under the request and the client got no answer at all (seen as
      // "other side closed" in the bench's sign-ins at a load average of 32)
      timeout: {
        server: (config.requestTimeout + 40) * 1000,
        socket: (config.requestTimeout + 50) * 1000,
      },
      // hapi's default validation/parse errors are rendered by the oauth-errors plugin
      response: { emptyStatusCode: 204 },
    },
  })
  // what Node's parser refuses never reaches hapi: answer it in the JSON shape too
  answerClientErrors(server.listener, deps, { 'strict-transport-security': HSTS })
  limitConnections(server.listener, config, deps.log)
  if (options.logger) await server.register(accessLog(options.logger, config))
  if (metrics) await server.register(metrics.plugin)
  await server.register(oauthErrors(deps))
  await server.register(transport(deps))
  await server.register(bodyLimit())
  await server.register(hostHeader)
  await server.register(rateLimit(deps))
  await server.register(Inert)
  if (deps.explain) await server.register(explainPlugin(deps.explain))
  registerCookies(server)
  server.route(routes(server, deps))
  // the RP test issuers under /rp/{test-id} (issue 23); they leave the normal issuer's answers alone
  if (config.rpTests) await server.register(rpIssuers(deps))

  const plain = config.httpPort !== undefined ? createPlainListener() : undefined
  if (plain) answerClientErrors(plain, deps)
  let purgeTimer: NodeJS.Timeout | undefined
  const purge = async (): Promise<Record<string, number>> => {
    try {
      const counts = await opened.purge(deps.clock(), purgePolicy(config, deps.rateLimits()))
      deps.log('purge', counts)
      return counts
    } catch (err) {
      // an unreachable database is the readiness probe's business; try again next time
      deps.log('purge-failed', { error: (err as Error).message })
      return {}
    }
  }

  return {
    server,
    deps,
    plain,
    registrationWarnings,
    purge,
    async start() {
      await server.start()
      if (config.purgeInterval > 0) {
        purgeTimer = setInterval(() => void purge(), config.purgeInterval * 1000)
        purgeTimer.unref()
      }
      if (plain) {
        plain.listen(config.httpPort, config.host)
        await once(plain, 'listening')
      }
    },
    async stop() {
      clearInterval(purgeTimer)
      if (plain) {
        plain.closeAllConnections()
        await new Promise<void>((resolve) => plain.close(() => resolve()))
      }
      await server.stop({ timeout: 1000 })
      await opened.close()
      releaseLock()
    },
  }
}
