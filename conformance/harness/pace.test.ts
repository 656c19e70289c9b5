import { describe, expect, test } from 'vitest'
import type { Browser, BrowserContext } from '@playwright/test'
import {
  check,
  createRunResources,
  MAX_EXTENSION,
  runCheck,
  type Check,
  type RunResources,
} from './check.ts'
import {
  describeSpeed,
  MAX_SCALE,
  NOMINAL_ROUND_MS,
  Pace,
  recordRound,
  ROUND_MARGIN,
  speedOf,
} from './pace.ts'
import { Slots } from './pool.ts'
import type { RequirementId } from '../requirements.ts'
import type { Target } from './target.ts'

// A target no check below sends anything to; a browser whose contexts are plain objects (the
// rounds below are injected delays, the "slow target": no real load, no real browser).
const target = { baseUrl: 'https://127.0.0.1:1', ca: undefined } as unknown as Target
const fakeBrowser = {
  newContext: () =>
    Promise.resolve({
      pages: () => [],
      close: () => Promise.resolve(),
    } as unknown as BrowserContext),
} as unknown as Browser

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

function resourcesWith(
  checks: Partial<Record<RequirementId, Check>>,
  options: { pace?: Pace; scaleLimits?: boolean; browserSlots?: Slots } = {},
): RunResources {
  return {
    ...createRunResources(target, {
      reuseSessions: false,
      ...(options.pace ? { pace: options.pace } : {}),
      ...(options.scaleLimits === undefined ? {} : { scaleLimits: options.scaleLimits }),
    }),
    browser: () => Promise.resolve(fakeBrowser),
    checks: new Map(Object.entries(checks) as [RequirementId, Check][]),
    ...(options.browserSlots ? { browserSlots: options.browserSlots } : {}),
  }
}

/** A check that authorizes `rounds` times through the (fake) browser, each round `roundMs`. */
const roundsCheck = (rounds: number, roundMs: number, declared?: number): Check =>
  check(declared === undefined ? {} : { browserRounds: declared }, async (ctx) => {
    const context = await ctx.newBrowserContext()
    for (let i = 0; i < rounds; i++) {
      const begun = performance.now()
      await sleep(roundMs)
      // what browser.ts `browse` does when a round reaches the client
      recordRound(context, performance.now() - begun)
    }
  })

describe('the run measures its speed from its browser rounds', () => {
  test('the median round, and a scale from 1 (nominal or faster) to MAX_SCALE', () => {
    const pace = new Pace()
    expect(pace.roundMs()).toBeUndefined()
    expect(pace.scale()).toBe(1)
    pace.record(NOMINAL_ROUND_MS / 4)
    expect(pace.scale()).toBe(1)
    pace.record(NOMINAL_ROUND_MS * 3)
    pace.record(NOMINAL_ROUND_MS * 3)
    expect(pace.roundMs()).toBe(NOMINAL_ROUND_MS * 3)
    expect(pace.scale()).toBe(3)
    for (let i = 0; i < 10; i++) pace.record(NOMINAL_ROUND_MS * 100)
    expect(pace.scale()).toBe(MAX_SCALE)
  })
})

describe("a round measured before the run (the preflight's sign-in) seeds the pace", () => {
  test('it stands for the rounds until the first one is measured, never among them', () => {
    const pace = new Pace()
    let changed = 0
    pace.onChange(() => changed++)
    pace.seed(NOMINAL_ROUND_MS * 4, 'browser')
    expect(changed).toBe(1)
    expect(pace.rounds).toBe(0)
    expect(pace.roundMs()).toBe(NOMINAL_ROUND_MS * 4)
    expect(pace.scale()).toBe(4)
    expect(speedOf(pace, true)).toEqual({
      rounds: 0,
      roundMs: NOMINAL_ROUND_MS * 4,
      nominalMs: NOMINAL_ROUND_MS,
      scale: 4,
      scaled: true,
      seed: { ms: NOMINAL_ROUND_MS * 4, from: 'browser' },
    })
    expect(describeSpeed(speedOf(pace, true))).toBe(
      `one browser round took ${NOMINAL_ROUND_MS * 4} ms (the preflight's browser sign-in; no round of the run reached the client; nominal ${NOMINAL_ROUND_MS} ms): check limits scaled ×4.0`,
    )
    pace.record(NOMINAL_ROUND_MS * 2)
    expect(pace.roundMs()).toBe(NOMINAL_ROUND_MS * 2)
    expect(pace.scale()).toBe(2)
    expect(describeSpeed(speedOf(pace, false))).toBe(
      `one browser round took ${NOMINAL_ROUND_MS * 2} ms (median of 1; nominal ${NOMINAL_ROUND_MS} ms); before the first, ${NOMINAL_ROUND_MS * 4} ms from the preflight's browser sign-in: check limits not scaled (--check-timeout given)`,
    )
    // nothing known: no speed line
    expect(describeSpeed(speedOf(new Pace(), true))).toBeUndefined()
  })

  test('a check that starts before any round of the run gets the seeded limit', async () => {
    // 300 ms of work under a 150 ms limit: it fails at nominal speed, passes at the seeded ×3
    const slow = { 'AT-07': check(() => sleep(300)) }
    const unseeded = await runCheck('AT-07', target, resourcesWith(slow, { pace: new Pace() }), 150)
    expect(unseeded.verdict).toBe('error')
    const pace = new Pace()
    pace.seed(NOMINAL_ROUND_MS * 3, 'form post')
    const seeded = await runCheck('AT-07', target, resourcesWith(slow, { pace }), 150)
    expect(seeded.verdict, seeded.message).toBe('pass')
  })
})

describe('a check limit fair under load, still bounded', () => {
  // ten rounds of 60 ms: 600 ms of work, three times the 200 ms limit
  const checks = { 'CODE-10': roundsCheck(10, 60, 10) }

  test('a check needing N browser rounds at slow speed timed out on the fixed limit', async () => {
    const r = await runCheck('CODE-10', target, resourcesWith(checks, { scaleLimits: false }), 200)
    expect(r.verdict).toBe('error')
    expect(r.message).toContain('timed out after 200 ms (--check-timeout)')
  })

  test('it finishes when its limit is N of this run’s measured rounds', async () => {
    const r = await runCheck('CODE-10', target, resourcesWith(checks), 200)
    expect(r.verdict, r.message).toBe('pass')
    expect(r.durationMs).toBeGreaterThan(200)
    expect(r.durationMs).toBeLessThan(10 * 60 * ROUND_MARGIN * 2)
  })

  test('the default limit scales with the run’s measured speed (no declaration needed)', async () => {
    const pace = new Pace()
    // the run's rounds took three times nominal: a check's 300 ms at nominal speed is 900 ms
    pace.record(NOMINAL_ROUND_MS * 3)
    const slow = { 'AT-07': check(() => sleep(300)) }
    const fixed = await runCheck(
      'AT-07',
      target,
      resourcesWith(slow, { pace, scaleLimits: false }),
      150,
    )
    expect(fixed.verdict).toBe('error')
    expect(fixed.message).toContain('(--check-timeout)')
    const scaled = await runCheck('AT-07', target, resourcesWith(slow, { pace }), 150)
    expect(scaled.verdict, scaled.message).toBe('pass')
  })

  test('a hung check still ends, as inconclusive, by MAX_EXTENSION times its limit', async () => {
    const pace = new Pace()
    // a thousand declared rounds of a very slow target would ask for far more than the bound
    pace.record(NOMINAL_ROUND_MS * 1000)
    const hung = {
      'CODE-10': check({ browserRounds: 1000 }, () => new Promise<void>(() => undefined)),
    }
    const r = await runCheck('CODE-10', target, resourcesWith(hung, { pace }), 100)
    expect(r.verdict).toBe('error')
    expect(r.message).toContain('timed out after 1000 ms')
    expect(r.durationMs).toBeGreaterThanOrEqual(100 * MAX_EXTENSION - 5)
    expect(r.durationMs).toBeLessThan(100 * MAX_EXTENSION + 1500)
  })

  test('time spent waiting for the browser pool does not count against the check', async () => {
    const slots = new Slots(1)
    const checks = {
      // holds the only place for 400 ms
      'LOGIN-05': check(async (ctx) => {
        await ctx.newBrowserContext()
        await sleep(400)
      }),
      // 100 ms of its own work, after waiting for the place
      'LOGIN-06': check(async (ctx) => {
        await ctx.newBrowserContext()
        await sleep(100)
      }),
    }
    const resources = resourcesWith(checks, { scaleLimits: false, browserSlots: slots })
    const holder = runCheck('LOGIN-05', target, resources, 1000)
    await sleep(20)
    const waiter = await runCheck('LOGIN-06', target, resources, 250)
    expect(waiter.verdict, waiter.message).toBe('pass')
    expect(waiter.durationMs).toBeGreaterThan(250)
    expect((await holder).verdict).toBe('pass')
  })

  test('a wait for a place that never comes still ends the check by its bound', async () => {
    const slots = new Slots(1)
    // taken and never given back
    const taken = slots.acquire()
    await taken.ready
    const checks = {
      'LOGIN-06': check(async (ctx) => {
        await ctx.newBrowserContext()
      }),
    }
    const r = await runCheck(
      'LOGIN-06',
      target,
      resourcesWith(checks, { browserSlots: slots }),
      100,
    )
    expect(r.verdict).toBe('error')
    expect(r.message).toContain('timed out')
    expect(r.message).toContain('spent waiting for the browser')
    expect(r.durationMs).toBeLessThan(100 + 100 * MAX_EXTENSION + 1500)
    taken.release()
  })
})
