import { describe, expect, test } from 'vitest'
import type { CheckResult, Verdict } from '../harness/types.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import { causeKey, groupByCause, groupChecks } from './summary.ts'
import { formatSummary } from './terminal.ts'

const result = (id: RequirementId, verdict: Verdict, cause?: string): CheckResult => ({
  id,
  ...requirements[id],
  verdict,
  message: `${id} did not pass`,
  ...(cause ? { cause } : {}),
  notes: [],
  exchanges: [],
  screenshots: [],
  durationMs: 1,
})

describe('causes', () => {
  const refused = 'GET /auth/user-info answered HTTP 401 error=invalid_token'
  const results = [
    result('UI-01', 'fail', refused),
    result('UI-11', 'warn', refused),
    result('UI-02', 'fail', refused),
    result('UI-04', 'error', refused),
    result('TOK-01', 'fail', 'POST /auth/token answered HTTP 200: expected Pragma: no-cache'),
    result('LOGIN-05', 'warn'),
    result('DISC-01', 'pass'),
  ]

  test('one answer is one group across levels, counted per verdict', () => {
    const groups = groupByCause(results)
    const [first] = groups
    expect(first?.cause).toBe(refused)
    expect(first?.verdict).toBe('fail')
    expect(first?.counts).toEqual({ fail: 2, warn: 1, error: 1 })
    expect(first && groupChecks(first)).toBe(
      '4 checks: 2 FAIL (UI-01, UI-02), 1 ERROR (UI-04), 1 WARN (UI-11)',
    )
    expect(groups.map((g) => g.results.map((r) => r.id))).toEqual([
      ['UI-01', 'UI-11', 'UI-02', 'UI-04'],
      ['TOK-01'],
      ['LOGIN-05'],
    ])
  })

  test('the terminal summary shows each cause once', () => {
    const summary = formatSummary(results)
    expect(summary).toContain(
      `FAIL ${refused}: 4 checks: 2 FAIL (UI-01, UI-02), 1 ERROR (UI-04), 1 WARN (UI-11)`,
    )
    expect(summary).toContain('WARN LOGIN-05: LOGIN-05 did not pass')
    expect(summary.split(refused).length).toBe(2)
  })
})

// Blind round 3 fault 8: checks stuck at one page are one cause, whatever per-interaction values
// (a ticket in the query, a uid in the path) each message carries.
describe('causes told apart only by volatile parts of a URL', () => {
  const stuck = (page: string) =>
    `inconclusive: the harness could not drive the target: stuck before the check's subject: the authorization step never reached https://app.example/callback (page at ${page}: the IdP showed its login page again after the sign-in: Sign in)`
  const errored = (id: RequirementId, page: string): CheckResult => ({
    ...result(id, 'error'),
    message: stuck(page),
  })

  test('two checks stuck at the same login page, each with its own ticket, are one group', () => {
    const groups = groupByCause([
      errored('TOK-01', 'https://idp.example/login?ticket=Xq3vT9aLk2PzR7mW0bNc1'),
      errored('AT-01', 'https://idp.example/login?ticket=b81Zr2QmYc0VtLp5sKdE9'),
      errored('CODE-10', 'https://idp.example/consent?ticket=b81Zr2QmYc0VtLp5sKdE9'),
    ])
    expect(groups.map((g) => g.results.map((r) => r.id))).toEqual([
      ['TOK-01', 'AT-01'],
      ['CODE-10'],
    ])
    // told without one check's ticket once several are in the group; a group of one keeps its own
    expect(groups[0]?.cause).toBe(stuck('https://idp.example/login?ticket=…'))
    expect(groups[1]?.cause).toBe(stuck('https://idp.example/consent?ticket=b81Zr2QmYc0VtLp5sKdE9'))
  })

  test('ids in the path are volatile, words are not', () => {
    expect(
      causeKey('page at https://idp.example/signin/Xq3vT9aLk2PzR7mW0bNc1/password?u=a%40b.'),
    ).toBe('page at https://idp.example/signin/…/password?u=….')
    expect(
      causeKey(
        'at https://idp.example/interaction/6f1c0a52-3b7e-4a61-9d2f-0c8e5b7a9d10 after 10000 ms',
      ),
    ).toBe('at https://idp.example/interaction/… after … ms')
    expect(causeKey('GET https://idp.example/.well-known/openid-configuration answered 404')).toBe(
      'GET https://idp.example/.well-known/openid-configuration answered 404',
    )
    expect(causeKey('https://idp.example/auth/v2/introspection_endpoint')).toBe(
      'https://idp.example/auth/v2/introspection_endpoint',
    )
  })

  // blind round 6d (S5): the grouped cause dropped a script page's route
  test("a fragment keeps its route and names, its values and ids left out as the URL's are", () => {
    expect(
      causeKey('(page at https://idp.example/signin#/choose?uid=y8Y0_jbWi3GyUXrT6Abgl: the IdP)'),
    ).toBe('(page at https://idp.example/signin#/choose?uid=…: the IdP)')
    expect(causeKey('at https://idp.example/app#/flow/Xq3vT9aLk2PzR7mW0bNc1/otp.')).toBe(
      'at https://idp.example/app#/flow/…/otp.',
    )
    expect(causeKey('to https://c.example/cb#access_token=abc&state=1 x')).toBe(
      'to https://c.example/cb#access_token=…&state=… x',
    )
  })
})
