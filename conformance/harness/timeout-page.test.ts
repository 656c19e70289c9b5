import { describe, expect, test } from 'vitest'
import type { BrowserContext, Page } from '@playwright/test'
import { check, createRunResources, runCheck, type Check, type RunResources } from './check.ts'
import type { Target } from './target.ts'

// Blind round 6c, run 4: eight checks ended "timed out after 180000 ms" with no word of where,
// while the browser sat on the provider's consent page. A check whose time runs out while its
// browser is on a page says which page, as a flow stopped at one does ("could not get past").

const target = {
  baseUrl: 'https://idp.test',
  ca: undefined,
  clients: { main: { id: 'c', secret: 's', redirectUri: 'https://client.example/callback' } },
} as unknown as Target

/** A page of a fake browser: its address and title; screenshots fail (no real browser). */
const fakePage = (url: string, title: string): Page =>
  ({
    url: () => url,
    isClosed: () => false,
    evaluate: () => Promise.resolve(title),
    screenshot: () => Promise.reject(new Error('no screenshots in this test')),
  }) as unknown as Page

function resourcesWith(pages: Page[], body: Check): RunResources {
  const context = {
    pages: () => pages,
    close: () => Promise.resolve(),
  } as unknown as BrowserContext
  const browser = { newContext: () => Promise.resolve(context) }
  return {
    ...createRunResources(target, { reuseSessions: false }),
    browser: () => Promise.resolve(browser as never),
    checks: new Map([['IDT-04', body]]),
  }
}

// a check that opens a browser context and then never ends (a flow that hangs on a page)
const hangs = check({}, async (ctx) => {
  await ctx.newBrowserContext()
  await new Promise<void>(() => undefined)
})

describe('a check that times out on a page says where', () => {
  test('the page of the provider the browser was on: title and redacted address, inconclusive', async () => {
    const r = await runCheck(
      'IDT-04',
      target,
      resourcesWith(
        [
          fakePage(
            'https://idp.test/en-gb/interaction/abc?code=secret-code',
            'Allow access – Globex',
          ),
        ],
        hangs,
      ),
      100,
    )
    expect(r.verdict).toBe('error')
    expect(r.message).toMatch(
      /^inconclusive: the harness could not drive the target: timed out after 100 ms \(--check-timeout\): the suite could not get past "Allow access – Globex" at https:\/\/idp\.test\/en-gb\/interaction\/abc\?code=/,
    )
    expect(r.message).not.toContain('secret-code')
  }, 30_000)

  test('a browser at the client (the flow got through) names no page', async () => {
    const r = await runCheck(
      'IDT-04',
      target,
      resourcesWith([fakePage('https://client.example/callback?code=x', 'client')], hangs),
      100,
    )
    expect(r.verdict).toBe('error')
    expect(r.message).toBe(
      'inconclusive: the harness could not drive the target: timed out after 100 ms (--check-timeout)',
    )
  }, 30_000)
})
