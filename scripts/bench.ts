import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../server/test-helpers.ts'
import { signingBaseline } from './bench/baselines.ts'
import { clientCredentials, CLIENT, httpTo, mintCode, REDIRECT, signIn } from './bench/http-flow.ts'
import {
  cpuSeconds,
  rssMiB,
  startNode,
  startReferenceServer,
  stop,
  waitForLine,
} from './bench/process.ts'
import { floodScenario, floodSummary } from './bench/flood.ts'
import { percentile, pool, runScenario, type ScenarioResult } from './bench/scenarios.ts'

/** The installed node-oidc-provider's version, for the report. */
function peerVersion(): string {
  const pkg = JSON.parse(
    readFileSync(join('node_modules', 'oidc-provider', 'package.json'), 'utf8'),
  ) as { version: string }
  return pkg.version
}

// npm run bench -- --suite: the whole embedded conformance suite, three times (issue 21)
if (process.argv.includes('--suite')) {
  const { benchSuite } = await import('./bench/suite.ts')
  await benchSuite(process.argv.slice(2))
  process.exit(0)
}

// npm run bench -- --flood [--quick]: the sign-in flood scenario alone (issue 33)
if (process.argv.includes('--flood')) {
  const { benchFlood } = await import('./bench/flood.ts')
  await benchFlood(process.argv.includes('--quick'))
  process.exit(0)
}

// npm run bench -- --hash-cost: one password hash's time and memory, per algorithm
if (process.argv.includes('--hash-cost')) {
  const { benchHashCost } = await import('./bench/hash-cost.ts')
  benchHashCost()
  process.exit(0)
}

// npm run bench [-- --quick] [--database-url URL]: load from this process against the reference
// server in its own process, on loopback, bounded in requests and time (issue 9).
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    'database-url': { type: 'string' },
    out: { type: 'string' },
  },
})
const quick = values.quick ?? false
const seconds = quick ? 3 : 10
// each scenario first runs this long uncounted, so its figures are of JIT-compiled code
const warmup = quick ? 1 : 3
const outDir = values.out ?? 'reports/bench'
const dataDir = mkdtempSync(join(tmpdir(), 'idp-bench-'))
const port = await freePort()
const server = startReferenceServer(port, dataDir, values['database-url'])
const constantPort = await freePort()
const constant = startNode('scripts/bench/constant-server.ts', { PORT: String(constantPort) })
const peerPort = await freePort()
const peer = startNode('scripts/bench/peer-oidc-provider.ts', { PORT: String(peerPort) })
try {
  await waitForLine(server, /listening on/)
  await waitForLine(constant, /listening on/)
  await waitForLine(peer, /listening on/)
  const base = `https://127.0.0.1:${port}`
  const http = httpTo(base, readFileSync(join(dataDir, 'tls', 'ca.pem'), 'utf8'))
  const pid = server.pid ?? 0
  const results: ScenarioResult[] = []
  const ccBody = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: 'service-client',
    client_secret: 'service-secret',
    scope: 'api:reports',
  }).toString()
  const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' }

  console.log(`baselines (${cpus().length} cores)…`)
  const signing = await signingBaseline(quick ? 1 : 3)
  const constantRoute = await runScenario(
    'constant Hapi route, access-logged (baseline)',
    constant.pid ?? 0,
    { url: `https://127.0.0.1:${constantPort}/constant`, connections: 16, duration: seconds },
    warmup,
  )

  const { tokens, session } = await signIn(http)
  const ccToken = await clientCredentials(http)
  const run = async (name: string, options: Parameters<typeof runScenario>[2]) => {
    console.log(`${name}…`)
    const r = await runScenario(
      name,
      pid,
      { connections: 16, ...(options.amount ? {} : { duration: seconds }), ...options },
      options.amount ? 0 : warmup,
    )
    results.push(r)
    return r
  }

  for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json']) {
    const r = await run(`GET ${path}`, { url: base + path })
    r.ratio = {
      to: 'constant Hapi route, access-logged (target ≥ 0.8 ×)',
      value: r.reqPerSec / constantRoute.reqPerSec,
    }
  }
  const issuance = await run('client_credentials issuance', {
    url: `${base}/auth/token`,
    method: 'POST',
    headers: formHeaders,
    body: ccBody,
  })
  issuance.ratio = {
    to: 'raw RS256 signatures/s (jose, all cores)',
    value: issuance.reqPerSec / signing.jose.perSecond,
  }
  // the peer, same scenario, same client, same TLS, same load generator, same run
  console.log('peer: node-oidc-provider client_credentials issuance…')
  const peerIssuance = await runScenario(
    `peer: node-oidc-provider ${peerVersion()} client_credentials issuance`,
    peer.pid ?? 0,
    {
      url: `https://127.0.0.1:${peerPort}/token`,
      method: 'POST',
      headers: formHeaders,
      body: ccBody,
      connections: 16,
      duration: seconds,
    },
    warmup,
  )
  results.push(peerIssuance)
  peerIssuance.ratio = {
    to: 'raw RS256 signatures/s (jose, all cores)',
    value: peerIssuance.reqPerSec / signing.jose.perSecond,
  }
  console.log('sign-in flood…')
  const flood = await floodScenario({
    base,
    caPath: join(dataDir, 'tls', 'ca.pem'),
    serverPid: pid,
    seconds,
    warmup,
    ccBody,
  })
  results.push(flood.calm.token, flood.calm.ready, flood.flooded.token, flood.flooded.ready)
  flood.flooded.token.ratio = {
    to: 'its p99 without the sign-ins (target ≤ 2 ×)',
    value: flood.ratios.token,
  }
  flood.flooded.ready.ratio = {
    to: 'its p99 without the sign-ins (target ≤ 2 ×)',
    value: flood.ratios.ready,
  }

  await run('introspection', {
    url: `${base}/auth/introspect`,
    method: 'POST',
    headers: formHeaders,
    body: new URLSearchParams({
      token: ccToken,
      client_id: 'service-client',
      client_secret: 'service-secret',
    }).toString(),
  })
  await run('user-info', {
    url: `${base}/auth/user-info`,
    headers: { authorization: `Bearer ${tokens.access_token ?? ''}` },
  })
  await run('refresh', {
    url: `${base}/auth/token`,
    method: 'POST',
    headers: formHeaders,
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token ?? '',
      ...CLIENT,
    }).toString(),
  })

  const codeCount = quick ? 300 : 3000
  // a code is redeemed once, so the warm-up redeems codes of its own
  const warmupCodes = quick ? 100 : 500
  console.log(`minting ${codeCount + warmupCodes} codes…`)
  const codes: { code: string; verifier: string }[] = []
  await pool(codeCount + warmupCodes, 8, async () => {
    codes.push(await mintCode(http, session))
  })
  let nextCode = 0
  const exchangeOptions = (amount: number) =>
    ({
      url: `${base}/auth/token`,
      method: 'POST',
      headers: formHeaders,
      connections: 32,
      amount,
      requests: [
        {
          setupRequest: (req: Record<string, unknown>) => {
            const c = codes[nextCode++ % codes.length] ?? { code: '', verifier: '' }
            return {
              ...req,
              body: new URLSearchParams({
                grant_type: 'authorization_code',
                code: c.code,
                code_verifier: c.verifier,
                redirect_uri: REDIRECT,
                ...CLIENT,
              }).toString(),
            }
          },
        },
      ],
    }) as unknown as Parameters<typeof runScenario>[2]
  await runScenario('warm-up', pid, exchangeOptions(warmupCodes))
  const exchange = await run(
    'authorization-code exchange (pre-minted codes)',
    exchangeOptions(codeCount),
  )
  exchange.ratio = {
    to: 'raw RS256 signatures/s (jose, all cores), 2 signatures each',
    value: (exchange.reqPerSec * 2) / signing.jose.perSecond,
  }

  const flows = quick ? 40 : 300
  console.log(`${flows} full sign-ins over HTTP…`)
  const cpu0 = cpuSeconds(pid)
  const t0 = performance.now()
  // a sign-in that fails (a closed socket, a 503 on a loaded host) is counted, never the end of
  // the bench: a run always writes its report
  let signInErrors = 0
  const durations = await pool(flows, 8, async () => {
    await signIn(http).catch(() => {
      signInErrors++
    })
  })
  const wall = (performance.now() - t0) / 1000
  results.push({
    name: 'full sign-in over HTTP (authorize, login, token)',
    requests: flows * 3,
    reqPerSec: Math.round(flows / wall),
    p50Ms: Math.round(percentile(durations, 50)),
    p99Ms: Math.round(percentile(durations, 99)),
    errors: signInErrors,
    non2xx: 0,
    cpuMsPerRequest: ((cpuSeconds(pid) - cpu0) * 1000) / flows,
    peakRssMiB: Math.round(rssMiB(pid)),
  })

  const soakTokens = quick ? 5000 : 100_000
  console.log(`memory soak: ${soakTokens} issued tokens…`)
  const rssSamples: number[] = [rssMiB(pid)]
  const sampler = setInterval(() => rssSamples.push(rssMiB(pid)), 1000)
  await runScenario('soak', pid, {
    url: `${base}/auth/token`,
    method: 'POST',
    headers: formHeaders,
    body: ccBody,
    connections: 16,
    amount: soakTokens,
  })
  clearInterval(sampler)
  rssSamples.push(rssMiB(pid))
  // growth between the first and last fifth of the run, so start-up warm-up is not counted
  const fifth = Math.max(1, Math.floor(rssSamples.length / 5))
  const early = Math.max(...rssSamples.slice(0, fifth))
  const late = Math.max(...rssSamples.slice(-fifth))

  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`
  const rows = results.map(
    (r) =>
      `| ${r.name} | ${r.reqPerSec} | ${r.p50Ms} | ${r.p99Ms} | ${r.errors + r.non2xx} | ${r.cpuMsPerRequest.toFixed(3)} | ${r.peakRssMiB} | ${r.ratio ? `${r.ratio.value.toFixed(2)} × ${r.ratio.to}` : ''} |`,
  )
  const md = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}${quick ? ' (quick mode)' : ''}; store ${values['database-url'] ? 'PostgreSQL' : 'SQLite'}; load generator (autocannon) on the same machine.`,
    '',
    `Baselines: raw RS256 signatures ${Math.round(signing.jose.perSecond)}/s with jose (one process, ${signing.jose.cpuMs.toFixed(3)} CPU ms each) and ${Math.round(signing.crypto.perSecond)}/s with node:crypto (a worker per core, ${signing.crypto.cpuMs.toFixed(3)} CPU ms each) on ${signing.cores} cores; constant Hapi route ${constantRoute.reqPerSec} req/s (${constantRoute.cpuMsPerRequest.toFixed(3)} CPU ms each). Every scenario ran ${warmup} s uncounted first.`,
    '',
    `client_credentials: the server's CPU per issued token is ${(issuance.cpuMsPerRequest / signing.jose.cpuMs).toFixed(2)} × the CPU of one jose signature (target ≤ 1.33 ×); node-oidc-provider's is ${(peerIssuance.cpuMsPerRequest / signing.jose.cpuMs).toFixed(2)} ×.`,
    '',
    '| scenario | req/s | p50 ms | p99 ms | errors | server CPU ms/req | peak RSS MiB | ratio |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Peer: the reference server issues client_credentials tokens at ${(issuance.reqPerSec / peerIssuance.reqPerSec).toFixed(2)} × node-oidc-provider's rate (target ≥ 1.0 ×, goal 1.5 ×), using ${(issuance.cpuMsPerRequest / peerIssuance.cpuMsPerRequest).toFixed(2)} × its server CPU per token (target ≤ 1.0 ×); the peer keeps its grants in its in-memory development adapter, the reference server in ${values['database-url'] ? 'PostgreSQL' : 'SQLite'}.`,
    '',
    floodSummary(flood),
    '',
    `Memory soak: ${soakTokens} tokens issued; RSS ${early.toFixed(0)} MiB early, ${late.toFixed(0)} MiB late (${(((late - early) / early) * 100).toFixed(1)} %).`,
  ].join('\n')
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, 'bench.md'), `${md}\n`)
  writeFileSync(
    join(outDir, 'bench.json'),
    `${JSON.stringify({ machine, quick, signing, constantRoute, peer: peerIssuance, results, soak: { tokens: soakTokens, early, late, samples: rssSamples } }, null, 2)}\n`,
  )
  console.log(`\n${md}\n\nwritten to ${outDir}/bench.md and bench.json`)
} finally {
  await stop(server)
  await stop(constant)
  await stop(peer)
  rmSync(dataDir, { recursive: true, force: true })
}
