import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { resolveTarget, type Target, type TargetConfig } from '../../conformance/harness/target.ts'
import { preflight } from '../../conformance/preflight.ts'
import { startSpaProvider } from '../oidc-provider-spa/provider.ts'
import { startExampleProvider, type ExampleProvider } from './provider.ts'

/**
 * The preflight (issue 32) against providers the project did not write: node-oidc-provider as
 * close to the interface as it allows, and its second profile, whose login page is built by a
 * script (the sign-in goes through the browser) and which shows a consent page. The right
 * settings pass; a wrong secret or password is named.
 */
for (const [name, dir, start] of [
  ['node-oidc-provider', new URL('./', import.meta.url), () => startExampleProvider()],
  [
    'node-oidc-provider with a script login and consent',
    new URL('../oidc-provider-spa/', import.meta.url),
    () => startSpaProvider(),
  ],
] as const) {
  describe(`preflight against ${name}`, () => {
    let provider: ExampleProvider
    const targets: Target[] = []
    const file = JSON.parse(readFileSync(new URL('target.json', dir), 'utf8')) as Omit<
      TargetConfig,
      'baseUrl' | 'ca'
    >
    const target = (change: (c: typeof file) => typeof file = (c) => c): Target => {
      const made = resolveTarget({ ...change(file), baseUrl: provider.baseUrl, ca: provider.ca })
      targets.push(made)
      return made
    }
    beforeAll(async () => {
      provider = await start()
    }, 120_000)
    afterAll(async () => {
      await Promise.all(targets.map((t) => t.dispatcher.close()))
      await (provider as ExampleProvider | undefined)?.stop()
    })

    test('the right settings pass', async () => {
      const checked = await preflight(target())
      expect(checked).toMatchObject({ ok: true, notes: [] })
      expect(checked.confirmed).toEqual([
        'discovery',
        'JWKS (1 key)',
        'client conformance-client authenticated (client_credentials)',
        expect.stringMatching(/^alice signed in \((login form post|browser)\)$/),
      ])
    }, 60_000)

    test('a wrong secret is named', async () => {
      const checked = await preflight(
        target((c) => ({
          ...c,
          clients: { ...c.clients, main: { ...c.clients.main, secret: 'rotated' } },
        })),
      )
      expect(checked.ok).toBe(false)
      if (!checked.ok) {
        expect(checked.exit).toBe('usage')
        expect(checked.message).toMatch(/^clients\.main\.secret .*error=invalid_client/)
      }
    }, 60_000)

    test('a wrong password is named', async () => {
      const checked = await preflight(
        target((c) => ({
          ...c,
          users: { ...c.users, primary: { ...c.users.primary, password: 'not-hers' } },
        })),
      )
      expect(checked.ok, JSON.stringify(checked)).toBe(false)
      if (!checked.ok) {
        expect(checked.exit).toBe('usage')
        expect(checked.message).toMatch(/^users\.primary\.password .*the login page came back/)
      }
    }, 60_000)
  })
}
