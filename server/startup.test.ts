import { describe, expect, test } from 'vitest'
import { createServer, databaseUrlForLog } from './app.ts'
import { loadConfig } from './config.ts'
import { createDevCertificate } from './tls.ts'

describe('an unreachable database at start', () => {
  test(
    'is retried for DATABASE_CONNECT_TIMEOUT, then named with DATABASE_URL (password hidden) and what was tried',
    { timeout: 30_000 },
    async () => {
      const events: { event: string; detail?: Record<string, unknown> }[] = []
      const config = loadConfig(
        {},
        {
          port: 0,
          baseUrl: 'https://idp.test',
          // nothing listens on port 1
          databaseUrl: 'postgres://idp:s3cret@127.0.0.1:1/test',
          databaseConnectTimeout: 2,
        },
      )
      const started = createServer(config, {
        tls: await createDevCertificate(['127.0.0.1']),
        log: (event, detail) => events.push({ event, ...(detail ? { detail } : {}) }),
      })
      const error = (await started.then(
        () => undefined,
        (err: unknown) => err,
      )) as Error | undefined
      expect(error?.message).toMatch(
        /could not reach the database at DATABASE_URL=postgres:\/\/idp:\*\*\*@127\.0\.0\.1:1\/test: \d+ tries in \d+ s \(DATABASE_CONNECT_TIMEOUT=2\), last: .*ECONNREFUSED/,
      )
      expect(error?.message).not.toContain('s3cret')
      const retries = events.filter((e) => e.event === 'storage-unavailable')
      expect(retries.length).toBeGreaterThanOrEqual(1)
      expect(JSON.stringify(retries)).not.toContain('s3cret')
    },
  )

  test('DATABASE_URL is shown without its password', () => {
    expect(databaseUrlForLog('postgres://u:p@db:5432/x')).toBe('postgres://u:***@db:5432/x')
    expect(databaseUrlForLog('postgres://db/x')).toBe('postgres://db/x')
    expect(databaseUrlForLog('sqlite:.data/idp.sqlite')).toBe('sqlite:.data/idp.sqlite')
  })
})
