import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEmbedded, type Embedded } from './embedded.ts'
import { createRunResources, runCheck } from './check.ts'
import { loginDryRun } from './login-dry-run.ts'
import '../runner.ts' // registers the checks
import type { LoginConfig, LoginStep, Target } from './target.ts'

// The declarative login steps, driven in a real browser against the embedded server's form.
describe('login steps and --login-dry-run', () => {
  let embedded: Embedded
  beforeAll(async () => {
    embedded = await startEmbedded()
  })
  afterAll(async () => {
    await embedded.stop()
  })

  const withLogin = (login: LoginConfig | undefined): Target => ({ ...embedded.target, login })
  const fillUsername: LoginStep = { fill: 'input[name=username]', value: '{username}' }
  const steps: LoginStep[] = [
    fillUsername,
    { fill: 'input[name=password]', value: '{password}' },
    { press: 'input[name=password]', key: 'Enter' },
  ]

  test('configured steps sign the user in; the log names each step, never the password', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dry-'))
    const lines: string[] = []
    const result = await loginDryRun(withLogin({ steps }), dir, (l) => lines.push(l))
    expect(result.signedIn).toBe(true)
    expect(lines).toContain('done: step 3: press Enter in input[name=password]')
    expect(result.screenshots.map((f) => f.replace(dir, ''))).toEqual([
      '/login-01-login-page.png',
      '/login-02-after-step-1.png',
      '/login-03-after-step-2.png',
      '/login-04-after-step-3.png',
    ])
    const log = readFileSync(join(dir, 'login-dry-run.log'), 'utf8')
    expect(log).toContain('{password}')
    expect(log).not.toContain(embedded.target.users.primary.password)
  })

  test('the default detects and fills the usual form', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dry-'))
    const result = await loginDryRun(withLogin(undefined), dir, () => undefined)
    expect(result.signedIn).toBe(true)
    expect(result.log).toContain('done: fill the usual username/password form and submit it')
  })

  test('a step that cannot run fails the dry run, says which, and keeps a screenshot', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dry-'))
    const result = await loginDryRun(
      withLogin({ steps: [fillUsername, { click: '#no-such-button' }], stepTimeoutMs: 500 }),
      dir,
      () => undefined,
    )
    expect(result.signedIn).toBe(false)
    expect(result.log.find((l) => l.startsWith('FAILED'))).toMatch(
      /^FAILED: login step 2: click #no-such-button failed/,
    )
    expect(result.screenshots.at(-1)).toMatch(/failed\.png$/)
  })

  test('a wrong detect selector is reported as no login page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dry-'))
    const result = await loginDryRun(
      withLogin({ detect: '#not-a-login-form', steps }),
      dir,
      () => undefined,
    )
    expect(result.signedIn).toBe(false)
    expect(result.log.join('\n')).toMatch(/no login page was detected/)
  }, 60_000)

  test('a page the suite cannot answer makes a check inconclusive, with the page and a screenshot', async () => {
    const resources = createRunResources(embedded.target)
    // the login page made unrecognisable: a detect selector it does not have
    const target: Target = { ...embedded.target, login: { detect: '#not-a-login-form' } }
    try {
      const result = await runCheck('IDT-02', target, resources)
      expect(result.verdict).toBe('error')
      // the page's full address, its query included (blind round 5: the URL shown without
      // `?ui_locales=en` was not the one the browser was on)
      expect(result.message).toMatch(
        /^inconclusive: the harness could not drive the target: the suite could not get past "[^"]+" at https:\/\/127\.0\.0\.1:\d+\/auth\/authorize\?\S*response_type=code\S*: no configured interaction/,
      )
      expect(result.screenshots.map((s) => s.name)).toContainEqual(
        expect.stringMatching(/^the page the suite could not get past: /),
      )
    } finally {
      await resources.close()
    }
  }, 60_000)

  test('a browser check that ends without a verdict keeps a screenshot of the page it ended on', async () => {
    const resources = createRunResources(embedded.target)
    const target: Target = {
      ...embedded.target,
      users: { primary: { username: 'alice', password: 'not-her-password' } },
    }
    try {
      const result = await runCheck('IDT-02', target, resources)
      // a wrong password stops the sign-in before IDT-02's subject (the ID token): inconclusive,
      // not the provider's failure (harness/check.ts, stuck before the subject)
      expect(result.verdict).toBe('error')
      expect(result.message).toMatch(/before the check's subject|stuck before/)
      expect(result.screenshots.map((s) => s.name)).toEqual([
        expect.stringMatching(/^page when the check failed: https:\/\/127\.0\.0\.1:\d+\/auth\//),
      ])
    } finally {
      await resources.close()
    }
  })
})
