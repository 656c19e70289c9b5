import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { openDatabase } from '../store/knex/index.ts'
import { postgresAvailable, TEST_PG_URL } from '../test-helpers.ts'
import { FlowClient, startServer } from './harness.ts'

/**
 * kill -9 a server under load and restart it: every refresh token whose response arrived before
 * the kill still works, and every revocation that was answered still holds (ARCHITECTURE.md:
 * a token response is sent only after its grant is committed).
 */

const pgUp = await postgresAvailable()

const stores = [
  { name: 'SQLite (WAL)', postgres: false },
  { name: 'PostgreSQL', postgres: true },
]

for (const store of stores) {
  describe.skipIf(store.postgres && !pgUp)(`durability on ${store.name}`, () => {
    test('kill -9 under load loses no issued refresh token and no answered revocation', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'durability-'))
      const schema = `scale_${process.pid}_${randomBytes(4).toString('hex')}`
      const env: Record<string, string> = store.postgres
        ? { DATABASE_URL: TEST_PG_URL, DATABASE_SCHEMA: schema }
        : {}
      let server = await startServer({ dataDir, env })
      const client = new FlowClient(dataDir)
      const issued: string[] = []
      const revoked: string[] = []
      let stop = false
      const worker = async (n: number): Promise<void> => {
        for (let i = 0; !stop; i++) {
          try {
            const tokens = await client.tokens(server.base)
            const refreshToken = tokens.refresh_token ?? ''
            if ((i + n) % 3 === 0) {
              const res = await client.revoke(server.base, refreshToken)
              if (res.status === 200) revoked.push(refreshToken)
            } else {
              issued.push(refreshToken)
            }
          } catch {
            // requests in flight when the process dies fail; they promised nothing
          }
        }
      }
      const workers = [0, 1, 2, 3].map(worker)
      try {
        // no throughput floor: however slow the shared machine, wait for enough answered work
        // (the test's own timeout is the only bound); this test is about durability, not speed
        while (issued.length < 10 || revoked.length < 4) await new Promise((r) => setTimeout(r, 50))
        // under load: the workers are mid-flight when the process dies
        await server.kill9()
        stop = true
        await Promise.all(workers)

        server = await startServer({ dataDir, env, port: server.port })
        for (const token of issued) {
          const res = await client.refresh(server.base, token)
          expect(res.status, `issued before the kill: ${JSON.stringify(res.body)}`).toBe(200)
        }
        for (const token of revoked) {
          const res = await client.refresh(server.base, token)
          expect(res.status).toBe(400)
          expect(res.body.error).toBe('invalid_grant')
        }
      } finally {
        stop = true
        await server.stop()
        await client.close()
        if (store.postgres) {
          const knex = openDatabase(TEST_PG_URL)
          await knex.raw('drop schema if exists ?? cascade', [schema])
          await knex.destroy()
        }
      }
    })
  })
}
