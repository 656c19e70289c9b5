import { describe, expect, test } from 'vitest'
import type { CheckResult, Verdict } from '../harness/types.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import { groupByCause, groupChecks } from './summary.ts'
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
