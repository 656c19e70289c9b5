import { describe, expect, test } from 'vitest'
import { chromiumExecutable } from './browser.ts'

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
