import type { Request } from '@hapi/hapi'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { clients, users } from '../fixtures/index.ts'
import { createLogger } from '../server/logging.ts'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import { registeredChecks, runChecks } from './runner.ts'
import type { CheckResult } from './harness/types.ts'
import { checkName, requirementIds } from './requirements.ts'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { terminalOutput, writeReportDir } from './report/all-formats.ts'
import { readableText } from './report/html.ts'
import { gate } from './gate.ts'
import { knownSecrets } from './harness/redact.ts'
import type { TargetClient, TargetUser } from './harness/target.ts'

// The whole suite against the embedded reference server, four checks at a time (exclusive ones
// alone): every check must pass there. Running them in parallel is itself under test: a check
// that disturbs another would fail one of them here, whatever the CLI's default on this machine.
describe('conformance suite against the embedded reference server', () => {
  let embedded: Embedded
  const results = new Map<string, CheckResult>()
  // the whole run is also the reference server's log and metrics test (issue 24): every line it
  // logs is kept, and every secret, password, code and token that crossed the wire is noted
  const logLines: string[] = []
  const used = new Set<string>()
  beforeAll(async () => {
    embedded = await startEmbedded({
      config: { metrics: true },
      logger: createLogger({ level: 'debug', destination: { write: (l) => logLines.push(l) } }),
    })
    embedded.app.server.events.on('response', (request) => noteSecrets(request, used))
    const twin = async (): Promise<Embedded> => {
      const started = await embedded.twin()
      started.app.server.events.on('response', (request) => noteSecrets(request, used))
      return started
    }
    for (const result of await runChecks(embedded.target, { concurrency: 4, twin }))
      results.set(result.id, result)
  }, 900_000)
  afterAll(async () => {
    await embedded.stop()
  })

  test('every catalogue row has a registered check', () => {
    expect(registeredChecks()).toEqual(requirementIds)
  })

  test("the server's log holds no secret, password, code or token of the run", () => {
    for (const c of clients) used.add(c.secret)
    for (const u of users) used.add(u.password)
    const log = logLines.join('')
    // the log is there, one access line per request with its id
    const access = logLines.filter((l) => l.includes('"responseTime"'))
    expect(access.length).toBeGreaterThan(100)
    const first = JSON.parse(access[0] ?? '{}') as { req?: { id?: unknown } }
    expect(typeof first.req?.id).toBe('string')
    expect(used.size).toBeGreaterThan(50)
    const leaked = [...used].filter((secret) => log.includes(secret))
    expect(leaked).toEqual([])
  })

  test('/metrics counts the tokens the run was issued, by grant', async () => {
    const res = await embedded.app.server.inject('/metrics')
    expect(res.statusCode).toBe(200)
    const count = (grant: string): number =>
      Number(
        new RegExp(`idp_tokens_issued_total\\{grant="${grant}"\\} (\\d+)`).exec(res.payload)?.[1] ??
          0,
      )
    expect(count('client_credentials')).toBeGreaterThan(0)
    expect(count('authorization_code')).toBeGreaterThan(0)
    expect(count('refresh_token')).toBeGreaterThan(0)
  })

  // the reports are CI artifacts: nothing the run knows as a secret may be in any of them
  test('no secret of the configuration, nor any code or token of the run, is in any report', () => {
    // the report directory as the CLI writes it, read back file by file, and the terminal output
    const all = [...results.values()]
    const dir = mkdtempSync(join(tmpdir(), 'idp-reports-'))
    writeReportDir(dir, all, {
      target: { baseUrl: embedded.target.baseUrl, embedded: true },
      version: 'test',
      startedAt: new Date(),
      finishedAt: new Date(),
      verdict: gate(all, { strict: true, allowSkips: false, knownFailures: [], today: new Date() }),
    })
    const formats: Record<string, string> = { terminal: terminalOutput(all) }
    for (const name of readdirSync(dir)) formats[name] = readFileSync(join(dir, name), 'utf8')
    // report.html's transcripts are compressed: read as its reader sees them, opened
    formats['report.html'] = readableText(formats['report.html'] ?? '')
    rmSync(dir, { recursive: true })
    expect(Object.keys(formats).sort()).toEqual([
      'junit.xml',
      'report.html',
      'report.json',
      'summary.md',
      'terminal',
    ])
    const t = embedded.target
    const configured = [
      ...Object.values<TargetClient | undefined>(t.clients).map((c) => c?.secret),
      ...Object.values<TargetUser | undefined>(t.users).map((u) => u?.password),
    ].filter((s): s is string => typeof s === 'string')
    expect(configured.length).toBeGreaterThanOrEqual(4)
    // the codes and tokens the run was handed (well over a hundred on a full run)
    const handedOut = knownSecrets().filter((s) => s.length >= 16)
    expect(handedOut.length).toBeGreaterThan(100)
    const signedJwt = /\beyJ[\w-]*\.eyJ[\w-]*\.[\w-]{16,}/
    for (const [format, text] of Object.entries(formats)) {
      for (const secret of configured)
        expect(text.includes(secret), `a configured secret is in ${format}`).toBe(false)
      const leaked = handedOut.filter((s) => text.includes(s))
      expect(leaked.length, `${leaked.length} handed-out credentials in ${format}`).toBe(0)
      expect(signedJwt.exec(text)?.[0], `a signed JWT in ${format}`).toBeUndefined()
    }
  })

  for (const id of registeredChecks()) {
    test(checkName(id), () => {
      const result = results.get(id)
      expect({ verdict: result?.verdict, message: result?.message }).toEqual({
        verdict: 'pass',
        message: undefined,
      })
    })
  }
})

const SECRET_FIELDS = [
  'password',
  'client_secret',
  'code',
  'code_verifier',
  'refresh_token',
  'access_token',
  'id_token',
  'id_token_hint',
  'token',
  'csrf',
]

/** Notes the secrets of one exchange: request fields and credentials, response tokens and codes. */
function noteSecrets(request: Request, used: Set<string>): void {
  const add = (v: unknown): void => {
    // short values are the checks' deliberately bogus inputs, and match by chance
    if (typeof v === 'string' && v.length >= 10) used.add(v)
  }
  const fields = (o: unknown): void => {
    if (!o || typeof o !== 'object') return
    for (const f of SECRET_FIELDS) add((o as Record<string, unknown>)[f])
  }
  fields(request.payload)
  fields(request.query)
  const auth = (request.headers as Record<string, string | undefined>).authorization ?? ''
  const [scheme = '', value = ''] = auth.split(' ')
  if (/^bearer$/i.test(scheme)) add(value)
  if (/^basic$/i.test(scheme)) {
    const decoded = Buffer.from(value, 'base64').toString()
    const secret = decoded.slice(decoded.indexOf(':') + 1)
    add(secret)
    try {
      add(decodeURIComponent(secret.replace(/\+/g, ' ')))
    } catch {
      // not form-encoded
    }
  }
  const response = request.response as {
    source?: unknown
    headers?: Record<string, unknown>
    output?: unknown
  }
  fields(response.source)
  const location = response.headers?.location
  if (typeof location === 'string') {
    try {
      const url = new URL(location)
      for (const params of [url.searchParams, new URLSearchParams(url.hash.slice(1))])
        for (const f of SECRET_FIELDS) add(params.get(f))
    } catch {
      // not a URL
    }
  }
}
