import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { rootCertificates } from 'node:tls'
import { parseArgs } from 'node:util'
import { Agent } from 'undici'
import { clients, users } from '../../fixtures/index.ts'
import { RP_CONTROL, RP_NOT_SERVED, RP_TESTS, type RpTest } from '../../server/rp/catalogue.ts'
import { startEmbedded, type Embedded } from '../harness/embedded.ts'
import { buildReport } from '../report/json.ts'
import { junitReport } from '../report/junit.ts'
import { formatResultLine, formatSummary, useColor } from '../report/terminal.ts'
import {
  commandSignIn,
  matchRpTests,
  probeRpIssuers,
  REFUSED_LINE,
  rpOutcome,
  runRpTests,
} from './runner.ts'
import type { CheckResult } from '../harness/types.ts'

/** Why a run did not pass, in one parenthesis: the control, failures, MUSTs unexercised. */
function whyNotPassed(results: readonly CheckResult[], allowUnexercised: boolean): string {
  const control = results.find((r) => r.id === RP_CONTROL)
  const must = results.filter((r) => r.level === 'MUST')
  const ids = (rs: readonly CheckResult[]) => rs.map((r) => r.id).join(', ')
  const failed = results.filter((r) => r.verdict === 'fail')
  const error = must.filter((r) => r.verdict === 'error')
  const unexercised = allowUnexercised ? [] : must.filter((r) => r.verdict === 'skip')
  const why = [
    ...(control?.verdict !== 'pass' ? [`the control ${RP_CONTROL} did not sign in`] : []),
    ...(failed.length ? [`failed: ${ids(failed)}`] : []),
    ...(error.length ? [`MUST inconclusive: ${ids(error)}`] : []),
    ...(unexercised.length
      ? [`MUST not exercised: ${ids(unexercised)}; --allow-unexercised accepts these`]
      : []),
  ]
  return why.length ? ` (${why.join('; ')})` : ''
}

export const RP_EXIT = { ok: 0, failures: 1, usage: 2, unreachable: 3 } as const

/** The fixture client and user the embedded server offers the sign-in (redirect on loopback). */
export const RP_FIXTURE_CLIENT = 'rp-test-client'

export const RP_USAGE = `Usage: idp-conformance rp-test --list
       idp-conformance rp-test --run "<sign-in command>" [options]

Runs your client's sign-in once per RP test issuer ({base_url}/rp/{test-id}: one deliberate
fault each; twice, one after the other, for rp-key-rotation-op-sign-key) and judges it from what the command reports and what the issuer saw your client do
with the tokens. The command reports one of three outcomes:
  signed in       it exits 0
  refused         it prints the line ${REFUSED_LINE} on stdout (any exit code)
  could not run   anything else (another exit code, a crash, a signal, the timeout): ERROR,
                  inconclusive, never counted as a refusal
Negative tests pass when the client refused and used nothing the fault tainted; positive ones
when it signed in. A test whose fault the client never reached because of what it does (no
nonce sent, no JWKS fetched, no user-info call, no discovery, no logout, no refresh) is "not
exercised" (SKIP), never passed.

The command gets: RP_TEST_ISSUER (the issuer to discover), RP_TEST_ID, RP_TEST_EXPECT
(refuse | sign-in), RP_TEST_SIGNED_IN_URL (optional beacon for your signed-in page),
RP_TEST_SIGN_IN and RP_TEST_SIGN_INS (which sign-in of how many: 1 of 1, or 1 and 2 of 2),
RP_TEST_LOGOUT (1 for rp-init-logout, rp-init-logout-other-state and rp-init-logout-no-state:
after the sign-in, log out at the issuer's end_session_endpoint with id_token_hint,
post_logout_redirect_uri and state, and exit 0 once your app accepted the redirect back, or
print ${REFUSED_LINE} if it turned it down; 0 otherwise), RP_TEST_REFRESH (1 for
oidcc-client-test-refresh-token: after the sign-in, redeem the refresh token and call
user-info with the new access token, and exit 0 once that answered; 0 otherwise), RP_TEST_CA and NODE_EXTRA_CA_CERTS (the server's CA, when known); against the embedded
server also RP_TEST_CLIENT_ID, RP_TEST_CLIENT_SECRET, RP_TEST_REDIRECT_URI (http://127.0.0.1/callback,
any port), RP_TEST_POST_LOGOUT_REDIRECT_URI (http://127.0.0.1/logged-out, any port),
RP_TEST_USERNAME, RP_TEST_PASSWORD.

Options:
  --list               the tests, one per line: ID, level, kind, the OpenID Foundation RP test
                       it is or relates to (tab-separated); then the Foundation RP tests not
                       served here, level - and kind "not served", with the reason
  --run CMD            the sign-in command (run through the shell)
  --base-url URL       a separately started reference server (default: start one embedded)
  --ca FILE            PEM to trust for --base-url
  --only IDS           comma-separated exact test IDs or globs (rp-id_token-*); the control
                       always runs; former IDs of renamed tests still work
  --allow-unexercised  pass a run whose MUST tests were not all exercised (none failed)
  --timeout SECONDS    per sign-in (default 120)
  --report-dir DIR     write junit.xml and report.json there
  --json               print the JSON report on stdout instead of the lines
  --quiet              do not echo the command's output
Exit: 0 passed: the control signed in and every MUST test was exercised and passed; 1 otherwise
(a MUST failed, inconclusive or not exercised); 2 usage; 3 server unreachable.
`

export interface RpIo {
  readonly out: NodeJS.WritableStream & { isTTY?: boolean }
  readonly err: NodeJS.WritableStream
  readonly env: NodeJS.ProcessEnv
}

export async function rpTestMain(argv: readonly string[], io: RpIo): Promise<number> {
  let values
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        list: { type: 'boolean' },
        run: { type: 'string' },
        'base-url': { type: 'string' },
        ca: { type: 'string' },
        only: { type: 'string' },
        timeout: { type: 'string' },
        'report-dir': { type: 'string' },
        json: { type: 'boolean' },
        quiet: { type: 'boolean' },
        'allow-unexercised': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values
  } catch (err) {
    io.err.write(`idp-conformance rp-test: ${(err as Error).message}\n${RP_USAGE}`)
    return RP_EXIT.usage
  }
  if (values.help) {
    io.out.write(RP_USAGE)
    return RP_EXIT.ok
  }
  if (values.list) {
    // tab-separated, the ID first (cut -f1 gives the IDs; the served ones are the lines whose
    // level is not -)
    for (const t of RP_TESTS as readonly RpTest[])
      io.out.write(
        `${[
          t.id,
          t.level,
          t.kind,
          t.foundation
            ? `OpenID Foundation ${t.foundation.id}: ${t.foundation.relation}`
            : 'ours: no OpenID Foundation RP test of this name',
        ].join('\t')}\n`,
      )
    // then the Foundation's RP tests not served here: level -, kind "not served", the reason
    for (const n of RP_NOT_SERVED)
      io.out.write(
        `${[n.id, '-', 'not served', `OpenID Foundation ${n.id} (${n.plan}): ${n.reason}`].join('\t')}\n`,
      )
    return RP_EXIT.ok
  }
  const usage = (message: string): number => {
    io.err.write(`idp-conformance rp-test: ${message}\n${RP_USAGE}`)
    return RP_EXIT.usage
  }
  if (!values.run) return usage('give --run "<sign-in command>" or --list')
  const timeout = values.timeout === undefined ? 120 : Number(values.timeout)
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 3600)
    return usage('--timeout must be a whole number of seconds from 1 to 3600')
  const only = values.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const unknown = only?.filter((p) => matchRpTests(p).length === 0) ?? []
  // a Foundation RP test --list shows as not served: say why rather than "no RP test"
  const notServed = unknown.flatMap((p) => RP_NOT_SERVED.filter((n) => n.id === p))
  if (notServed.length)
    return usage(
      `--only names an OpenID Foundation RP test not served here: ${notServed.map((n) => `${n.id} (${n.reason})`).join('; ')}`,
    )
  if (unknown.length)
    return usage(
      `--only names no RP test: ${unknown.join(', ')} (exact IDs of served tests from --list, or a glob such as rp-id_token-*)`,
    )
  if (values.ca && !values['base-url']) return usage('--ca goes with --base-url')

  let embedded: Embedded | undefined
  const scratch = mkdtempSync(join(tmpdir(), 'rp-test-'))
  let dispatcher: Agent | undefined
  try {
    let baseUrl: string
    let caPem: string | undefined
    const env: Record<string, string> = {}
    if (values['base-url']) {
      baseUrl = values['base-url'].replace(/\/+$/, '')
      try {
        caPem = values.ca ? readFileSync(values.ca, 'utf8') : undefined
      } catch (err) {
        return usage(`cannot read --ca: ${(err as Error).message}`)
      }
    } else {
      try {
        embedded = await startEmbedded()
      } catch (err) {
        io.err.write(
          `idp-conformance rp-test: could not start the embedded server: ${(err as Error).message}\n`,
        )
        return RP_EXIT.unreachable
      }
      baseUrl = embedded.target.baseUrl
      caPem = embedded.target.ca
      const client = clients.find((c) => c.id === RP_FIXTURE_CLIENT)
      const [alice] = users
      if (client)
        Object.assign(env, {
          RP_TEST_CLIENT_ID: client.id,
          RP_TEST_CLIENT_SECRET: client.secret,
          RP_TEST_REDIRECT_URI: client.redirectUris[0],
          RP_TEST_POST_LOGOUT_REDIRECT_URI: client.postLogoutRedirectUris[0],
          RP_TEST_USERNAME: alice.username,
          RP_TEST_PASSWORD: alice.password,
        })
    }
    if (caPem) {
      const caFile = values.ca ?? join(scratch, 'ca.pem')
      if (!values.ca) writeFileSync(caFile, caPem)
      env.RP_TEST_CA = caFile
      env.NODE_EXTRA_CA_CERTS = caFile
    }
    dispatcher = new Agent({
      connect: { ca: caPem ? [...rootCertificates, caPem] : undefined },
    })
    const reachable = await probeRpIssuers(baseUrl, dispatcher)
    if (reachable !== true) {
      io.err.write(`idp-conformance rp-test: ${baseUrl} has no RP test issuers: ${reachable}\n`)
      return RP_EXIT.unreachable
    }
    const color = useColor(io.out, io.env)
    const quiet = values.quiet || values.json
    if (!values.json) io.out.write(`RP tests against ${baseUrl}/rp/{test-id}\n`)
    const startedAt = new Date()
    const results = await runRpTests({
      baseUrl,
      dispatcher,
      env,
      ...(only ? { only } : {}),
      signIn: commandSignIn(values.run, {
        timeoutMs: timeout * 1000,
        baseEnv: io.env,
        ...(quiet ? {} : { echo: (chunk: string) => io.err.write(chunk) }),
      }),
      onResult: (r) => {
        if (!values.json) io.out.write(`${formatResultLine(r, color)}\n`)
      },
    })
    // a run whose control never signed in proves nothing, and a MUST not exercised proves
    // nothing about that duty: neither passes (the second may be allowed explicitly)
    const outcome = rpOutcome(results, values['allow-unexercised'] === true)
    const { passed } = outcome
    const report = buildReport({
      results,
      target: { baseUrl, embedded: embedded !== undefined },
      version: '0.1.0',
      startedAt,
      finishedAt: new Date(),
      passed,
    })
    if (values['report-dir']) {
      mkdirSync(values['report-dir'], { recursive: true })
      writeFileSync(
        join(values['report-dir'], 'junit.xml'),
        junitReport(results, {
          suiteName: 'idp-conformance rp-test',
          wallMs: Date.now() - startedAt.getTime(),
        }),
      )
      writeFileSync(
        join(values['report-dir'], 'report.json'),
        `${JSON.stringify(report, null, 2)}\n`,
      )
    }
    if (values.json) io.out.write(`${JSON.stringify(report, null, 2)}\n`)
    else
      io.out.write(
        `${formatSummary(results)}\n${outcome.line}\n${passed ? 'PASSED' : `FAILED${whyNotPassed(results, values['allow-unexercised'] === true)}`}\n`,
      )
    return passed ? RP_EXIT.ok : RP_EXIT.failures
  } finally {
    await dispatcher?.close()
    await embedded?.stop()
    rmSync(scratch, { recursive: true, force: true })
  }
}
