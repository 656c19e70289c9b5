import { http, HttpResponse } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser } from '@playwright/test'
import { launchBrowser } from '../harness/browser.ts'
import { runCheck, type RunResources } from '../harness/check.ts'
import { startEmbedded, type Embedded } from '../harness/embedded.ts'
import { registeredChecks } from '../runner.ts'
import { SharedSessions } from '../harness/session.ts'
import type { CheckResult } from '../harness/types.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import { FAILED_VERDICT, judge } from './judge.ts'
import { partsOf, sabotage } from './sabotage.ts'
import { rotatingRefreshTokens } from './sabotage/refresh.ts'
import { DISCOVERY, type BrokenTarget } from './sabotage/kit.ts'

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
function resourcesWith(sessions: SharedSessions): RunResources {
  return {
    counters: sessions.counters,
    sessions,
    browser: () => (browser ??= launchBrowser(shared.target)),
    // the browser outlives the check; runCheck closes the contexts the check opened
    close: () => Promise.resolve(),
  }
}

/** Runs one check against the target broken as `s` says. */
async function withSabotage(id: RequirementId, s: BrokenTarget): Promise<CheckResult> {
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
  const broken = await startEmbedded({
    faults: s.faults,
    ...(s.config ? { config: s.config } : {}),
    tls: shared.tls,
  })
  try {
    return await runCheck(id, broken.target, resourcesWith(new SharedSessions()))
  } finally {
    await broken.stop()
  }
}

// Every check is proven able to fail: against a target broken in exactly its property it must
// fail, and by its own assertion (judge.ts), never by a crash, a timeout or another assertion.
describe('self-test: every check fails by its own assertion against a broken target', () => {
  const ids = registeredChecks().filter(selected)
  // a mistyped filter must not look like a green self-test
  if (ids.length === 0)
    test(`SELF_TEST_ONLY=${only.join(',')} names a registered check`, () => {
      expect.fail(`SELF_TEST_ONLY=${only.join(',')} matches no registered check ID or area`)
    })
  const cases = ids.flatMap((id) => {
    const parts = partsOf(sabotage[id])
    return parts.map((s, i) => ({
      id,
      s,
      level: requirements[id].level,
      part: parts.length > 1 ? ` (part ${i + 1}/${parts.length})` : '',
    }))
  })
  const name = (c: (typeof cases)[number]): string =>
    `${c.id}${c.part} ${FAILED_VERDICT[c.level]}s when ${c.s.how}`
  const prove = async (c: (typeof cases)[number], assert: typeof expect): Promise<void> => {
    const result = await withSabotage(c.id, c.s)
    const problems = judge(result, c.level, c.s.expect)
    assert(
      problems,
      `${c.id} against "${c.s.how}": ${result.verdict}: ${result.message ?? '(no message)'}`,
    ).toEqual([])
  }
  // msw patches the process's fetch: the sabotages by msw handlers run one at a time
  for (const c of cases.filter((c) => 'handlers' in c.s)) test(name(c), () => prove(c, expect))
  // a broken server is a target of its own, which no msw handler matches: those sabotages run a
  // few at a time (the project's maxConcurrency)
  const broken = cases.filter((c) => !('handlers' in c.s))
  // (an empty suite would fail a run that SELF_TEST_ONLY narrowed to msw sabotages)
  if (broken.length > 0)
    describe.concurrent('against broken servers', () => {
      for (const c of broken) test(name(c), ({ expect: local }) => prove(c, local))
    })
})

test('every sabotage of a check says what it breaks in its own words', () => {
  for (const id of registeredChecks()) {
    const hows = partsOf(sabotage[id]).map((s) => s.how)
    expect(new Set(hows).size, `${id}: ${hows.join(' | ')}`).toBe(hows.length)
  }
})

// The judge at work on real runs: DISC-02 broken in ways that make it fail, but not by the
// assertion its sabotage names (the issuer comparison), proves nothing.
describe('self-test: a check failing for the wrong reason is rejected', () => {
  const disc02 = partsOf(sabotage['DISC-02'])[0]
  const wrongReasons: [string, BrokenTarget, RegExp][] = [
    [
      'the target cannot be reached (a network error)',
      { handlers: (t) => [http.get(t.baseUrl + DISCOVERY, () => HttpResponse.error())] },
      /not an assertion|does not match/,
    ],
    [
      'the check fails by another of its assertions (an HTML discovery answer)',
      {
        handlers: (t) => [
          http.get(t.baseUrl + DISCOVERY, () => HttpResponse.html('<p>maintenance</p>')),
        ],
      },
      /does not match the expected assertion/,
    ],
  ]
  test.each(wrongReasons)('DISC-02 failing because %s is rejected', async (_, broken, why) => {
    const result = await withSabotage('DISC-02', broken)
    // the check did fail, yet the self-test must not count it as proof
    expect(result.verdict).not.toBe('pass')
    const problems = judge(result, 'MUST', disc02?.expect ?? /^$/)
    expect(problems.join('; ')).toMatch(why)
  })

  test('DISC-02 failing by its own assertion is accepted (the control)', async () => {
    const result = await withSabotage('DISC-02', disc02 as BrokenTarget)
    expect(judge(result, 'MUST', disc02?.expect ?? /^$/)).toEqual([])
  })
})

// A check with nothing to assert is no pass: RT-10 says nothing of refresh tokens that rotate.
describe('self-test: a check with nothing to assert does not pass', () => {
  test('RT-10 against refresh tokens that rotate is skipped with the reason', async () => {
    const result = await withSabotage('RT-10', rotatingRefreshTokens)
    expect(result.verdict, result.message).toBe('skip')
    expect(result.message).toMatch(/refresh tokens rotate/)
  })
})
