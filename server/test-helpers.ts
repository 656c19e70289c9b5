import { createHash, randomBytes } from 'node:crypto'
import { createServer as createNetServer } from 'node:net'
import type { ServerInjectResponse } from '@hapi/hapi'
import { createServer, type App, type AppOptions } from './app.ts'
import { loadConfig, type Config, type RateLimit } from './config.ts'
import type { StoredCode, StoredToken } from './store/store.ts'
import { createDevCertificate, type TlsMaterial } from './tls.ts'

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const srv = createNetServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const address = srv.address()
  await new Promise<void>((resolve) => srv.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

let tls: Promise<TlsMaterial> | undefined

/**
 * A rate limit whose fixed window starts now: a test's requests, sent within seconds, never
 * straddle two windows (a window aligned on the epoch ends at any moment, about one run in a
 * hundred for a 300 s window, which once made a burst miss its 429).
 */
export const windowFromNow = (limit: number, window: number): RateLimit => ({
  limit,
  window,
  origin: Math.floor(Date.now() / 1000),
})

/** A reference server on in-memory SQLite with fixtures, for `server.inject` tests (not started). */
export async function testApp(
  config: Partial<Config> = {},
  options: Omit<AppOptions, 'tls'> = {},
): Promise<App> {
  tls ??= createDevCertificate(['127.0.0.1'])
  const cfg = loadConfig(
    {},
    {
      port: 0,
      baseUrl: 'https://idp.test',
      databaseUrl: 'sqlite::memory:',
      ...config,
    },
  )
  return createServer(cfg, { tls: await tls, log: () => undefined, ...options })
}

/**
 * A reference server listening for real on 127.0.0.1 (a free port, a fresh dev CA, in-memory
 * SQLite unless `config` says otherwise), for tests that need sockets rather than inject.
 */
export async function listeningApp(
  config: Partial<Config> = {},
  more: {
    /** environment variables, as `loadConfig` reads them */
    env?: Record<string, string>
    /** more `createServer` options, from the loaded config */
    options?: (config: Config) => Partial<AppOptions>
  } = {},
): Promise<{ app: App; tls: TlsMaterial; port: number; config: Config }> {
  const port = await freePort()
  const material = await createDevCertificate(['127.0.0.1'])
  const cfg = loadConfig(more.env ?? {}, {
    port,
    host: '127.0.0.1',
    baseUrl: `https://127.0.0.1:${port}`,
    databaseUrl: 'sqlite::memory:',
    ...config,
  })
  const app = await createServer(cfg, {
    tls: material,
    log: () => undefined,
    ...more.options?.(cfg),
  })
  await app.start()
  return { app, tls: material, port, config: cfg }
}

const setCookies = (headers: Record<string, unknown>): string[] => {
  const set = headers['set-cookie']
  const list = Array.isArray(set) ? (set as string[]) : typeof set === 'string' ? [set] : []
  return list.map((c) => c.split(';')[0] ?? '')
}

/**
 * The query of a valid authorization request of conformance-client (PKCE S256 with a fresh
 * challenge, scope openid), with `extra` parameters added or replaced.
 */
export function authorizeQuery(extra: Record<string, string> = {}): URLSearchParams {
  return new URLSearchParams({
    client_id: 'conformance-client',
    redirect_uri: 'https://client.example/callback',
    response_type: 'code',
    scope: 'openid',
    code_challenge: createHash('sha256').update(randomBytes(32)).digest('base64url'),
    code_challenge_method: 'S256',
    ...extra,
  })
}

/**
 * Opens the login page of the authorization request `query` and posts `user`'s credentials
 * with the page's interaction, CSRF token and cookies, all with `server.inject`; returns the
 * answer to the post.
 */
export async function postLoginForm(
  app: App,
  query: URLSearchParams,
  user: { readonly username: string; readonly password: string },
  /** The post's Accept header (none by default: the hosted page's answers). */
  accept?: string,
): Promise<ServerInjectResponse> {
  const page = await app.server.inject(`/auth/authorize?${query.toString()}`)
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]+)"`).exec(page.payload)?.[1] ?? ''
  return app.server.inject({
    method: 'POST',
    url: '/auth/login',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: setCookies(page.headers).join('; '),
      ...(accept ? { accept } : {}),
    },
    payload: new URLSearchParams({
      interaction: field('interaction'),
      csrf: field('csrf'),
      username: user.username,
      password: user.password,
      action: 'login',
    }).toString(),
  })
}

/**
 * Signs a user in through authorize + the login form and redeems the code, all with
 * `server.inject`. Returns the token response body.
 */
export async function signInAndRedeem(
  app: App,
  options: {
    username: string
    password: string
    scope: string
    clientId?: string
    clientSecret?: string
  },
): Promise<Record<string, string>> {
  const verifier = randomBytes(32).toString('base64url')
  const clientId = options.clientId ?? 'conformance-client'
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: 'https://client.example/callback',
    response_type: 'code',
    scope: options.scope,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })
  const login = await postLoginForm(app, query, options)
  const code = new URL(login.headers.location ?? 'https://x.invalid').searchParams.get('code') ?? ''
  const tokens = await app.server.inject({
    method: 'POST',
    url: '/auth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: 'https://client.example/callback',
      client_id: clientId,
      client_secret: options.clientSecret ?? 'conformance-secret',
    }).toString(),
  })
  if (tokens.statusCode !== 200) throw new Error(`sign-in failed: ${tokens.payload}`)
  return JSON.parse(tokens.payload) as Record<string, string>
}

/** The machine's PostgreSQL (trust auth); TEST_DATABASE_URL overrides it. */
export const TEST_PG_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * Whether PostgreSQL answers. Tests that need it are skipped when it does not, except where
 * REQUIRE_POSTGRES=1 (CI on the project's machines), where that is an error.
 */
export async function postgresAvailable(url = TEST_PG_URL): Promise<boolean> {
  const { openDatabase } = await import('./store/knex/index.ts')
  const knex = openDatabase(url)
  let up = false
  try {
    await knex.raw('select 1')
    up = true
  } catch {
    up = false
  } finally {
    await knex.destroy()
  }
  if (!up && process.env.REQUIRE_POSTGRES === '1')
    throw new Error(`PostgreSQL is required but unreachable at ${url}`)
  return up
}

/** A stored code of the main client, for tests of store wrappers (issued at 1000, lives 60 s). */
export const storedCode: StoredCode = {
  digest: 'code-digest',
  clientId: 'conformance-client',
  userId: 'alice',
  redirectUri: 'https://client.example/callback',
  codeChallenge: 'challenge',
  scope: 'openid',
  nonce: null,
  authTime: 1000,
  expiresAt: 1060,
}

/** A stored access token of `storedCode`'s client and user, with `over` changed. */
export const storedToken = (over: Partial<StoredToken>): StoredToken => ({
  id: 'token-id',
  kind: 'access',
  clientId: storedCode.clientId,
  subject: 'alice',
  scope: 'openid',
  issuedAt: 1000,
  expiresAt: 1300,
  revokedAt: null,
  codeDigest: null,
  parentId: null,
  ...over,
})
