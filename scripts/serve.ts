import { createServer } from '../server/app.ts'
import { ConfigError, loadConfig } from '../server/config.ts'
import { devCertificateHosts, loadTls } from '../server/tls.ts'

// npm run serve: the reference server on https://127.0.0.1:8443 (ARCHITECTURE.md contracts)
try {
  const config = loadConfig()
  const tls = await loadTls({ ...config, hosts: devCertificateHosts(config.host, config.baseUrl) })
  const app = await createServer(config, { tls })
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
  const stop = (): void => {
    void app.stop().then(() => process.exit(0))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} catch (err) {
  console.error(
    err instanceof ConfigError ? err.message : `failed to start: ${(err as Error).message}`,
  )
  process.exit(err instanceof ConfigError ? 2 : 1)
}
