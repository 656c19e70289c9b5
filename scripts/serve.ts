import { parseArgs } from 'node:util'
import { createServer } from '../server/app.ts'
import { ConfigError, loadConfig } from '../server/config.ts'
import { formatFinding } from '../server/explain/findings.ts'
import { RegistrationError } from '../server/registry/registrations.ts'
import { devCertificateHosts, loadTls } from '../server/tls.ts'

const USAGE = `usage: idp-conformance serve [--clients FILE] [--users FILE] [--explain | --no-explain]

  --clients FILE   your clients (JSON), upserted at every start; env CLIENTS_FILE
  --users FILE     your users (JSON), upserted at every start; env USERS_FILE
  --explain        record what each client does against the RFCs (default, unless NODE_ENV=production)
  --no-explain     do not; env EXPLAIN=false

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
  const env: NodeJS.ProcessEnv = {
    // client-check mode is on by default when serving, and never in production
    ...(process.env.NODE_ENV === 'production' ? {} : { EXPLAIN: 'true' }),
    ...process.env,
    ...(args.clients !== undefined ? { CLIENTS_FILE: args.clients } : {}),
    ...(args.users !== undefined ? { USERS_FILE: args.users } : {}),
    ...(args.explain ? { EXPLAIN: 'true' } : {}),
    ...(args['no-explain'] ? { EXPLAIN: 'false' } : {}),
  }
  const config = loadConfig(env)
  const tls = await loadTls({ ...config, hosts: devCertificateHosts(config.host, config.baseUrl) })
  const app = await createServer(config, {
    tls,
    onFinding: (finding) => console.log(formatFinding(finding)),
  })
  for (const warning of app.registrationWarnings) console.warn(`warning: ${warning}`)
  await app.start()
  console.log(`reference server listening on ${config.baseUrl}`)
  if (tls.caPath)
    console.log(
      `dev CA certificate: ${tls.caPath} (curl --cacert ${tls.caPath} ${config.baseUrl}/.well-known/openid-configuration)`,
    )
  if (config.httpPort !== undefined)
    console.log(
      `plain HTTP listener on port ${config.httpPort} answers every request with an error`,
    )
  if (config.explain)
    console.log(
      `explain mode: findings print here and at ${config.baseUrl}/dev/findings (JSON: /dev/findings.json); --no-explain turns it off`,
    )
  const stop = (): void => {
    void app.stop().then(() => process.exit(0))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} catch (err) {
  console.error(
    err instanceof ConfigError || err instanceof RegistrationError
      ? err.message
      : `failed to start: ${(err as Error).message}`,
  )
  process.exit(err instanceof ConfigError || err instanceof RegistrationError ? 2 : 1)
}
