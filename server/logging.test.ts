import { describe, expect, test } from 'vitest'
import { createLogger, eventLog, loggableUrl } from './logging.ts'
import { testApp } from './test-helpers.ts'

const capture = () => {
  const lines: string[] = []
  const logger = createLogger({ level: 'debug', destination: { write: (l) => lines.push(l) } })
  return { lines, logger }
}

describe('JSON logs', () => {
  test('query values are redacted except the harmless ones', () => {
    const url = loggableUrl(
      '/auth/authorize',
      new URLSearchParams({ client_id: 'app', state: 's3cr3t-state', login_hint: 'carol' }),
    )
    expect(url).toBe('/auth/authorize?client_id=app&state=[REDACTED]&login_hint=[REDACTED]')
  })

  test('events are written at their level and their secrets redacted', () => {
    const { lines, logger } = capture()
    const log = eventLog(logger)
    log('storage-unavailable', { error: 'connection refused' })
    log('rate-limit-unavailable', { detail: { password: 'hunter2-pw', client_secret: 'cs-1234' } })
    const [outage, limit] = lines.map((l) => JSON.parse(l) as { level: number; event: string })
    expect(outage).toMatchObject({ level: 50, event: 'storage-unavailable' })
    expect(limit).toMatchObject({ level: 40, event: 'rate-limit-unavailable' })
    expect(lines.join('')).not.toMatch(/hunter2-pw|cs-1234/)
  })

  test("/metrics has prom-client's process metrics, and its scrapes write no access line", async () => {
    const { lines, logger } = capture()
    const app = await testApp({ metrics: true }, { logger, log: undefined })
    let body = ''
    try {
      body = (await app.server.inject('/metrics')).payload
      await app.server.inject('/health/live')
    } finally {
      await app.stop()
    }
    expect(body).toMatch(/^process_cpu_user_seconds_total /m)
    expect(body).toMatch(/^nodejs_eventloop_lag_seconds /m)
    expect(body).toMatch(/^# HELP idp_http_requests_total /m)
    const urls = lines
      .map((l) => JSON.parse(l) as { req?: { url?: string }; res?: unknown })
      .filter((l) => l.res !== undefined)
      .map((l) => l.req?.url)
    expect(urls).toContain('/health/live')
    expect(urls).not.toContain('/metrics')
  })

  test('an access line per request, with its id and without credentials', async () => {
    const { lines, logger } = capture()
    const app = await testApp({}, { logger, log: undefined })
    try {
      await app.server.inject({
        method: 'POST',
        url: '/auth/token',
        headers: {
          authorization: `Basic ${Buffer.from('conformance-client:conformance-secret').toString('base64')}`,
          cookie: 'idp_session=session-cookie-value',
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: 'grant_type=refresh_token&refresh_token=refresh-token-value',
      })
      await app.server.inject('/auth/user-info?access_token=access-token-value')
    } finally {
      await app.stop()
    }
    const access = lines
      .map((l) => JSON.parse(l) as { req?: { id?: string; url?: string }; res?: unknown })
      .filter((l) => l.res !== undefined)
    expect(access.map((l) => l.req?.url)).toEqual([
      '/auth/token',
      '/auth/user-info?access_token=[REDACTED]',
    ])
    for (const l of access) expect(typeof l.req?.id).toBe('string')
    // the access lines are an allow-list of fields: nothing else can carry a secret into them
    for (const line of lines.map((l) => JSON.parse(l) as Record<string, unknown>)) {
      if (line.res === undefined) continue
      expect(Object.keys(line).sort()).toEqual(
        ['level', 'time', 'pid', 'req', 'res', 'responseTime', 'msg'].sort(),
      )
      expect(
        Object.keys(line.req as object).every((k) =>
          ['id', 'method', 'url', 'remoteAddress', 'userAgent'].includes(k),
        ),
      ).toBe(true)
      expect(Object.keys(line.res as object)).toEqual(['statusCode'])
    }
    expect(lines.join('')).not.toMatch(
      /conformance-secret|Y29uZm9ybWFuY2|session-cookie-value|refresh-token-value|access-token-value/,
    )
  })
})
