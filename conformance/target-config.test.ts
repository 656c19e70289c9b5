import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { loadTargetConfig } from './target-config.ts'
import { plannedSkips } from './cli.ts'

const dir = mkdtempSync(join(tmpdir(), 'target-config-'))
const base = {
  clients: { main: { id: 'app', secret: 's3cret', redirectUri: 'https://app.example/cb' } },
  users: { primary: { username: 'u', password: 'pa55' } },
}
const load = (extra: Record<string, unknown>) => {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(file, JSON.stringify({ ...base, ...extra }))
  return loadTargetConfig({ baseUrl: 'https://idp.example', config: file }, {})
}

describe('the interactions of a target configuration', () => {
  test('interactions are read: name, kind, url and/or detect, steps (optional ones too)', () => {
    const interactions = [
      {
        name: 'consent',
        kind: 'consent',
        url: '/consent(\\?|$)',
        steps: [{ click: 'button#approve' }],
      },
      {
        name: 'mfa',
        detect: 'input[autocomplete=one-time-code]',
        steps: [
          { click: '#remember', optional: true },
          { fill: 'input[autocomplete=one-time-code]', value: '123456' },
          { press: 'input[autocomplete=one-time-code]', key: 'Enter' },
        ],
        stepTimeoutMs: 5000,
        optionalWaitMs: 500,
      },
    ]
    expect(load({ interactions }).interactions).toEqual(interactions)
    // the login key keeps working beside them
    expect(load({ login: { detect: '#login' }, interactions }).login).toEqual({ detect: '#login' })
  })

  test('login.steps take optional steps as interactions do (README; issue 29, fault 11)', () => {
    const login = {
      detect: '#f input[type=password]',
      steps: [
        { click: '#cc-accept', optional: true },
        { fill: '#user', value: '{username}' },
        { fill: '#pw', value: '{password}' },
        { click: '#go' },
      ],
      optionalWaitMs: 300,
    }
    expect(load({ login }).login).toEqual(login)
    expect(() => load({ login: { steps: [{ click: '#go', optional: 'yes' }] } })).toThrow(
      /login.steps\[0\]" must be one step/,
    )
  })

  test('a step other than goto may name the iframe it acts in (README; blind round 5)', () => {
    const login = {
      detect: 'iframe#signin-widget',
      steps: [
        { fill: '#user', value: '{username}', frame: 'iframe#signin-widget' },
        { press: '#pw', key: 'Enter', frame: 'iframe#signin-widget', optional: true },
        { click: '#go', frame: 'iframe#signin-widget' },
        { waitFor: '#done', frame: 'iframe#signin-widget' },
      ],
    }
    expect(load({ login }).login).toEqual(login)
    // a frame inside a frame: the iframes to go through, outermost first (issue 29)
    const nested = { steps: [{ click: '#go', frame: ['iframe#outer', 'iframe#widget'] }] }
    expect(load({ login: nested }).login).toEqual(nested)
    for (const step of [
      { goto: '/x', frame: 'iframe' },
      { click: '#go', frame: '' },
      { click: '#go', frame: [] },
      { click: '#go', frame: ['iframe', ''] },
    ])
      expect(() => load({ login: { steps: [step] } })).toThrow(/login.steps\[0\]" must be one step/)
  })

  test('an interaction that cannot be recognised or answered is a usage error, said plainly', () => {
    expect(() => load({ interactions: [{ name: 'x', steps: [{ click: 'a' }] }] })).toThrow(
      /needs url or detect/,
    )
    expect(() =>
      load({ interactions: [{ name: 'x', url: '(', steps: [{ click: 'a' }] }] }),
    ).toThrow(/is not a regular expression/)
    expect(() => load({ interactions: [{ name: 'x', url: '/c', steps: [] }] })).toThrow(
      /must contain at least 1 items/,
    )
    expect(() =>
      load({ interactions: [{ name: 'x', url: '/c', steps: [{ fill: 'input' }] }] }),
    ).toThrow(/must be one step/)
    expect(() =>
      load({ interactions: [{ name: 'x', kind: 'magic', url: '/c', steps: [{ click: 'a' }] }] }),
    ).toThrow(/kind/)
  })
})

describe('clients.main.foreignScope (AUTHZ-11)', () => {
  const main = (extra: Record<string, unknown>) => ({
    clients: { main: { ...base.clients.main, ...extra } },
  })
  test('one scope name is read', () => {
    expect(load(main({ foreignScope: 'api:reports' })).clients.main.foreignScope).toBe(
      'api:reports',
    )
    expect(load({}).clients.main.foreignScope).toBeUndefined()
  })

  test('several names or an empty one is a usage error naming the key', () => {
    for (const bad of ['api:reports read:x', '', 3])
      expect(() => load(main({ foreignScope: bad }))).toThrow(/foreignScope/)
  })
})

describe('sessionLifetime (SEC-11)', () => {
  test('a whole number of seconds is read', () => {
    expect(load({ sessionLifetime: 20 }).sessionLifetime).toBe(20)
    expect(load({}).sessionLifetime).toBeUndefined()
  })

  test('zero, a fraction or a string is a usage error naming the key', () => {
    for (const bad of [0, 1.5, '20'])
      expect(() => load({ sessionLifetime: bad })).toThrow(/sessionLifetime/)
  })
})

describe('accessTokenLifetime (CODE-01, and the expired-token parts of UI-07 and INTRO-03)', () => {
  test('a whole number of seconds is read', () => {
    expect(load({ accessTokenLifetime: 120 }).accessTokenLifetime).toBe(120)
    expect(load({}).accessTokenLifetime).toBeUndefined()
  })

  test('zero, a fraction or a string is a usage error naming the key', () => {
    for (const bad of [0, 1.5, '120'])
      expect(() => load({ accessTokenLifetime: bad })).toThrow(/accessTokenLifetime/)
  })

  test("the run's header names the expired-token parts a deployment's configuration leaves unjudged", () => {
    const ids = ['UI-07', 'INTRO-03', 'REV-04', 'UI-01'] as const
    const without = plannedSkips(ids, load({}))
    expect(without).toMatch(
      /^Not judged against a deployment \(the check runs without this part\): 3$/m,
    )
    expect(without).toMatch(
      /^ {2}UI-07: user-info with an expired access token .*no accessTokenLifetime/m,
    )
    expect(without).toMatch(
      /^ {2}INTRO-03: introspection of an expired access token .*no accessTokenLifetime/m,
    )
    expect(without).not.toMatch(/UI-01/)
    // too long to wait out: named with its lifetime
    expect(plannedSkips(ids, load({ accessTokenLifetime: 3600 }))).toMatch(
      /^ {2}UI-07: .*access tokens live 3600 s \(accessTokenLifetime\), longer than a check waits \(150 s\)/m,
    )
    // short enough: UI-07 and INTRO-03 wait it out; REV-04's part needs the embedded clock
    const short = plannedSkips(ids, load({ accessTokenLifetime: 120 }))
    expect(short).toMatch(/: 1$/m)
    expect(short).toMatch(
      /^ {2}REV-04: revocation of an expired access token .*needs clock control/m,
    )
    expect(short).not.toMatch(/^ {2}(UI-07|INTRO-03):/m)
  })
})

describe('rateLimitBudget and refreshTokenLifetime', () => {
  test('a string is a usage error naming the key, not a number read as text', () => {
    for (const key of ['rateLimitBudget', 'refreshTokenLifetime']) {
      expect(() => load({ [key]: '20' })).toThrow(new RegExp(key))
      expect((load({ [key]: 20 }) as unknown as Record<string, unknown>)[key]).toBe(20)
    }
  })
})

describe('idpOrigins (a login UI on an origin of its own)', () => {
  test('https origins are read', () => {
    const idpOrigins = ['https://login.example', 'https://127.0.0.1:9544']
    expect(load({ idpOrigins }).idpOrigins).toEqual(idpOrigins)
    expect(load({}).idpOrigins).toBeUndefined()
  })

  test('a URL with a path, a plain-http origin or a non-array is a usage error naming the key', () => {
    for (const bad of [['https://login.example/u/'], ['http://login.example'], 'https://x.example'])
      expect(() => load({ idpOrigins: bad })).toThrow(/idpOrigins/)
  })
})
