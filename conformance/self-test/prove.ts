import { setupServer } from 'msw/node'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser } from '@playwright/test'
import { launchBrowser } from '../harness/browser.ts'
import { runCheck, type RunResources } from '../harness/check.ts'
import { startEmbedded, type Embedded } from '../harness/embedded.ts'
import { createDevCertificate } from '../../server/tls.ts'
import { registeredChecks } from '../runner.ts'
import { SharedSessions } from '../harness/session.ts'
import type { CheckResult } from '../harness/types.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import { FAILED_VERDICT, judge } from './judge.ts'
import { partsOf, sabotage } from './sabotage.ts'
import type { BrokenTarget } from './sabotage/kit.ts'

/**
 * `SELF_TEST_ONLY=PKCE-02,TOK,RT-10` runs the sabotages of those checks only (an ID, or an
 * area prefix such as TOK); unset, every check's.
 */
const only = (process.env.SELF_TEST_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean)
const selected = (id: RequirementId): boolean =>
  only.length === 0 || only.some((o) => id === o || id.startsWith(`${o}-`))

/**
 * The target the sabotages break, for one test file: the shared embedded server, msw (which
 * patches this process's fetch and http modules, so a file's msw sabotages run one at a time;
 * files are processes of their own, so the self-test's files run side by side) and one browser.
 * Registers the file's beforeAll/afterAll; returns the runner of one check against a target
 * broken as a sabotage says.
 */
export function sabotageTarget(): (id: RequirementId, s: BrokenTarget) => Promise<CheckResult> {
  const mock = setupServer()
  let shared: Embedded
  /**
   * One browser for every sabotage, as a run has one for every check: launching Chromium per
   * sabotage was most of the self-test's time. Broken targets serve the shared target's
   * certificate, so the browser's pin of it holds for them too.
   */
  let browser: Promise<Browser> | undefined
  /**
   * The users' IdP sessions at the shared target, kept across the sabotages that break it with
   * msw handlers (the server itself is not broken, so a session signed in there stays valid),
   * as a run keeps them across checks. A broken server gets sessions of its own.
   */
  let sharedSessions: SharedSessions

  beforeAll(async () => {
    shared = await startEmbedded()
    sharedSessions = new SharedSessions()
    mock.listen({ onUnhandledRequest: 'bypass' })
  })
  afterAll(async () => {
    mock.close()
    if (browser) await (await browser.catch(() => undefined))?.close()
    await shared.stop()
  })

  /** What a check of the self-test runs with: the shared browser and the target's sessions. */
  const resourcesWith = (sessions: SharedSessions): RunResources => ({
    counters: sessions.counters,
    sessions,
    browser: () => (browser ??= launchBrowser(shared.target)),
    // the browser outlives the check; runCheck closes the contexts the check opened
    close: () => Promise.resolve(),
  })

  return async (id, s) => {
    if ('handlers' in s) {
      mock.use(...s.handlers(shared.target))
      // a session found unusable under one sabotage is not taken as unusable for the next
      if (sharedSessions.unusable) sharedSessions = new SharedSessions()
      try {
        return await runCheck(id, shared.target, resourcesWith(sharedSessions))
      } finally {
        mock.resetHandlers()
      }
    }
    const foreign =
      s.certificate === 'foreign'
        ? await createDevCertificate(['127.0.0.1', 'localhost'])
        : undefined
    const broken = await startEmbedded({
      ...(s.config ? { config: s.config } : {}),
      ...(s.store ? { wrapStore: s.store } : {}),
      ...(s.extend ? { extend: s.extend } : {}),
      ...(s.verifyPassword ? { verifyPassword: s.verifyPassword } : {}),
      // a foreign certificate is served while the target still names the shared CA
      tls: foreign
        ? { cert: foreign.cert, key: foreign.key, ca: shared.tls.ca, caPath: undefined }
        : shared.tls,
    })
    // a deployment: the same server, seen without the embedded target's controls
    const target = s.asDeployment
      ? { ...broken.target, embedded: false, controls: undefined }
      : broken.target
    try {
      return await runCheck(id, target, resourcesWith(new SharedSessions()))
    } finally {
      await broken.stop()
    }
  }
}

/** A proof is tried again only after a first try shorter than this (testTimeout is 120 s). */
const RETRY_WITHIN_MS = 40_000

/**
 * The self-test's proofs, shard `shard` (from 1) of `shards`: every check's sabotages, split
 * between the test files so that they run side by side (one sabotage in `shards` each, in
 * catalogue order). Every check is proven able to fail: against a target broken in exactly
 * its property it must fail, and by its own assertion (judge.ts), never by a crash, a timeout
 * or another assertion.
 */
export function proveSabotages(
  shard: number,
  shards: number,
): (id: RequirementId, s: BrokenTarget) => Promise<CheckResult> {
  const withSabotage = sabotageTarget()
  describe(`self-test (${shard}/${shards}): every check fails by its own assertion against a broken target`, () => {
    const ids = registeredChecks().filter(selected)
    // a mistyped filter must not look like a green self-test
    if (ids.length === 0)
      test(`SELF_TEST_ONLY=${only.join(',')} names a registered check`, () => {
        expect.fail(`SELF_TEST_ONLY=${only.join(',')} matches no registered check ID or area`)
      })
    const cases = ids
      .flatMap((id) => {
        const parts = partsOf(sabotage[id])
        return parts.map((s, i) => ({
          id,
          s,
          level: s.level ?? requirements[id].level,
          part: parts.length > 1 ? ` (part ${i + 1}/${parts.length})` : '',
        }))
      })
      .filter((_, index) => index % shards === shard - 1)
    const name = (c: (typeof cases)[number]): string =>
      `${c.id}${c.part} ${FAILED_VERDICT[c.level]}s when ${c.s.how}`
    const prove = async (c: (typeof cases)[number], assert: typeof expect): Promise<void> => {
      let result = await withSabotage(c.id, c.s)
      // an inconclusive run (the harness could not drive the target: a browser protocol error or
      // a timeout on a loaded machine) proves nothing either way: tried once more, and said so.
      // Never a pass: a check that passes against its sabotage is a false pass, whatever a
      // second try would show. Not after a first try that took a third of the test's time (a
      // check that hung until its own limit), which a second would take past the test's limit.
      if (result.verdict === 'error' && result.durationMs < RETRY_WITHIN_MS) {
        console.warn(`${name(c)}: inconclusive (${result.message ?? ''}), tried once more`)
        result = await withSabotage(c.id, c.s)
      }
      const problems = judge(result, c.level, c.s.expect)
      assert(
        problems,
        // the check's notes (measured values, what it could not judge) tell a failed proof's why
        `${c.id} against "${c.s.how}": ${result.verdict}: ${result.message ?? '(no message)'}` +
          result.notes.map((n) => `\n  note: ${n}`).join(''),
      ).toEqual([])
    }
    // msw patches the process's fetch: the sabotages by msw handlers run one at a time
    for (const c of cases.filter((c) => 'handlers' in c.s)) test(name(c), () => prove(c, expect))
    // a broken server is a target of its own, which no msw handler matches: those sabotages run
    // a few at a time (the project's maxConcurrency)
    const broken = cases.filter((c) => !('handlers' in c.s))
    // (an empty suite would fail a run that SELF_TEST_ONLY narrowed to msw sabotages)
    if (broken.length > 0)
      describe.concurrent('against broken servers', () => {
        for (const c of broken) test(name(c), ({ expect: local }) => prove(c, local))
      })
  })
  return withSabotage
}
