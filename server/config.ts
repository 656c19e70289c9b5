import { readFileSync } from 'node:fs'
import Joi from 'joi'
import { compileTrust } from './protocol/client-address.ts'
import { defaultHashConcurrency } from './users/hashing-gate.ts'
import {
  MAX_ARGON2ID,
  meetsOwaspArgon2id,
  OWASP_ARGON2ID,
  OWASP_ARGON2ID_EQUIVALENTS,
  OWASP_SCRYPT,
  type Argon2Params,
  type PasswordHashing,
  type ScryptParams,
} from './users/passwords.ts'

/** Requests allowed per window for one rate-limit group. */
export interface RateLimit {
  readonly limit: number
  /** Window length, seconds. */
  readonly window: number
  /**
   * The Unix second the fixed windows are counted from (default 0: windows start at multiples
   * of `window`). The embedded target's controls set it when they lower a limit, so a probe
   * starts at the beginning of a window and never straddles two.
   */
  readonly origin?: number
}

/** The start of the fixed window of `limit` that holds the Unix second `now`. */
export const windowStart = (now: number, limit: RateLimit): number =>
  now - ((((now - (limit.origin ?? 0)) % limit.window) + limit.window) % limit.window)

/**
 * The whole configuration of the reference server. Only this module reads `process.env`;
 * everything else receives a `Config` (or a `Pick` of it).
 */
export interface Config {
  /** Interface the HTTPS listener binds to. Env `HOST`. Default `127.0.0.1`. */
  readonly host: string
  /** HTTPS port. Env `PORT`. Default 8443 (ARCHITECTURE.md contracts). */
  readonly port: number
  /**
   * Public origin: `iss` of every token and base of every discovery URL (INTERFACE.md §2.7).
   * Env `BASE_URL`. Default `https://HOST:PORT`. Must be https, without query, fragment or
   * trailing slash, so that the issuer is byte-identical everywhere (OIDC Discovery §4.3).
   */
  readonly baseUrl: string
  /** Where the SQLite file and the dev TLS material live. Env `DATA_DIR`. Default `.data`. */
  readonly dataDir: string
  /**
   * Database. Env `DATABASE_URL`: `postgres://…` for PostgreSQL, `sqlite::memory:` for an
   * in-memory SQLite database, or `sqlite:PATH`. Default `sqlite:DATA_DIR/idp.sqlite`.
   */
  readonly databaseUrl: string
  /**
   * PostgreSQL schema to keep the tables in (created if missing), so several deployments or
   * test runs can share one database. Env `DATABASE_SCHEMA`. Default: the server's search path.
   */
  readonly databaseSchema: string | undefined
  /** PEM files of the server certificate and key. Env `TLS_CERT`, `TLS_KEY`. Default: a dev CA. */
  readonly tlsCert: string | undefined
  readonly tlsKey: string | undefined
  /**
   * Optional plain-HTTP listener that answers every request with a JSON error and serves
   * nothing (ARCHITECTURE.md, HTTPS only). Env `HTTP_PORT`. Default: none.
   */
  readonly httpPort: number | undefined
  /**
   * Behind TLS-terminating proxies: which of them to believe, as proxy-addr takes it. A number
   * of hops counted from the server (`TRUST_PROXY=1`: the one proxy in front; `true` means 1),
   * or a comma-separated list of proxy addresses and CIDR ranges (`10.0.0.0/8,loopback`). The
   * client address is then the first untrusted hop of `X-Forwarded-For` from the right, and
   * requests without `X-Forwarded-Proto: https` are refused. Env `TRUST_PROXY`. Default false.
   */
  readonly trustProxy: false | number | readonly string[]
  /** Access token lifetime, seconds (INTERFACE.md §8). Env `ACCESS_TOKEN_TTL`. Default 3600. */
  readonly accessTokenTtl: number
  /** ID token lifetime, seconds. Env `ID_TOKEN_TTL`. Default 3600. */
  readonly idTokenTtl: number
  /** Refresh token lifetime, seconds. Env `REFRESH_TOKEN_TTL`. Default 30 days. */
  readonly refreshTokenTtl: number
  /** Authorization code lifetime, seconds. Env `CODE_TTL`. Default 60 (ARCHITECTURE.md). */
  readonly codeTtl: number
  /** Login session lifetime, seconds. Env `SESSION_TTL`. Default 8 hours. */
  readonly sessionTtl: number
  /** Load the fixtures of `fixtures/` on first start. Env `LOAD_FIXTURES`. Default true. */
  readonly loadFixtures: boolean
  /**
   * Rate limits per endpoint group (ARCHITECTURE.md). Env `RATE_LIMIT_<GROUP>=LIMIT/WINDOW`,
   * e.g. `RATE_LIMIT_TOKEN=300/60`. Defaults: token, introspect, revoke 300/60 s per client;
   * userinfo 600/60 s; login 10/300 s per IP + username; public 600/60 s per IP.
   */
  readonly rateLimits: Readonly<Record<RateLimitGroup, RateLimit>>
  /**
   * JSON files of the integrator's own clients and users, upserted at every start (see
   * registry/registrations.ts). Env `CLIENTS_FILE`, `USERS_FILE`; `serve --clients/--users`.
   */
  readonly clientsFile: string | undefined
  readonly usersFile: string | undefined
  /**
   * Client-check mode: record what each client does against the RFCs and INTERFACE.md, and
   * serve the findings at /dev/findings. Env `EXPLAIN`. Default false here; `serve` turns it
   * on unless `NODE_ENV=production`, where it is refused.
   */
  readonly explain: boolean
  /**
   * The RP test issuers at `{base_url}/rp/{test-id}` (server/rp/): one deliberate fault each,
   * for integrators to prove their client refuses it. Env `RP_TESTS`. Default true, except
   * under `NODE_ENV=production`, where turning them on is refused.
   */
  readonly rpTests: boolean
  /**
   * Seconds between `keys rotate` publishing a key and every process signing with it: longer
   * than the JWKS max-age (60 s) plus the keystore's refresh (10 s). Env `KEY_ACTIVATION_DELAY`.
   * Default 120.
   */
  readonly keyActivationDelay: number
  /**
   * Seconds a client has to send a whole request (headers and body): past it the request is
   * answered 408 and its connection closed, so a request that never completes cannot hold a
   * socket. Env `REQUEST_TIMEOUT`. Default 10.
   */
  readonly requestTimeout: number
  /**
   * Seconds a connection has to complete its TLS handshake; past it the socket is destroyed, so
   * connections that open and send nothing cannot pile up (Node's default is 120 s). Env
   * `TLS_HANDSHAKE_TIMEOUT`. Default 10.
   */
  readonly tlsHandshakeTimeout: number
  /**
   * Seconds to wait at start for the database to answer (a database that starts after the
   * server is retried with back-off); then the start fails naming DATABASE_URL. Env
   * `DATABASE_CONNECT_TIMEOUT`. Default 30.
   */
  readonly databaseConnectTimeout: number
  /**
   * Open connections the HTTPS listener accepts in all; beyond, new ones are dropped at once.
   * Env `MAX_CONNECTIONS`. Default 1024 (keep it under the process's file-descriptor limit).
   */
  readonly maxConnections: number
  /**
   * Open connections one peer address may hold; beyond, its new ones are dropped at once, so a
   * single address cannot take every socket. 0 turns it off. Env
   * `MAX_CONNECTIONS_PER_ADDRESS`. Default 128, or 0 with `TRUST_PROXY` (every connection then
   * comes from the proxy).
   */
  readonly maxConnectionsPerAddress: number
  /**
   * The algorithm of new password hashes: `argon2id` or `scrypt`. Env `PASSWORD_HASH`. Default
   * `argon2id` (OWASP's first choice). A stored hash made with another algorithm or cost still
   * verifies, and is replaced at the user's next successful sign-in (users/passwords.ts).
   */
  readonly passwordHash: PasswordHashing['algorithm']
  /**
   * Argon2id's cost for new hashes, with `PASSWORD_HASH=argon2id`. Env `ARGON2_MEMORY` (KiB),
   * `ARGON2_TIME` (passes), `ARGON2_PARALLELISM` (lanes). Default OWASP's minimum, 19456 KiB,
   * 2, 1.
   */
  readonly argon2: Argon2Params
  /**
   * scrypt's cost for new hashes, with `PASSWORD_HASH=scrypt`. Env `SCRYPT_N` (a power of two),
   * `SCRYPT_R`, `SCRYPT_P`. Default OWASP's minimum, N=2^17, r=8, p=1.
   */
  readonly scrypt: ScryptParams
  /**
   * Password hashes that may run at once. Env `PASSWORD_HASH_CONCURRENCY`. Default half of
   * `UV_THREADPOOL_SIZE` (2 of its default 4). Hashes run on threads of their own at a lower
   * CPU priority, not on libuv's pool (users/hasher-threads.ts, users/hashing-gate.ts).
   */
  readonly passwordHashConcurrency: number
  /**
   * Sign-ins that may wait for a hash; beyond them a sign-in is answered 503
   * `temporarily_unavailable` with Retry-After. Env `PASSWORD_HASH_QUEUE`. Default 16.
   */
  readonly passwordHashQueue: number
  /**
   * Seconds a sign-in refused before its hash (hashing queue full, or its address over the
   * `loginaddress` limit) is held before it is answered, on a timer: a client that retries
   * every refusal at once then sends one sign-in per hold instead of spinning the event loop
   * that serves every other endpoint. At most 256 are held at once (beyond, answered at once);
   * a closed connection ends its hold. 0 answers at once. Env `PASSWORD_HASH_BUSY_HOLD`.
   * Default 1.
   */
  readonly passwordHashBusyHold: number
  /**
   * Least level of the JSON log lines `serve` writes to stdout (pino): fatal, error, warn, info
   * (one access line per request), debug, trace or silent. Env `LOG_LEVEL`. Default info.
   */
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /**
   * Serve Prometheus metrics at `/metrics` on the HTTPS listener. Env `METRICS`. Default false:
   * keep it private (block `/metrics` at the proxy, or bind HOST to a private interface).
   */
  readonly metrics: boolean
  /** Seconds between purges of expired rows; 0 turns purging off. Env `PURGE_INTERVAL`. Default 300. */
  readonly purgeInterval: number
}

export const RATE_LIMIT_GROUPS = [
  'token',
  'introspect',
  'revoke',
  'userinfo',
  'login',
  'loginaddress',
  'public',
] as const
export type RateLimitGroup = (typeof RATE_LIMIT_GROUPS)[number]

export class ConfigError extends Error {
  readonly problems: readonly string[]
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

const DEFAULT_RATE_LIMITS: Record<RateLimitGroup, RateLimit> = {
  token: { limit: 300, window: 60 },
  introspect: { limit: 300, window: 60 },
  revoke: { limit: 300, window: 60 },
  userinfo: { limit: 600, window: 60 },
  login: { limit: 10, window: 300 },
  // failed sign-ins from one address across user names (password spraying)
  loginaddress: { limit: 100, window: 300 },
  public: { limit: 600, window: 60 },
}

const rateLimit = Joi.object({
  limit: Joi.number().integer().min(1).required(),
  window: Joi.number().integer().min(1).required(),
  origin: Joi.number().integer().min(0),
})

const baseUrl = Joi.string()
  .uri({ scheme: ['https'] })
  .custom((value: string, helpers) => {
    const url = new URL(value)
    if (url.search || url.hash || value.endsWith('/') || url.username || url.password) {
      return helpers.error('any.invalid')
    }
    return value
  })
  .messages({
    'any.invalid':
      '"baseUrl" must be an https origin or path without query, fragment or trailing slash',
  })

const schema = Joi.object<Config>({
  host: Joi.string().hostname().required(),
  port: Joi.number().port().required(),
  baseUrl: baseUrl.required(),
  dataDir: Joi.string().min(1).required(),
  databaseUrl: Joi.string()
    .pattern(/^(postgres(ql)?:\/\/|sqlite:)/)
    .required()
    .messages({
      'string.pattern.base': '"databaseUrl" must start with postgres://, postgresql:// or sqlite:',
    }),
  databaseSchema: Joi.string()
    .pattern(/^[a-z_][a-z0-9_]{0,62}$/)
    .optional()
    .messages({ 'string.pattern.base': '"databaseSchema" must be a lower-case SQL identifier' }),
  tlsCert: Joi.string().optional(),
  tlsKey: Joi.string().optional(),
  httpPort: Joi.number().port().optional(),
  trustProxy: Joi.alternatives(
    Joi.boolean().valid(false),
    Joi.number().integer().min(1).max(32),
    Joi.array()
      .items(
        Joi.string().custom((value: string, helpers) => {
          try {
            compileTrust([value])
          } catch {
            return helpers.error('any.invalid')
          }
          return value
        }),
      )
      .min(1),
  )
    .required()
    .messages({
      'alternatives.match':
        '"trustProxy" must be false, a number of proxy hops, or a list of proxy addresses/CIDR ranges',
      'any.invalid': '"trustProxy" entry {#value} is not an IP address or CIDR range',
    }),
  accessTokenTtl: Joi.number().integer().min(1).max(86400).required(),
  idTokenTtl: Joi.number().integer().min(1).max(86400).required(),
  refreshTokenTtl: Joi.number().integer().min(1).required(),
  codeTtl: Joi.number().integer().min(1).max(600).required(),
  sessionTtl: Joi.number().integer().min(1).required(),
  loadFixtures: Joi.boolean().required(),
  clientsFile: Joi.string().min(1).optional(),
  usersFile: Joi.string().min(1).optional(),
  explain: Joi.boolean().required(),
  rpTests: Joi.boolean().required(),
  keyActivationDelay: Joi.number().integer().min(0).max(86400).required(),
  purgeInterval: Joi.number().integer().min(0).max(86400).required(),
  requestTimeout: Joi.number().integer().min(1).max(600).required(),
  tlsHandshakeTimeout: Joi.number().integer().min(1).max(600).required(),
  databaseConnectTimeout: Joi.number().integer().min(0).max(3600).required(),
  maxConnections: Joi.number().integer().min(1).max(1_000_000).required(),
  maxConnectionsPerAddress: Joi.number().integer().min(0).max(1_000_000).required(),
  metrics: Joi.boolean().required(),
  logLevel: Joi.string()
    .valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent')
    .required(),
  scrypt: Joi.object({
    N: Joi.number()
      .integer()
      .min(1024)
      .max(2 ** 20)
      .custom((value: number, helpers) =>
        (value & (value - 1)) === 0 ? value : helpers.error('any.invalid'),
      )
      .required()
      .messages({ 'any.invalid': '"scrypt.N" (SCRYPT_N) must be a power of two' }),
    r: Joi.number().integer().min(1).max(32).required(),
    p: Joi.number().integer().min(1).max(16).required(),
  }).required(),
  passwordHash: Joi.string()
    .valid('argon2id', 'scrypt')
    .required()
    .messages({ 'any.only': '"passwordHash" must be argon2id or scrypt' }),
  // within the bounds a stored hash may ask for (users/passwords.ts), so every hash the server
  // makes verifies
  argon2: Joi.object({
    memory: Joi.number()
      .integer()
      .min(Joi.ref('parallelism', { adjust: (p: unknown) => (typeof p === 'number' ? 8 * p : 8) }))
      .max(MAX_ARGON2ID.memory)
      .required()
      .messages({
        'number.min':
          '"argon2.memory" must be at least 8 KiB per lane (8 × ARGON2_PARALLELISM, RFC 9106 §3.1)',
      }),
    time: Joi.number().integer().min(1).max(MAX_ARGON2ID.time).required(),
    parallelism: Joi.number().integer().min(1).max(MAX_ARGON2ID.parallelism).required(),
  }).required(),
  passwordHashConcurrency: Joi.number().integer().min(1).max(64).required(),
  passwordHashQueue: Joi.number().integer().min(0).max(10000).required(),
  passwordHashBusyHold: Joi.number().min(0).max(30).required(),
  rateLimits: Joi.object(
    Object.fromEntries(RATE_LIMIT_GROUPS.map((g) => [g, rateLimit.required()])),
  ).required(),
})
  .and('tlsCert', 'tlsKey')
  .messages({ 'object.and': 'TLS_CERT and TLS_KEY must be given together' })

type Input = Record<string, unknown>

const num = (v: string | undefined): unknown =>
  v === undefined || v === '' ? undefined : Number(v)
const bool = (v: string | undefined): unknown =>
  v === undefined || v === ''
    ? undefined
    : /^(1|true|yes|on)$/i.test(v)
      ? true
      : /^(0|false|no|off)$/i.test(v)
        ? false
        : v

/** TRUST_PROXY: false/0 for none, true for one hop, a hop count, or a list of addresses/ranges. */
function trustProxy(v: string | undefined): unknown {
  if (v === undefined || v.trim() === '') return undefined
  const b = bool(v.trim())
  if (b === false) return false
  if (b === true) return 1
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) === 0 ? false : Number(v.trim())
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

function parseRateLimit(
  name: string,
  v: string | undefined,
  problems: string[],
): RateLimit | undefined {
  if (v === undefined || v === '') return undefined
  const m = /^(\d+)\/(\d+)$/.exec(v)
  if (!m) {
    problems.push(`${name} must be LIMIT/WINDOW_SECONDS, e.g. 300/60`)
    return undefined
  }
  return { limit: Number(m[1]), window: Number(m[2]) }
}

/**
 * The environment variable of a configuration key (`accessTokenTtl` → `ACCESS_TOKEN_TTL`,
 * `scrypt.N` → `SCRYPT_N`, `rateLimits.login` → `RATE_LIMIT_LOGIN`).
 */
export function envNameOf(key: string): string {
  // a rate limit is one variable, LIMIT/WINDOW_SECONDS, whatever member of it is wrong
  const group = /^rateLimits\.([A-Za-z]+)/.exec(key)?.[1]
  if (group) return `RATE_LIMIT_${group.toUpperCase()}`
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/\./g, '_')
    .toUpperCase()
}

/**
 * A validation message about a key, told by the names an operator sets: the environment
 * variable, and the key for a `CONFIG_FILE` (`"port" must be a number` → `PORT ("port" in
 * CONFIG_FILE) must be a number`).
 */
function named(message: string, label: string | undefined): string {
  if (!label || !message.includes(`"${label}"`)) return message
  return message.replace(`"${label}"`, `${envNameOf(label)} ("${label}" in CONFIG_FILE)`)
}

/**
 * `ALLOW_WEAK_PASSWORD_HASH=true` (or its older name, `ALLOW_WEAK_SCRYPT=true`): run with a
 * password hash cost below OWASP's minimum under `NODE_ENV=production`, knowingly.
 */
const allowWeakHash = (env: NodeJS.ProcessEnv): boolean =>
  bool(env.ALLOW_WEAK_PASSWORD_HASH) === true || bool(env.ALLOW_WEAK_SCRYPT) === true

/**
 * Why the configured password hash cost is below OWASP's minimum for its algorithm (OWASP
 * Password Storage Cheat Sheet), or undefined when it is not, or when the schema already
 * refuses the value.
 */
function weakHashProblem(candidate: Input): string | undefined {
  const allow = 'raise it, or set ALLOW_WEAK_PASSWORD_HASH=true to run with it knowingly'
  if (candidate.passwordHash === 'scrypt') {
    const cost = candidate.scrypt as Partial<ScryptParams> | undefined
    if (cost && ((cost.N ?? 0) < OWASP_SCRYPT.N || (cost.r ?? 0) < OWASP_SCRYPT.r))
      return `SCRYPT_N=${String(cost.N)} SCRYPT_R=${String(cost.r)} is below OWASP's minimum for scrypt (N=${OWASP_SCRYPT.N}, r=${OWASP_SCRYPT.r}) and NODE_ENV=production: ${allow}`
    return undefined
  }
  if (candidate.passwordHash !== 'argon2id') return undefined
  const cost = candidate.argon2 as Partial<Argon2Params> | undefined
  if (
    !cost ||
    typeof cost.memory !== 'number' ||
    typeof cost.time !== 'number' ||
    typeof cost.parallelism !== 'number' ||
    meetsOwaspArgon2id(cost as Argon2Params)
  )
    return undefined
  const equal = OWASP_ARGON2ID_EQUIVALENTS.map((c) => `${c.memory} KiB × ${c.time}`).join(', ')
  return `ARGON2_MEMORY=${String(cost.memory)} ARGON2_TIME=${String(cost.time)} is below OWASP's minimum for Argon2id (memory KiB × passes at least one of ${equal}) and NODE_ENV=production: ${allow}`
}

/** The algorithm and cost of new password hashes, from `PASSWORD_HASH` and its parameters. */
export const passwordHashing = (
  config: Pick<Config, 'passwordHash' | 'argon2' | 'scrypt'>,
): PasswordHashing =>
  config.passwordHash === 'scrypt'
    ? { algorithm: 'scrypt', ...config.scrypt }
    : { algorithm: 'argon2id', ...config.argon2 }

/**
 * Reads the configuration once: defaults, then the JSON file named by `CONFIG_FILE`, then the
 * environment, then `overrides`. Every problem is reported together in one ConfigError.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Config> = {},
): Config {
  const problems: string[] = []
  let file: Input = {}
  if (env.CONFIG_FILE) {
    try {
      file = JSON.parse(readFileSync(env.CONFIG_FILE, 'utf8')) as Input
    } catch (err) {
      problems.push(`CONFIG_FILE ${env.CONFIG_FILE}: ${(err as Error).message}`)
    }
  }
  const fromEnv: Input = {
    host: env.HOST || undefined,
    port: num(env.PORT),
    baseUrl: env.BASE_URL || undefined,
    dataDir: env.DATA_DIR || undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    databaseSchema: env.DATABASE_SCHEMA || undefined,
    tlsCert: env.TLS_CERT || undefined,
    tlsKey: env.TLS_KEY || undefined,
    httpPort: num(env.HTTP_PORT),
    trustProxy: trustProxy(env.TRUST_PROXY),
    accessTokenTtl: num(env.ACCESS_TOKEN_TTL),
    idTokenTtl: num(env.ID_TOKEN_TTL),
    refreshTokenTtl: num(env.REFRESH_TOKEN_TTL),
    codeTtl: num(env.CODE_TTL),
    sessionTtl: num(env.SESSION_TTL),
    loadFixtures: bool(env.LOAD_FIXTURES),
    clientsFile: env.CLIENTS_FILE || undefined,
    usersFile: env.USERS_FILE || undefined,
    explain: bool(env.EXPLAIN),
    rpTests: bool(env.RP_TESTS),
    keyActivationDelay: num(env.KEY_ACTIVATION_DELAY),
    purgeInterval: num(env.PURGE_INTERVAL),
    requestTimeout: num(env.REQUEST_TIMEOUT),
    tlsHandshakeTimeout: num(env.TLS_HANDSHAKE_TIMEOUT),
    databaseConnectTimeout: num(env.DATABASE_CONNECT_TIMEOUT),
    maxConnections: num(env.MAX_CONNECTIONS),
    maxConnectionsPerAddress: num(env.MAX_CONNECTIONS_PER_ADDRESS),
    metrics: bool(env.METRICS),
    logLevel: env.LOG_LEVEL || undefined,
    scrypt:
      env.SCRYPT_N || env.SCRYPT_R || env.SCRYPT_P
        ? {
            N: num(env.SCRYPT_N) ?? OWASP_SCRYPT.N,
            r: num(env.SCRYPT_R) ?? OWASP_SCRYPT.r,
            p: num(env.SCRYPT_P) ?? OWASP_SCRYPT.p,
          }
        : undefined,
    passwordHash: env.PASSWORD_HASH || undefined,
    argon2:
      env.ARGON2_MEMORY || env.ARGON2_TIME || env.ARGON2_PARALLELISM
        ? {
            memory: num(env.ARGON2_MEMORY) ?? OWASP_ARGON2ID.memory,
            time: num(env.ARGON2_TIME) ?? OWASP_ARGON2ID.time,
            parallelism: num(env.ARGON2_PARALLELISM) ?? OWASP_ARGON2ID.parallelism,
          }
        : undefined,
    passwordHashConcurrency: num(env.PASSWORD_HASH_CONCURRENCY),
    passwordHashQueue: num(env.PASSWORD_HASH_QUEUE),
    passwordHashBusyHold: num(env.PASSWORD_HASH_BUSY_HOLD),
  }
  const merged: Input = { ...file }
  for (const [k, v] of Object.entries(fromEnv)) if (v !== undefined) merged[k] = v
  for (const [k, v] of Object.entries(overrides) as [string, unknown][]) {
    if (v !== undefined) merged[k] = v
  }

  const host = typeof merged.host === 'string' ? merged.host : '127.0.0.1'
  const port = typeof merged.port === 'number' ? merged.port : (merged.port ?? 8443)
  const dataDir = typeof merged.dataDir === 'string' ? merged.dataDir : '.data'
  const fileLimits = (file.rateLimits ?? {}) as Partial<
    Record<RateLimitGroup, RateLimit | undefined>
  >
  const overrideLimits: Partial<Record<RateLimitGroup, RateLimit | undefined>> =
    overrides.rateLimits ?? {}
  const rateLimits = Object.fromEntries(
    RATE_LIMIT_GROUPS.map((g) => [
      g,
      overrideLimits[g] ??
        parseRateLimit(
          `RATE_LIMIT_${g.toUpperCase()}`,
          env[`RATE_LIMIT_${g.toUpperCase()}`],
          problems,
        ) ??
        fileLimits[g] ??
        DEFAULT_RATE_LIMITS[g],
    ]),
  )
  const candidate: Input = {
    accessTokenTtl: 3600,
    idTokenTtl: 3600,
    refreshTokenTtl: 30 * 24 * 3600,
    codeTtl: 60,
    sessionTtl: 8 * 3600,
    trustProxy: false,
    loadFixtures: true,
    explain: false,
    rpTests: env.NODE_ENV !== 'production',
    keyActivationDelay: 120,
    purgeInterval: 300,
    requestTimeout: 10,
    tlsHandshakeTimeout: 10,
    databaseConnectTimeout: 30,
    maxConnections: 1024,
    metrics: false,
    logLevel: 'info',
    passwordHash: 'argon2id',
    argon2: OWASP_ARGON2ID,
    scrypt: OWASP_SCRYPT,
    passwordHashConcurrency: defaultHashConcurrency(env),
    passwordHashQueue: 16,
    passwordHashBusyHold: 1,
    ...merged,
    host,
    port,
    dataDir,
    baseUrl:
      merged.baseUrl ??
      `https://${host.includes(':') ? `[${host}]` : host}:${typeof port === 'number' ? String(port) : 'invalid-port'}`,
    databaseUrl: merged.databaseUrl ?? `sqlite:${dataDir}/idp.sqlite`,
    rateLimits,
  }
  // `true` (env, file or override) is the one proxy in front; 0 hops is none
  if (candidate.trustProxy === true) candidate.trustProxy = 1
  if (candidate.trustProxy === 0) candidate.trustProxy = false
  // behind a proxy every connection comes from the proxy: no per-address cap unless asked
  candidate.maxConnectionsPerAddress ??= candidate.trustProxy === false ? 128 : 0
  const result = schema.validate(candidate, { abortEarly: false, convert: false })
  if (result.error)
    problems.push(...result.error.details.map((d) => named(d.message, d.context?.label)))
  if (candidate.explain === true && env.NODE_ENV === 'production')
    problems.push(
      'EXPLAIN cannot be on when NODE_ENV=production: explain mode records client requests and serves them at /dev/findings',
    )
  if (env.NODE_ENV === 'production' && !allowWeakHash(env)) {
    const weak = weakHashProblem(candidate)
    if (weak) problems.push(weak)
  }
  if (candidate.rpTests === true && env.NODE_ENV === 'production')
    problems.push(
      'RP_TESTS cannot be on when NODE_ENV=production: the RP test issuers answer sign-ins with deliberate errors',
    )
  if (problems.length > 0) throw new ConfigError(problems)
  return result.value as Config
}
