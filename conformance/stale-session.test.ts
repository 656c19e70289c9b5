import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { SessionRepository, Store } from '../server/store/store.ts'
import { check } from './harness/check.ts'
import { startEmbedded, type Embedded } from './harness/embedded.ts'
import { signIn } from './harness/flows.ts'
import type { CheckResult } from './harness/types.ts'
import { runChecks } from './runner.ts'
import { scriptSignIn } from './self-test/broken-server.ts'

// Issue 29: a shared IdP session that has ended, at a provider whose login page a script renders
// (no password field in the served HTML, so the session replay cannot tell it is a login page),
// is dropped and signed in again, once, and the new session is shared from then on. The checks
// are the test's own, run by the runner in place of the registered ones for their IDs.
describe('a shared session that ends, behind a login page a script renders', () => {
  let embedded: Embedded
  /** The digests of the sessions the server created, and its store, to end them. */
  const created: string[] = []
  let store: Store | undefined
  const tracked = (sessions: SessionRepository): SessionRepository => ({
    insert: async (session) => {
      created.push(session.digest)
      await sessions.insert(session)
    },
    get: (digest, now) => sessions.get(digest, now),
    end: (digest, now) => sessions.end(digest, now),
  })
  beforeAll(async () => {
    embedded = await startEmbedded({
      extend: scriptSignIn({ scriptRendered: true }),
      wrapStore: (real) => {
        store = real
        const sessions = tracked(real.sessions)
        return new Proxy(real, {
          get: (target, key): unknown =>
            key === 'sessions' ? sessions : (Reflect.get(target, key) as unknown),
        })
      },
    })
  })
  afterAll(async () => {
    await embedded.stop()
  })

  test('is dropped and signed in again once; the next check replays the new session', async () => {
    const signInOnce = check(async (ctx) => {
      await signIn(ctx, { scope: 'openid' })
    })
    const results: CheckResult[] = await runChecks(embedded.target, {
      ids: ['TOK-01', 'TOK-02', 'TOK-03', 'TOK-04', 'TOK-05'],
      concurrency: 1,
      checkTimeoutMs: 60_000,
      checks: {
        // signs the user in through the browser: the run's shared session
        'TOK-01': signInOnce,
        // the session is replayed once: it is reusable at this IdP
        'TOK-02': signInOnce,
        // the IdP ends every session it has (as a logout elsewhere, or a defence, would)
        'TOK-03': check(async () => {
          for (const digest of created.splice(0))
            await store?.sessions.end(digest, Math.floor(Date.now() / 1000))
        }),
        // the replay meets the script's login page, which it cannot read: the browser, given the
        // session's cookies, meets the login page, and the session is dropped and signed in anew
        'TOK-04': signInOnce,
        // the new session is shared: a replay gives the code
        'TOK-05': signInOnce,
      },
    })
    const byId = new Map(results.map((r) => [r.id, r]))
    for (const r of results) expect(r.verdict, `${r.id}: ${r.message ?? ''}`).toBe('pass')
    const notes = (id: string): string => byId.get(id)?.notes.join('\n') ?? ''
    const replayed = /authorization code from \S+'s IdP session \(HTTP replay/
    expect(notes('TOK-01')).toMatch(/session is shared with later checks/)
    expect(notes('TOK-02')).toMatch(replayed)
    expect(notes('TOK-04')).toMatch(/the session replay did not reach the client/)
    expect(notes('TOK-04')).toMatch(
      /IdP session had ended \(given its cookies, the browser met the login page\); dropped and signed in again/,
    )
    expect(notes('TOK-05')).toMatch(replayed)
  }, 120_000)
})
