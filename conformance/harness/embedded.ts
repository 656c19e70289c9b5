import type { Logger } from 'pino'
import { clients, users } from '../../fixtures/index.ts'
import { createServer, type App, type AppOptions } from '../../server/app.ts'
import { loadConfig, type Config } from '../../server/config.ts'
import { freePort } from '../../server/test-helpers.ts'
import { createDevCertificate, type TlsMaterial } from '../../server/tls.ts'
import { createKnexStore, migrate, openDatabase } from '../../server/store/knex/index.ts'
import { memoryRateLimits } from '../../server/store/memory-rate-limits.ts'
import type { Store } from '../../server/store/store.ts'
import { resolveTarget, type Target, type TargetClient } from './target.ts'

const GENEROUS = { limit: 100_000, window: 60 }
/** The embedded server's limits: none a whole suite run from one address reaches. */
export const GENEROUS_LIMITS: Config['rateLimits'] = {
  token: GENEROUS,
  introspect: GENEROUS,
  revoke: GENEROUS,
  userinfo: GENEROUS,
  login: GENEROUS,
  loginaddress: GENEROUS,
  public: GENEROUS,
}

export interface EmbeddedOptions {
  /** Configuration overrides (short lifetimes, small rate limits). */
  readonly config?: Partial<Config>
  /** The server's JSON logger (server/logging.ts); default: no log at all. */
  readonly logger?: Logger
  /**
   * The certificate to serve (default: a fresh dev CA and certificate). The self-test gives its
   * broken targets the shared target's, so one browser, which pins that certificate, serves all.
   */
  readonly tls?: TlsMaterial
  /**
   * Wraps the server's store (the self-test's broken targets built from outside the server's
   * code: a store that misbehaves, given to createServer as its `store` option).
   */
  readonly wrapStore?: (store: Store) => Store
  /**
   * Adds to the built server before it starts, through hapi's own composition points (request
   * lifecycle extensions, decorations): the self-test's broken targets, built from outside the
   * server's code.
   */
  readonly extend?: (app: App) => void | Promise<void>
  /** How the server checks a password against its stored hash (createServer's option). */
  readonly verifyPassword?: AppOptions['verifyPassword']
}

export interface Embedded {
  readonly target: Target
  readonly app: App
  /** The certificate the server serves (its CA is `target.ca`). */
  readonly tls: TlsMaterial
  /**
   * Starts another instance with the same options and certificate (its own store, clock and
   * limits): the run's exclusive checks use it beside the rest (runner.ts, RunOptions.twin).
   */
  twin(): Promise<Embedded>
  stop(): Promise<void>
}

const fixtureClient = (id: (typeof clients)[number]['id']): TargetClient => {
  const c = clients.find((x) => x.id === id)
  if (!c) throw new Error(`no fixture client ${id}`)
  return {
    id: c.id,
    secret: c.secret,
    redirectUri: c.redirectUris[0],
    postLogoutRedirectUri: c.postLogoutRedirectUris[0],
    // what client_credentials asks for: the client's default custom scopes (fixtures)
    ...((c.grantTypes as readonly string[]).includes('client_credentials') &&
    c.defaultScopes.length > 0
      ? { scope: c.defaultScopes.join(' ') }
      : {}),
  }
}

/**
 * A scope another fixture client is registered for and `id` is not (AUTHZ-11's foreign scope):
 * the fixtures say it, as a deployment's configuration would (`clients.main.foreignScope`).
 */
const foreignScope = (id: (typeof clients)[number]['id']): string | undefined => {
  const own = new Set(clients.find((x) => x.id === id)?.scopes ?? [])
  return clients.flatMap((c) => c.scopes).find((s) => !own.has(s))
}

/**
 * Starts the reference server in-process: SQLite in memory, fixtures loaded, a fresh dev CA,
 * HTTPS on a free loopback port and the plain listener on another, and returns it as a target.
 */
export async function startEmbedded(options: EmbeddedOptions = {}): Promise<Embedded> {
  // a free port is free when asked, not when listened on: another process (an outgoing
  // connection's ephemeral port, a parallel test's server) can take it in between, which a
  // loaded CI runner once showed as EADDRINUSE. Tried again on fresh ports, a bounded number
  // of times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, await freePort(), await freePort())
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw err
    }
  }
}

async function startOnce(
  options: EmbeddedOptions,
  port: number,
  httpPort: number,
): Promise<Embedded> {
  const config = loadConfig(
    {},
    {
      host: '127.0.0.1',
      port,
      httpPort,
      baseUrl: `https://127.0.0.1:${port}`,
      databaseUrl: 'sqlite::memory:',
      loadFixtures: true,
      // a whole suite run from one address must not trip the limits; the RATE checks lower
      // one group at a time through the target's controls
      rateLimits: GENEROUS_LIMITS,
      // the server's own password hashing (Argon2id at OWASP's minimum, tens of ms a sign-in):
      // the fixtures are signed in hundreds of times per run, and the target is the server as
      // deployed
      ...options.config,
    },
  )
  const tls = options.tls ?? (await createDevCertificate(['127.0.0.1', 'localhost']))
  let offset = 0
  const clock = (): number => Math.floor(Date.now() / 1000) + offset
  let limits: Config['rateLimits'] = config.rateLimits
  let store: Store | undefined
  if (options.wrapStore) {
    // the store createServer would open itself (SQLite in memory), wrapped
    const knex = openDatabase(config.databaseUrl, config.databaseSchema)
    await migrate(knex, config.databaseSchema)
    store = options.wrapStore(createKnexStore(knex, { rateLimits: memoryRateLimits() }))
  }
  const app = await createServer(config, {
    ...(store ? { store } : {}),
    tls,
    clock,
    rateLimits: () => limits,
    ...(options.verifyPassword ? { verifyPassword: options.verifyPassword } : {}),
    ...(options.logger ? { logger: options.logger } : { log: () => undefined }),
  })
  await options.extend?.(app)
  try {
    await app.start()
  } catch (err) {
    await app.stop().catch(() => undefined)
    throw err
  }
  const [alice, bob] = users
  const target = resolveTarget(
    {
      baseUrl: config.baseUrl,
      ca: tls.ca,
      clients: {
        main: {
          ...fixtureClient('conformance-client'),
          foreignScope: foreignScope('conformance-client'),
        },
        other: fixtureClient('other-client'),
        third: fixtureClient('third-client'),
        service: fixtureClient('service-client'),
        codeOnly: fixtureClient('third-client'),
      },
      users: {
        primary: { username: alice.username, password: alice.password },
        secondary: { username: bob.username, password: bob.password },
      },
      plainHttpUrl: `http://127.0.0.1:${httpPort}`,
      refreshTokenLifetime: config.refreshTokenTtl,
      accessTokenLifetime: config.accessTokenTtl,
      sessionLifetime: config.sessionTtl,
    },
    true,
    {
      advanceClock: (seconds) => {
        offset += seconds
      },
      setRateLimit: (group, limit, window) => {
        if (!(group in limits)) throw new Error(`no rate-limit group ${group}`)
        // the window starts now: a probe's requests all fall in it, however the clock stands
        limits = { ...limits, [group]: { limit, window, origin: clock() } }
      },
      reset: () => {
        offset = 0
        limits = config.rateLimits
      },
    },
  )
  return {
    target,
    app,
    tls,
    twin: () => startEmbedded({ ...options, tls }),
    async stop() {
      await target.dispatcher.close()
      await app.stop()
    },
  }
}
