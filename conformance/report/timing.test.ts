import { describe, expect, test } from 'vitest'
import type { CheckResult } from '../harness/types.ts'
import { timing } from './summary.ts'
import { formatTiming } from './terminal.ts'

const result = (id: string, area: string, durationMs: number): CheckResult => ({
  id,
  title: `title of ${id}`,
  level: 'MUST',
  source: 'RFC 6749',
  area,
  verdict: 'pass',
  message: undefined,
  notes: [],
  exchanges: [],
  screenshots: [],
  durationMs,
})

describe('timing', () => {
  const results = [
    result('A-01', 'A', 100),
    result('A-02', 'A', 3000),
    result('B-01', 'B', 2000),
    result('B-02', 'B', 2500),
  ]

  test('the slowest checks first, and the time per area as the sum of its checks', () => {
    const t = timing(results, 2)
    expect(t.slowest.map((s) => s.id)).toEqual(['A-02', 'B-02'])
    expect(t.areas).toEqual([
      { area: 'B', durationMs: 4500, checks: 2 },
      { area: 'A', durationMs: 3100, checks: 2 },
    ])
  })

  test('the terminal summary shows both', () => {
    const text = formatTiming(results)
    expect(text).toContain('Slowest checks:\n  A-02                 3.0 s')
    expect(text).toContain('  B                    4.5 s in 2 checks')
  })
})
