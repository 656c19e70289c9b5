import { describe, expect, test } from 'vitest'
import { memoryRateLimits } from './memory-rate-limits.ts'

describe('in-memory rate-limit counters (SQLite deployments)', () => {
  test('count every concurrent hit once, per key and window', async () => {
    const counters = memoryRateLimits()
    const counts = await Promise.all(Array.from({ length: 25 }, () => counters.hit('k', 60, 60)))
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1))
    expect(await counters.hit('other', 60, 60)).toBe(1)
    expect(await counters.hit('k', 120, 60)).toBe(1)
    expect(await counters.hit('k', 120, 60)).toBe(2)
  })

  test('reading a counter adds no hit, and an older window reads 0', async () => {
    const counters = memoryRateLimits()
    expect(await counters.count('k', 60)).toBe(0)
    await counters.hit('k', 60, 60)
    expect(await counters.count('k', 60)).toBe(1)
    expect(await counters.count('k', 60)).toBe(1)
    await counters.hit('k', 120, 60)
    expect(await counters.count('k', 60)).toBe(0)
  })

  test('a clock set back starts the counter over instead of freezing it at 1', async () => {
    const counters = memoryRateLimits()
    await counters.hit('k', 3600, 60)
    expect(await counters.hit('k', 60, 60)).toBe(1)
    expect(await counters.hit('k', 60, 60)).toBe(2)
  })

  test('expired counters are swept once the map grows; live ones are kept', async () => {
    const counters = memoryRateLimits()
    for (let i = 0; i < 9_999; i++) await counters.hit(`old-${i}`, 0, 60)
    await counters.hit('live', 0, 3600)
    expect(counters.size()).toBe(10_000) // the sweep ran at 10,000, when nothing had expired
    await counters.hit('live', 0, 3600)
    for (let i = 0; i < 10_000; i++) await counters.hit(`new-${i}`, 60, 60)
    // the sweep at 20,000 dropped the 9,999 counters of window 0 (expired at 60)
    expect(counters.size()).toBeLessThan(10_100)
    expect(await counters.hit('live', 0, 3600)).toBe(3)
  })
})
