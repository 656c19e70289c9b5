import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent } from 'undici'
import { freePort } from '../test-helpers.ts'

/**
 * Real server processes for the scale tests (`npm run test:scale`): started through
 * scripts/serve.ts as a user would, killed with SIGKILL when a test says so, and driven over
 * HTTPS with the fixture client and user.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface ServerProcess {
  readonly base: string
  readonly port: number
  readonly pid: number
  readonly output: () => string
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>
  /** SIGKILL: no shutdown code runs. */
  kill9(): Promise<void>
}

export interface StartOptions {
  readonly dataDir: string
  readonly env?: Readonly<Record<string, string>>
  readonly args?: readonly string[]
  readonly port?: number
  /** The issuer, when several processes serve one deployment on different ports. */
  readonly baseUrl?: string
}

export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const port = options.port ?? (await freePort())
  // vitest puts Vite's BASE_URL=/ into process.env, which is the server's issuer setting
  const { BASE_URL: _viteBase, ...inherited } = process.env
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'scripts/serve.ts'), ...(options.args ?? [])],
    {
      cwd: ROOT,
      env: {
        ...inherited,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: options.dataDir,
        EXPLAIN: 'false',
        PURGE_INTERVAL: '0',
        ...(options.baseUrl ? { BASE_URL: options.baseUrl } : {}),
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let output = ''
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const ready = await Promise.race([
    (async () => {
      for (;;) {
        if (/reference server listening/.test(output)) return true
        await new Promise((r) => setTimeout(r, 50))
      }
    })(),
    exited.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(false), 90_000)),
  ])
  if (!ready) {
    child.kill('SIGKILL')
    throw new Error(`server did not start:\n${output}`)
  }
  return {
    base: `https://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? 0,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
    async kill9() {
      child.kill('SIGKILL')
      await exited
    },
  }
}

export const CLIENT = { id: 'conformance-client', secret: 'conformance-secret' }
export const SERVICE = { id: 'service-client', secret: 'service-secret' }
const REDIRECT = 'https://client.example/callback'

export interface HttpResult {
  readonly status: number
  readonly body: Record<string, unknown>
  readonly headers: Headers
}

/** HTTPS to one or more processes of a deployment, trusting its dev CA. */
export class FlowClient {
  readonly agent: Agent
  /** `dataDirs`: the processes' DATA_DIRs, whose dev CAs are trusted. */
  constructor(...dataDirs: string[]) {
    this.agent = new Agent({
      connect: { ca: dataDirs.map((d) => readFileSync(join(d, 'tls/ca.pem'), 'utf8')) },
      keepAliveTimeout: 1000,
    })
  }

  fetch(url: string, init: RequestInit = {}): Promise<Response> {
    return fetch(url, { ...init, redirect: 'manual', dispatcher: this.agent } as RequestInit)
  }

  async form(url: string, body: Record<string, string>): Promise<HttpResult> {
    const res = await this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body).toString(),
    })
    const text = await res.text()
    let parsed: Record<string, unknown> = {}
    try {
      parsed = JSON.parse(text) as Record<string, unknown>
    } catch {
      parsed = { raw: text.slice(0, 200) }
    }
    return { status: res.status, body: parsed, headers: res.headers }
  }

  /** authorize + login as alice on `base`; returns a code and its verifier. */
  async code(base: string): Promise<{ code: string; verifier: string }> {
    const verifier = randomBytes(32).toString('base64url')
    const query = new URLSearchParams({
      client_id: CLIENT.id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid offline_access',
      state: randomBytes(8).toString('hex'),
      nonce: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    })
    const page = await this.fetch(`${base}/auth/authorize?${query}`)
    const html = await page.text()
    if (page.status !== 200) throw new Error(`authorize: HTTP ${page.status}`)
    const field = (name: string) =>
      new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? ''
    const login = await this.fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: page.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; '),
      },
      body: new URLSearchParams({
        interaction: field('interaction'),
        csrf: field('csrf'),
        username: 'alice',
        password: 'wonderland',
        action: 'login',
      }).toString(),
    })
    await login.arrayBuffer()
    const code = new URL(login.headers.get('location') ?? 'https://x.invalid').searchParams.get(
      'code',
    )
    if (!code) throw new Error(`login: HTTP ${login.status}, no code`)
    return { code, verifier }
  }

  redeem(base: string, code: string, verifier: string): Promise<HttpResult> {
    return this.form(`${base}/auth/token`, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    })
  }

  /** A full sign-in on `base`: the token response (with a refresh token). */
  async tokens(base: string): Promise<Record<string, string>> {
    const { code, verifier } = await this.code(base)
    const res = await this.redeem(base, code, verifier)
    if (res.status !== 200) throw new Error(`token: HTTP ${res.status} ${JSON.stringify(res.body)}`)
    return res.body as Record<string, string>
  }

  refresh(base: string, refreshToken: string): Promise<HttpResult> {
    return this.form(`${base}/auth/token`, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    })
  }

  revoke(base: string, token: string): Promise<HttpResult> {
    return this.form(`${base}/auth/revoke`, {
      token,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    })
  }

  introspect(base: string, token: string): Promise<HttpResult> {
    return this.form(`${base}/auth/introspect`, {
      token,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    })
  }

  close(): Promise<void> {
    return this.agent.close()
  }
}
