import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { EXIT } from './cli.ts'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import { resolveTarget, type TargetConfig } from './harness/target.ts'
import { transportProblem } from './harness/transport.ts'
import { preflight } from './preflight.ts'
import { runChecks } from './runner.ts'
import { createDevCertificate } from '../server/tls.ts'
import { runCli } from './test-support.ts'

/**
 * Issue 32: a setting that is wrong is named in seconds, before any check runs. The target is a
 * real reference server; each case breaks one setting of the configuration that points at it.
 */

const run = (argv: string[]) => runCli(argv)

const dir = mkdtempSync(join(tmpdir(), 'preflight-'))
let server: Embedded
let caFile: string
let otherCaFile: string
const pem = (ca: string | undefined): string => {
  if (!ca) throw new Error('the dev certificate comes with its CA')
  return ca
}
/** The configuration of the running server as a user would write it, with `change` applied. */
const configFile = (name: string, change: (c: TargetConfig) => TargetConfig = (c) => c): string => {
  const { clients, users } = server.target
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify(change({ baseUrl: server.target.baseUrl, clients, users })))
  return file
}
/** The CLI's arguments for the running server, trusting `ca` (default: the server's CA). */
const against = (config: string, ...more: string[]): string[] => [
  '--base-url',
  server.target.baseUrl,
  '--ca',
  caFile,
  '--config',
  config,
  ...more,
]
/** The same, trusting another CA than the one that issued the server's certificate. */
const untrusting = (config: string, ...more: string[]): string[] =>
  against(config, ...more).map((arg) => (arg === caFile ? otherCaFile : arg))

beforeAll(async () => {
  server = await startEmbedded()
  caFile = join(dir, 'ca.pem')
  writeFileSync(caFile, pem(server.tls.ca))
  otherCaFile = join(dir, 'other-ca.pem')
  writeFileSync(otherCaFile, pem((await createDevCertificate(['127.0.0.1'])).ca))
})
afterAll(() => server.stop())

/** A stopped preflight: exit code, the setting named, no check run, within the issue's 30 s. */
function expectStopped(r: Awaited<ReturnType<typeof run>>, code: number, named: RegExp): void {
  expect(r.code, r.err).toBe(code)
  expect(r.err).toMatch(/^idp-conformance: preflight: /)
  expect(r.err).toMatch(named)
  expect(r.err).toMatch(/No check was run/)
  expect(r.out).not.toMatch(/^Running /m)
  expect(r.out).not.toMatch(/^(PASS|FAIL|ERROR) /m)
  expect(r.ms).toBeLessThan(30_000)
}

describe('preflight', () => {
  test('the right settings pass it, and the run goes on', async () => {
    const checked = await preflight(server.target)
    expect(checked.ok).toBe(true)
    expect(checked.confirmed).toEqual([
      'discovery',
      'JWKS (1 key)',
      'client conformance-client authenticated (client_credentials)',
      'alice signed in (login form post)',
    ])
    expect(checked.notes).toEqual([])
    // the sign-in's time seeds the run's pace (pace.ts) until its own browser rounds are timed
    expect(checked.ok && checked.signIn).toEqual({
      ms: expect.any(Number) as number,
      from: 'form post',
    })
    const reports = join(dir, 'good-reports')
    const r = await run(against(configFile('good'), '--only', 'DISC-01', '--report-dir', reports))
    expect(r.code, r.err).toBe(EXIT.ok)
    expect(r.out).toMatch(/^Preflight: discovery; JWKS \(1 key\); client conformance-client/m)
    expect(r.out).toMatch(/^PASS DISC-01/m)
    // no browser round in this run: the speed is the preflight's sign-in's
    expect(r.out).toMatch(
      /^Speed: one browser round took \d+ ms \(the preflight's sign-in by form post, a lower bound of a browser round; no round of the run reached the client; nominal 2000 ms\): check limits scaled ×\d\.\d$/m,
    )
    // and report.json keeps it, so a CI user sees why limits were raised (or not)
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as {
      speed?: unknown
    }
    expect(report.speed).toEqual({
      rounds: 0,
      roundMs: expect.any(Number) as number,
      nominalMs: 2000,
      scale: expect.any(Number) as number,
      scaled: true,
      seed: { ms: expect.any(Number) as number, from: 'form post' },
    })
  })

  test('a wrong client secret exits 2 naming clients.main.secret and the answer', async () => {
    const file = configFile('wrong-secret', (c) => ({
      ...c,
      clients: { ...c.clients, main: { ...c.clients.main, secret: 'rotated-yesterday' } },
    }))
    const r = await run(against(file))
    expectStopped(r, EXIT.usage, /clients\.main\.secret .*was refused: .*error=invalid_client/)
    expect(r.err).toContain(`in ${file}`)
    expect(r.err).not.toContain('rotated-yesterday')
  })

  test('a client without the client_credentials grant is told apart by a code never issued', async () => {
    // the third fixture client has the code grant only: client_credentials is refused for the
    // grant, and its credentials are judged by the invalid_grant of a made-up code
    const third = server.target.clients.third
    if (!third) throw new Error('the fixtures have a third client')
    const good = await preflight(
      resolveTarget({ ...server.target, clients: { main: third } }, false),
      { browser: false },
    )
    expect(good.ok).toBe(true)
    expect(good.confirmed).toContain(
      `client ${third.id} authenticated (a code never issued was refused as invalid_grant)`,
    )
    const wrong = await preflight(
      resolveTarget({ ...server.target, clients: { main: { ...third, secret: 'not-it' } } }, false),
      { browser: false },
    )
    expect(wrong.ok).toBe(false)
    if (!wrong.ok) expect(wrong.message).toMatch(/^clients\.main\.secret .*invalid_client/)
  })

  test('a wrong password exits 2 naming users.primary.password', async () => {
    const file = configFile('wrong-password', (c) => ({
      ...c,
      users: { ...c.users, primary: { ...c.users.primary, password: 'not-her-password' } },
    }))
    const r = await run(against(file))
    expectStopped(
      r,
      EXIT.usage,
      /users\.primary\.password .*was refused: the login page came back after the sign-in \(HTTP 401\): "Incorrect username or password\."/,
    )
    expect(r.err).not.toContain('not-her-password')
  })

  test('a CA that did not issue the certificate exits 2: TLS verification, with --ca', async () => {
    const r = await run(untrusting(configFile('good')))
    expectStopped(r, EXIT.usage, /TLS verification failed \([A-Z_]+: .*--ca FILE/)
    expect(r.err).not.toMatch(/unreachable/)
    // without the preflight the reachability probe says the same
    const old = await run(untrusting(configFile('good'), '--no-preflight'))
    expect(old.code).toBe(EXIT.usage)
    expect(old.err).toMatch(/TLS verification failed .*--ca FILE/)
  })

  test('an unreachable target exits 3 and says unreachable', async () => {
    const r = await run(['--base-url', 'https://127.0.0.1:1', '--config', configFile('good')])
    expectStopped(r, EXIT.unreachable, /the target is unreachable \(ECONNREFUSED/)
  })

  test('--no-preflight runs the checks with a wrong secret, as before', async () => {
    const file = configFile('wrong-secret-2', (c) => ({
      ...c,
      clients: { ...c.clients, main: { ...c.clients.main, secret: 'rotated' } },
    }))
    const r = await run(against(file, '--no-preflight', '--only', 'DISC-01'))
    expect(r.code, r.err).toBe(EXIT.ok)
    expect(r.out).not.toMatch(/Preflight/)
    expect(r.out).toMatch(/^PASS DISC-01/m)
  })

  test('an ambiguous answer is a note and the run goes on', async () => {
    // a provider that answers every token request invalid_request (which RFC 6749 §5.2 allows
    // for a request it finds malformed) says nothing about the client's credentials
    const odd = await startEmbedded({
      tls: server.tls,
      extend: (app) => {
        app.server.ext('onRequest', (request, h) =>
          request.path === '/auth/token'
            ? h.response({ error: 'invalid_request' }).code(400).takeover()
            : h.continue,
        )
      },
    })
    try {
      const checked = await preflight(odd.target)
      expect(checked.ok).toBe(true)
      expect(checked.notes).toEqual([
        'whether client conformance-client authenticates could not be told: client_credentials answered HTTP 400 error=invalid_request, a code never issued HTTP 400 error=invalid_request; the run goes on',
      ])
      expect(checked.confirmed).toContain('alice signed in (login form post)')
    } finally {
      await odd.stop()
    }
  })

  test('no answer to discovery stops the run as unreachable; a slow later step is a note', async () => {
    // answers the given path 1.5 s late (bounded: the server does answer)
    const late = (path: string) =>
      startEmbedded({
        tls: server.tls,
        extend: (app) => {
          app.server.ext('onRequest', async (request, h) => {
            if (request.path === path) await new Promise((resolve) => setTimeout(resolve, 1500))
            return h.continue
          })
        },
      })
    const [slowDiscovery, slowToken] = await Promise.all([
      late('/.well-known/openid-configuration'),
      late('/auth/token'),
    ])
    try {
      const hung = await preflight(slowDiscovery.target, { stepTimeoutMs: 1000 })
      expect(hung).toMatchObject({ ok: false, exit: 'unreachable' })
      if (!hung.ok) expect(hung.message).toMatch(/the target did not answer within 1 s$/)
      const slow = await preflight(slowToken.target, { stepTimeoutMs: 1000 })
      expect(slow.ok).toBe(true)
      expect(slow.notes).toEqual([
        'the preflight could not finish (the client_credentials request: no answer within 1 s); the run goes on',
      ])
    } finally {
      await Promise.all([slowDiscovery.stop(), slowToken.stop()])
    }
  })

  test('what the IdP echoes of a credential is redacted from the message', async () => {
    const echoing = await startEmbedded({
      tls: server.tls,
      extend: (app) => {
        app.server.ext('onPreHandler', (request, h) => {
          const form = request.payload as Record<string, string> | null
          return request.path === '/auth/token'
            ? h
                .response({
                  error: 'invalid_client',
                  error_description: `no client has the secret ${form?.client_secret ?? ''}`,
                })
                .code(401)
                .takeover()
            : h.continue
        })
      },
    })
    try {
      const checked = await preflight(echoing.target)
      expect(checked.ok).toBe(false)
      if (!checked.ok) {
        expect(checked.message).toMatch(/no client has the secret \[redacted\]/)
        expect(checked.message).not.toContain(echoing.target.clients.main.secret)
      }
    } finally {
      await echoing.stop()
    }
  })

  test("a check's ERROR says TLS verification failed, or unreachable, not a bare fetch failure", async () => {
    const untrusted = resolveTarget({
      ...server.target,
      ca: (await createDevCertificate(['127.0.0.1'])).ca,
    })
    const down = resolveTarget({ ...server.target, baseUrl: 'https://127.0.0.1:1' })
    try {
      const [tls] = await runChecks(untrusted, { ids: ['DISC-01'] })
      expect(tls?.verdict).toBe('error')
      expect(tls?.message).toMatch(/TLS verification failed \([A-Z_]+: .*--ca FILE/)
      const [unreachable] = await runChecks(down, { ids: ['DISC-01'] })
      expect(unreachable?.verdict).toBe('error')
      expect(unreachable?.message).toMatch(/the target is unreachable \(ECONNREFUSED/)
    } finally {
      await Promise.all([untrusted.dispatcher.close(), down.dispatcher.close()])
    }
  })
})

describe('transportProblem', () => {
  test("reads the code along an error's causes, and the browser's net:: names", () => {
    const fetchFailed = new TypeError('fetch failed', {
      cause: Object.assign(new Error('unable to verify the first certificate'), {
        code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      }),
    })
    expect(transportProblem(fetchFailed)?.kind).toBe('tls')
    expect(transportProblem(fetchFailed)?.message).toMatch(/--ca FILE/)
    const expired = Object.assign(new Error('certificate has expired'), {
      code: 'CERT_HAS_EXPIRED',
    })
    expect(transportProblem(expired)?.message).toMatch(/expired certificate/)
    expect(transportProblem(expired)?.message).not.toMatch(/--ca/)
    const refused = new AggregateError([
      Object.assign(new Error('connect ECONNREFUSED ::1:1'), { code: 'ECONNREFUSED' }),
    ])
    expect(transportProblem(refused)?.kind).toBe('unreachable')
    expect(
      transportProblem(new Error('page.goto: net::ERR_CERT_AUTHORITY_INVALID at https://x/'))?.kind,
    ).toBe('tls')
    expect(transportProblem(new Error('net::ERR_NAME_NOT_RESOLVED'))?.kind).toBe('unreachable')
    expect(transportProblem(new Error('socket hang up'))).toBeUndefined()
    expect(transportProblem('not an error')).toBeUndefined()
  })
})
