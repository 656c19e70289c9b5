import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { check, createRunResources, register, runCheck, type RunResources } from './check.ts'
import { aside, expectRevoked, expectStatus } from './expect.ts'
import { introspectRaw, revokeRaw } from './requests.ts'
import { resolveTarget, type Target } from './target.ts'

// A provider whose revocation answers text/plain and whose introspection is fine: a check that
// revokes, then introspects, fails on the revocation, whatever it asked afterwards.
let server: Server
let target: Target
let resources: RunResources

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/auth/revoke') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('OK')
    } else if (req.url === '/auth/introspect') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"active":false}')
    } else {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end('{"error":"not_found","error_description":"no such endpoint"}')
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  target = resolveTarget({
    baseUrl: `http://127.0.0.1:${port}`,
    clients: {
      main: { id: 'c', secret: 's', redirectUri: undefined, postLogoutRedirectUri: undefined },
    },
    users: { primary: { username: 'u', password: 'p' } },
  })
  resources = {
    ...createRunResources(target, { reuseSessions: false }),
    browser: () => Promise.reject(new Error('no browser here')),
  }
})
afterAll(async () => {
  await target.dispatcher.close()
  await new Promise((resolve) => server.close(resolve))
})

register({
  'REV-04': check(async (ctx) => {
    await ctx.subcase('the refresh token', async () => {
      expectRevoked(await revokeRaw(ctx, 'a-token'), 'the refresh token')
    })
    // a later exchange, about which nothing failed
    await introspectRaw(ctx, 'a-token')
  }),
  'REV-07': check(async (ctx) => {
    const revoked = await revokeRaw(ctx, 'an-id-token')
    await introspectRaw(ctx, 'an-id-token')
    expectRevoked(revoked, 'an ID token')
  }),
  'RT-09': check(async (ctx) => {
    const revocation = await revokeRaw(ctx, 'a-token')
    aside('precondition', () => expectRevoked(revocation, 'the refresh token'))
  }),
  'PKCE-06': check(async (ctx) => {
    // the first wrong verifier refused with the wrong status, the second accepted
    await ctx.subcase('first', async () => {
      expectStatus(await ctx.http.get('/auth/nowhere'), 400, 'a wrong verifier')
    })
    await ctx.subcase('second', async () => {
      expectStatus(await revokeRaw(ctx, 'x'), 400, 'another wrong verifier')
    })
  }),
  'RATE-01': check(async (ctx) => {
    expectStatus(await ctx.http.get('/auth/nowhere'), 429, 'the hundredth request')
  }),
  'REV-05': check(async (ctx) => {
    await introspectRaw(ctx, 'a-token')
    expectStatus(await ctx.http.get('/auth/nowhere'), 200, 'a request')
  }),
})

describe('a failure is caused by the exchange its expectation judged', () => {
  test('a sub-case judging the revocation names the revocation, not the later introspection', async () => {
    const r = await runCheck('REV-04', target, resources)
    expect(r.verdict).toBe('fail')
    expect(r.cause).toBe(
      'POST /auth/revoke answered HTTP 200: expected Content-Type application/json, got "text/plain"',
    )
  })

  test('an expectation judged after later exchanges still names its own, and two checks share it', async () => {
    const [a, b] = [
      await runCheck('REV-04', target, resources),
      await runCheck('REV-07', target, resources),
    ]
    expect(b.verdict).toBe('fail')
    expect(b.cause).toBe(a.cause)
  })

  test('a wrong status is the request answered that way: method, path, status, error code and description', async () => {
    const r = await runCheck('REV-05', target, resources)
    expect(r.cause).toBe('GET /auth/nowhere answered HTTP 404 error=not_found (no such endpoint)')
  })
})

describe("a failure off the check's subject says why (CheckResult.aside)", () => {
  test('an expectation about an answer that refused the request: refused, the verdict stands', async () => {
    const r = await runCheck('REV-05', target, resources)
    expect(r.verdict).toBe('fail')
    expect(r.aside).toBe('refused')
  })

  test('one failure on the subject, even after the headline, makes the check fail on it', async () => {
    const r = await runCheck('PKCE-06', target, resources)
    expect(r.message).toMatch(/^first: /)
    expect(r.more).toHaveLength(1)
    expect(r.aside).toBeUndefined()
  })

  test('a precondition the check marks', async () => {
    const r = await runCheck('RT-09', target, resources)
    expect(r.verdict).toBe('fail')
    expect(r.aside).toBe('precondition')
  })

  test('a failure on the subject has none: the content of an accepted answer, a missing 429', async () => {
    expect((await runCheck('REV-04', target, resources)).aside).toBeUndefined()
    const throttle = await runCheck('RATE-01', target, resources)
    expect(throttle.verdict).toBe('fail')
    expect(throttle.aside).toBeUndefined()
  })
})
