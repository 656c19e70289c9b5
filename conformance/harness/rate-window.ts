/**
 * The window of a rate limit as one answer's headers give it (INTERFACE.md §8), and whether a
 * probe's count started again between two answers.
 */

/** X-RateLimit-Remaining and X-RateLimit-Reset as numbers (NaN when absent or not a number). */
export interface RateWindow {
  readonly remaining: number
  readonly reset: number
}

export const rateWindowOf = (header: (name: string) => string | null): RateWindow => ({
  remaining: Number(header('x-ratelimit-remaining') ?? NaN),
  reset: Number(header('x-ratelimit-reset') ?? NaN),
})

/**
 * Whether a new window began between two answers of one probe: Remaining went up, or stayed
 * while Reset moved later (the first answer was the last of its fixed window and the next the
 * first of a new one, so both show the same Remaining). The count started again, so a missing
 * 429 proves nothing. A Remaining that stays with the same Reset is no new window: a header that
 * does not count down is a deviation of its own (RATE-02), not a reason to count again.
 */
export const newWindowBegan = (before: RateWindow, after: RateWindow): boolean =>
  after.remaining > before.remaining ||
  (after.remaining === before.remaining && after.reset > before.reset)
