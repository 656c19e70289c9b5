import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import type { CheckResult, Verdict } from '../harness/types.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import { recordedDurations } from '../previous-run.ts'
import { aboutDuration, Progress, progressWriter, showProgress } from './progress.ts'

const done = (id: RequirementId, verdict: Verdict, durationMs: number): CheckResult => ({
  id,
  ...requirements[id],
  verdict,
  message: undefined,
  notes: [],
  exchanges: [],
  screenshots: [],
  durationMs,
})

const IDS = ['DISC-01', 'DISC-02', 'DISC-03', 'DISC-04'] as const

describe('the progress line', () => {
  test('done of total and failures so far; no estimate before anything is known', () => {
    const p = new Progress(IDS, undefined, 0)
    expect(p.line(0)).toBe('[0/4] 0 failed · estimating the time left')
    p.done(done('DISC-01', 'fail', 1000))
    p.done(done('DISC-02', 'error', 1000))
    expect(p.line(1000)).toMatch(/^\[2\/4\] 1 failed, 1 inconclusive · /)
  })

  test('from the run so far: the remaining checks at the mean duration, as parallel as so far', () => {
    const p = new Progress(IDS, undefined, 0)
    // two checks of 10 s each finished in 10 s of wall time: two at a time
    p.done(done('DISC-01', 'pass', 10_000))
    p.done(done('DISC-02', 'pass', 10_000))
    expect(p.left(10_000)).toBe(10_000)
    expect(p.line(10_000)).toBe('[2/4] 0 failed · about 10 s left')
  })

  test("from an earlier run's durations, before the first check ends and after", () => {
    const recorded = {
      durations: new Map([
        ['DISC-01', 1000],
        ['DISC-02', 1000],
        ['DISC-03', 60_000],
        ['DISC-04', 1000],
      ]),
      ratio: 0.5,
    }
    const p = new Progress(IDS, recorded, 0)
    expect(p.left(0)).toBe(31_500)
    p.done(done('DISC-01', 'pass', 1000))
    // wall 1 s for 1 s of checks: DISC-03's long recorded duration still counts
    expect(p.left(1000)).toBe(62_000)
    expect(p.line(1000)).toBe('[1/4] 0 failed · about 1 min 2 s left')
  })

  test('durations read aloud', () => {
    expect(aboutDuration(2000)).toBe('under 5 s')
    expect(aboutDuration(42_400)).toBe('about 42 s')
    expect(aboutDuration(120_000)).toBe('about 2 min')
    expect(aboutDuration(125_000)).toBe('about 2 min 5 s')
  })

  test('drawn under the results: erased before each write, drawn again after a line', () => {
    let screen = ''
    const p = new Progress(['DISC-01', 'DISC-02'], undefined, 0)
    const w = progressWriter({ write: (s) => (screen += s), columns: 80 }, p, () => 0)
    w.write('Running 2 checks\n')
    expect(screen).toBe('Running 2 checks\n[0/2] 0 failed · estimating the time left')
    p.done(done('DISC-01', 'fail', 5))
    w.write('FAIL DISC-01\n')
    expect(screen.endsWith('\r\x1b[2KFAIL DISC-01\n[1/2] 1 failed · under 5 s left')).toBe(true)
    w.end()
    expect(screen.endsWith('\r\x1b[2K')).toBe(true)
    w.write('summary\n')
    expect(screen.endsWith('\r\x1b[2Ksummary\n')).toBe(true)
  })

  test('a narrow terminal gets the line cut to its width, so erasing it erases all of it', () => {
    let screen = ''
    const w = progressWriter(
      { write: (s) => (screen += s), columns: 24 },
      new Progress(IDS, undefined, 0),
    )
    w.tick()
    expect(screen).toBe('[0/4] 0 failed · estima')
    let unsized = ''
    progressWriter(
      { write: (s) => (unsized += s), columns: 0 },
      new Progress(IDS, undefined, 0),
    ).tick()
    expect(unsized).toBe('[0/4] 0 failed · estimating the time left')
  })

  test('only on a terminal, and never in CI', () => {
    expect(showProgress({ isTTY: true }, {})).toBe(true)
    expect(showProgress({ isTTY: false }, {})).toBe(false)
    expect(showProgress({}, {})).toBe(false)
    expect(showProgress({ isTTY: true }, { CI: 'true' })).toBe(false)
  })

  test("an earlier report's durations count for the same target only", () => {
    const file = join(mkdtempSync(join(tmpdir(), 'progress-')), 'report.json')
    writeFileSync(
      file,
      JSON.stringify({
        target: { baseUrl: 'https://idp.test', embedded: false },
        startedAt: '2026-11-27T03:00:00.000Z',
        finishedAt: '2026-11-27T03:00:10.000Z',
        checks: [
          { id: 'DISC-01', verdict: 'pass', durationMs: 15_000 },
          { id: 'DISC-02', verdict: 'notrun', durationMs: 0 },
          { id: 'DISC-03', verdict: 'fail', durationMs: 5000 },
        ],
      }),
    )
    const same = recordedDurations(file, { baseUrl: 'https://idp.test', embedded: false })
    expect(same?.ratio).toBe(0.5)
    expect([...(same?.durations ?? [])]).toEqual([
      ['DISC-01', 15_000],
      ['DISC-03', 5000],
    ])
    expect(recordedDurations(file, { baseUrl: 'https://other.test', embedded: false })).toBe(
      undefined,
    )
    expect(recordedDurations(file, { baseUrl: 'https://127.0.0.1:1', embedded: true })).toBe(
      undefined,
    )
    expect(recordedDurations(join(file, 'missing'), { baseUrl: 'x', embedded: true })).toBe(
      undefined,
    )
  })
})
