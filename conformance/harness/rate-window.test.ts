import { describe, expect, test } from 'vitest'
import { newWindowBegan, rateWindowOf } from './rate-window.ts'

const at = (remaining: number, reset: number) => ({ remaining, reset })

describe('a new rate-limit window during a probe', () => {
  test('Remaining counting down in one window is no new window', () => {
    expect(newWindowBegan(at(2, 1000), at(1, 1000))).toBe(false)
  })

  test('Remaining going up is a new window', () => {
    expect(newWindowBegan(at(0, 1000), at(2, 1097))).toBe(true)
  })

  // seen in a run: the first login post was the last second of its 97 s window
  test('the same Remaining with a later Reset is a new window', () => {
    expect(newWindowBegan(at(2, 1795548764), at(2, 1795548861))).toBe(true)
  })

  test('the same Remaining with the same Reset is no new window (a header that does not count)', () => {
    expect(newWindowBegan(at(2, 1000), at(2, 1000))).toBe(false)
  })

  test('without the headers nothing is told', () => {
    const none = rateWindowOf(() => null)
    expect(newWindowBegan(none, none)).toBe(false)
  })
})
