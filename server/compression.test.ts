import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { authorizeQuery, testApp } from './test-helpers.ts'

let app: App
beforeAll(async () => {
  app = await testApp()
})
afterAll(async () => {
  await app.stop()
})

describe('no response is HTTP-compressed (BREACH, RFC 7457 §2.6; issue 33)', () => {
  test('the login page (a CSRF token) and discovery come back uncompressed to a client that accepts gzip', async () => {
    const gzip = 'gzip, deflate, br'
    const page = await app.server.inject({
      url: `/auth/authorize?${authorizeQuery().toString()}`,
      headers: { 'accept-encoding': gzip },
    })
    const discovery = await app.server.inject({
      url: '/.well-known/openid-configuration',
      headers: { 'accept-encoding': gzip },
    })
    for (const res of [page, discovery]) {
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-encoding']).toBeUndefined()
      // large enough that hapi's default (from 1 KiB) would have compressed it
      expect(res.rawPayload.length).toBeGreaterThan(1024)
    }
    expect(page.payload).toContain('name="csrf"')
  })
})
