import type { RateLimitRepository } from './store.ts'

/** Sweep expired counters once the map holds this many. */
const SWEEP_AT = 10_000

/**
 * Rate-limit counters in the process's memory: for SQLite, whose database one server process
 * serves alone (server/store/sqlite-lock.ts), so nothing needs to share them. A counter write
 * per API request was the largest cost of the cheap endpoints (README, Benchmarks); PostgreSQL
 * deployments keep counting in the store, where every process sees the same counter.
 */
export function memoryRateLimits(): RateLimitRepository & { readonly size: () => number } {
  const counters = new Map<string, { windowStart: number; count: number; expires: number }>()
  let sweepAt = SWEEP_AT
  return {
    hit(key, windowStart, windowSeconds) {
      const entry = counters.get(key)
      let count = 1
      // a new window (or a clock set back, as the embedded target's controls do) starts over
      if (entry?.windowStart === windowStart) count = ++entry.count
      else counters.set(key, { windowStart, count, expires: windowStart + windowSeconds })
      if (counters.size >= sweepAt) {
        for (const [k, v] of counters) if (v.expires <= windowStart) counters.delete(k)
        // live counters are never dropped; sweep again when the map has doubled
        sweepAt = Math.max(SWEEP_AT, counters.size * 2)
      }
      return Promise.resolve(count)
    },
    count(key, windowStart) {
      const entry = counters.get(key)
      return Promise.resolve(entry?.windowStart === windowStart ? entry.count : 0)
    },
    size: () => counters.size,
  }
}
