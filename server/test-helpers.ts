import { createServer, type App, type AppOptions } from './app.ts'
import { loadConfig, type Config } from './config.ts'
import { createDevCertificate, type TlsMaterial } from './tls.ts'

let tls: Promise<TlsMaterial> | undefined

/** A reference server on in-memory SQLite with fixtures, for `server.inject` tests (not started). */
export async function testApp(
  config: Partial<Config> = {},
  options: Omit<AppOptions, 'tls'> = {},
): Promise<App> {
  tls ??= createDevCertificate(['127.0.0.1'])
  const cfg = loadConfig(
    {},
    { port: 0, baseUrl: 'https://idp.test', databaseUrl: 'sqlite::memory:', ...config },
  )
  return createServer(cfg, { tls: await tls, log: () => undefined, ...options })
}
