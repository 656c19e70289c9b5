import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { freePort } from '../test-helpers.ts'
import { openDatabase } from '../store/knex/index.ts'
import { postgresAvailable, TEST_PG_URL } from '../test-helpers.ts'
import { FlowClient, SERVICE, startServer, type ServerProcess } from './harness.ts'

/**
 * Two server processes of one deployment on one PostgreSQL database (ARCHITECTURE.md: all
 * state is shared through the store): booted at once on an empty schema, then driven so that
 * every request pair crosses from one process to the other.
 */

const pgUp = await postgresAvailable()
const TOKEN_LIMIT = 40

describe.skipIf(!pgUp)('two processes on one PostgreSQL database', () => {
  const schema = `scale_${process.pid}_${randomBytes(4).toString('hex')}`
  let a: ServerProcess
  let b: ServerProcess
  let client: FlowClient

  beforeAll(async () => {
    const [portA, portB] = [await freePort(), await freePort()]
    // one issuer for the deployment; the processes listen on two ports
    const baseUrl = `https://127.0.0.1:${portA}`
    const env = {
      DATABASE_URL: TEST_PG_URL,
      DATABASE_SCHEMA: schema,
      RATE_LIMIT_TOKEN: `${TOKEN_LIMIT}/60`,
    }
    const dirs = [mkdtempSync(join(tmpdir(), 'proc-a-')), mkdtempSync(join(tmpdir(), 'proc-b-'))]
    // booted at the same moment on an empty schema: migrations and the key set race
    ;[a, b] = await Promise.all([
      startServer({ dataDir: dirs[0] ?? '', env, port: portA, baseUrl }),
      startServer({ dataDir: dirs[1] ?? '', env, port: portB, baseUrl }),
    ])
    client = new FlowClient(...dirs)
  })

  afterAll(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed */
    await Promise.all([a?.stop(), b?.stop()])
    await client?.close()
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    const knex = openDatabase(TEST_PG_URL)
    await knex.raw('drop schema if exists ?? cascade', [schema])
    await knex.destroy()
  })

  const jwks = async (p: ServerProcess) =>
    (await (await client.fetch(`${p.base}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string }[]
    }

  test('booting together on an empty database, both publish one and the same key', async () => {
    const [ja, jb] = [await jwks(a), await jwks(b)]
    expect(ja.keys).toHaveLength(1)
    expect(jb).toEqual(ja)
  })

  test('a code issued by one process is redeemed by the other, and its token works on the first', async () => {
    const { code, verifier } = await client.code(a.base)
    const res = await client.redeem(b.base, code, verifier)
    expect(res.status).toBe(200)
    const info = await client.fetch(`${a.base}/auth/user-info`, {
      headers: { authorization: `Bearer ${String(res.body.access_token)}` },
    })
    expect(info.status).toBe(200)
  })

  test('a revocation on one process holds on the other', async () => {
    const tokens = await client.tokens(a.base)
    const refreshToken = tokens.refresh_token ?? ''
    expect((await client.introspect(b.base, tokens.access_token ?? '')).body.active).toBe(true)
    expect((await client.revoke(b.base, refreshToken)).status).toBe(200)
    const refresh = await client.refresh(a.base, refreshToken)
    expect(refresh.status).toBe(400)
    expect(refresh.body.error).toBe('invalid_grant')
    // the access token minted with it goes too (RFC 7009 §2.1)
    expect((await client.introspect(a.base, tokens.access_token ?? '')).body.active).toBe(false)
  })

  test('20 concurrent redemptions of one code across both: exactly one wins, no 5xx', async () => {
    const { code, verifier } = await client.code(a.base)
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.redeem(i % 2 ? a.base : b.base, code, verifier)),
    )
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s >= 500)).toEqual([])
    for (const r of results.filter((x) => x.status !== 200))
      expect(r.body.error).toBe('invalid_grant')
  })

  test('concurrent refresh, revoke and introspect of one token across both: no 5xx, and revoked after', async () => {
    const tokens = await client.tokens(b.base)
    const rt = tokens.refresh_token ?? ''
    const at = tokens.access_token ?? ''
    const results = await Promise.all(
      Array.from({ length: 18 }, (_, i) => {
        const p = i % 2 ? a.base : b.base
        return i % 3 === 0
          ? client.refresh(p, rt)
          : i % 3 === 1
            ? client.revoke(p, rt)
            : client.introspect(p, at)
      }),
    )
    expect(results.map((r) => r.status).filter((s) => s >= 500)).toEqual([])
    // refreshes that lost the race to a revocation are invalid_grant, never anything else
    for (const r of results.filter((x) => x.status === 400))
      expect(r.body.error).toBe('invalid_grant')
    for (const p of [a, b]) expect((await client.refresh(p.base, rt)).status).toBe(400)
  })

  test('the rate limit is counted across both processes', async () => {
    // stay inside one fixed window of 60 s
    const intoWindow = Math.floor(Date.now() / 1000) % 60
    if (intoWindow > 45) await new Promise((r) => setTimeout(r, (61 - intoWindow) * 1000))
    const each = TOKEN_LIMIT / 2 + 5
    const statuses: number[] = []
    const remaining: number[] = []
    for (let i = 0; i < each * 2; i++) {
      const res = await client.form(`${(i % 2 ? a : b).base}/auth/token`, {
        grant_type: 'client_credentials',
        client_id: SERVICE.id,
        client_secret: SERVICE.secret,
      })
      statuses.push(res.status)
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')))
    }
    // each process saw only `each` (< limit) requests; together they exceed the limit
    expect(statuses.filter((s) => s === 200)).toHaveLength(TOKEN_LIMIT)
    expect(statuses.filter((s) => s === 429)).toHaveLength(each * 2 - TOKEN_LIMIT)
    expect(remaining.slice(0, TOKEN_LIMIT)).toEqual(
      Array.from({ length: TOKEN_LIMIT }, (_, i) => TOKEN_LIMIT - 1 - i),
    )
  })
})
