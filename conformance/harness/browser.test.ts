import type { Browser } from '@playwright/test'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  chromiumExecutable,
  fillLogin,
  launchBrowser,
  optionalWait,
  OPTIONAL_WAIT_MS,
  runSteps,
} from './browser.ts'
import { MAX_SCALE, NOMINAL_ROUND_MS, Pace, paceIn } from './pace.ts'

// one browser for the file's tests that drive one
let browser: Browser | undefined
beforeAll(async () => {
  browser = await launchBrowser({ baseUrl: 'https://127.0.0.1', ca: undefined })
}, 60_000)
afterAll(async () => {
  await browser?.close()
})

/** A new page of the file's browser. */
const newPage = () => {
  if (!browser) throw new Error('the browser was not launched')
  return browser.newPage()
}

describe('chromiumExecutable', () => {
  const only =
    (...present: string[]) =>
    (path: string) =>
      present.includes(path)

  test('CHROMIUM_PATH wins over whatever is installed', () => {
    expect(
      chromiumExecutable(
        { CHROMIUM_PATH: '/opt/chrome' },
        only('/usr/bin/chromium-headless-shell'),
      ),
    ).toBe('/opt/chrome')
  })

  test("Debian's headless shell first, then its full Chromium", () => {
    const both = only('/usr/bin/chromium-headless-shell', '/usr/bin/chromium')
    expect(chromiumExecutable({}, both)).toBe('/usr/bin/chromium-headless-shell')
    expect(chromiumExecutable({}, only('/usr/bin/chromium'))).toBe('/usr/bin/chromium')
  })

  test("neither installed: Playwright's own browser (undefined)", () => {
    expect(chromiumExecutable({}, only())).toBeUndefined()
  })
})

describe('the built-in login filler (fillLogin)', () => {
  // the form posts to a javascript-free target: the submit is read from the page it leaves
  const form = (username: string) =>
    `<!doctype html><title>Sign in</title><form method="get" action="about:blank" id="f" onsubmit="event.preventDefault(); document.title = new URLSearchParams(new FormData(this)).toString()">${username}<input type="password" name="password"><button type="submit">Sign in</button></form>`

  const submitted = async (username: string): Promise<URLSearchParams> => {
    const page = await newPage()
    try {
      await page.setContent(form(username))
      // bounded: a field the filler waits on would time out here, not after 30 s
      page.setDefaultTimeout(3000)
      await fillLogin(page, { username: 'jdoe', password: 'pw' })
      await page.waitForFunction(() => document.title !== 'Sign in', undefined, { timeout: 3000 })
      return new URLSearchParams(await page.title())
    } finally {
      await page.close()
    }
  }

  test('a read-only user name that already holds a value is left as it is (blind round 4, S5)', async () => {
    const sent = await submitted('<input readonly value="jdoe" name="username">')
    expect(sent.get('username')).toBe('jdoe')
    expect(sent.get('password')).toBe('pw')
  }, 30_000)

  test('a disabled user name with a value is left as it is; an editable one is filled', async () => {
    // a disabled field is not submitted: only the password is
    const disabled = await submitted('<input disabled value="jdoe" name="username">')
    expect(disabled.get('username')).toBeNull()
    expect(disabled.get('password')).toBe('pw')
    const editable = await submitted('<input value="someone" name="username">')
    expect(editable.get('username')).toBe('jdoe')
  }, 30_000)
})

describe("an optional step's wait (blind round 5, b, FALSE 7)", () => {
  test('the default scales with the run; a configured optionalWaitMs is kept as given', () => {
    expect(optionalWait(undefined, 1)).toBe(OPTIONAL_WAIT_MS)
    expect(optionalWait(undefined, 3)).toBe(3 * OPTIONAL_WAIT_MS)
    expect(optionalWait(250, 3)).toBe(250)
    expect(optionalWait(0, MAX_SCALE)).toBe(0)
  })

  describe('in a browser', () => {
    // the link shows 1.5 s after the page loads (a passkey page's "use your password instead"),
    // longer than the unscaled default; clicking it sets the title
    const late =
      '<!doctype html><title>passkey</title><script>setTimeout(() => { const a = document.createElement("a"); a.id = "use-password"; a.href = "#"; a.textContent = "Use your password instead"; a.onclick = () => { document.title = "password" }; document.body.append(a) }, 1500)</script><body></body>'

    test('on a run at the slowest pace, a link that shows late is still clicked', async () => {
      const page = await newPage()
      try {
        const pace = new Pace()
        pace.record(NOMINAL_ROUND_MS * MAX_SCALE)
        paceIn(page.context(), pace)
        await page.setContent(late)
        const steps: string[] = []
        await runSteps(
          page,
          { name: 'login', steps: [{ click: '#use-password', optional: true }] },
          undefined,
          (step) => Promise.resolve(void steps.push(step)),
        )
        expect(steps).toEqual(['step 1: click #use-password'])
        await page.waitForFunction(() => document.title === 'password', undefined, {
          timeout: 5000,
        })
      } finally {
        await page.close()
      }
    }, 60_000)

    test('a configured optionalWaitMs holds at any pace: an absent step is skipped after it', async () => {
      const page = await newPage()
      try {
        const pace = new Pace()
        pace.record(NOMINAL_ROUND_MS * MAX_SCALE)
        paceIn(page.context(), pace)
        await page.setContent('<!doctype html><title>passkey</title><body></body>')
        const steps: string[] = []
        await runSteps(
          page,
          {
            name: 'login',
            steps: [{ click: '#use-password', optional: true }],
            optionalWaitMs: 100,
          },
          undefined,
          (step) => Promise.resolve(void steps.push(step)),
        )
        expect(steps).toEqual(['step 1: click #use-password (optional, not shown: skipped)'])
      } finally {
        await page.close()
      }
    }, 60_000)
  })
})
