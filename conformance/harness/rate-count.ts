import { rateWindowOf, type RateWindow } from './rate-window.ts'

/**
 * The count of a rate-limit probe to its 429, with bounded concurrency: requests in flight at
 * once, so that a burst of a deployment's limit (300 per minute) fits in one window on a loaded
 * machine, where one request after the other may take longer than the window. A count that
 * goes on in order (concurrency 1) is judged as before (harness/rate-window.ts).
 */

/** One answer of the probe: its status and headers. */
export interface CountedAnswer {
  readonly status: number
  header(name: string): string | null
}

export interface CountOptions<A extends CountedAnswer> {
  /** Sends one request of the probe. */
  readonly send: () => Promise<A>
  /** The answer the count starts from (counted as the first of the window). */
  readonly start: A
  /** Answers needed in one window, `start` included, before a missing 429 means something. */
  readonly needed: number
  /** Requests in flight at most. */
  readonly concurrency: number
  /** The most requests this count may send (what the rateLimitBudget leaves). */
  readonly budget: number
  /** How many times a new window may start the count again (each costs `needed` more). */
  readonly restarts: number
  /** Told when a new window starts the count again. */
  readonly onRestart?: (window: RateWindow) => void
  /**
   * Whether the target's answers carry X-RateLimit-Remaining and -Reset (the probe reads them):
   * then an answer without them (a proxy's own error) may hide a window that began, or never
   * have reached the limiter, and a count with one is no verdict. By default, whether `start`
   * carries them.
   */
  readonly readsWindow?: boolean
}

export type CountOutcome<A> =
  /** A 429 (the first to arrive). */
  | { readonly limited: A; readonly sent: number }
  /** `needed` answers in one window, none of them 429. */
  | { readonly unlimited: true; readonly sent: number }
  /** A new window began and the count could not start again (budget, restarts): no verdict. */
  | { readonly rolledOver: RateWindow; readonly sent: number }
  /**
   * `needed` answers in one window as far as the headers tell, none of them 429, but this many
   * without X-RateLimit-Remaining and -Reset where the probe reads them: no verdict.
   */
  | { readonly headerless: number; readonly sent: number }

/**
 * Whether an answer shows a window other than the one the count started in. Within one window,
 * an answer to a request sent after `answeredBefore` answers of the count had arrived was
 * counted after all of them, so its X-RateLimit-Remaining is at most `start.remaining -
 * answeredBefore - 1` (0 at the least), whatever order the answers arrive in; more than that,
 * and more than the lowest seen or with a later Reset, and the counter started again. A
 * Remaining that never counts down (the same with the same Reset) is no new window: that
 * header's deviation is RATE-02's. In order (one request in flight) this is newWindowBegan.
 */
export function outsideWindow(
  start: RateWindow,
  lowest: number,
  answeredBefore: number,
  current: RateWindow,
): boolean {
  if (!Number.isFinite(current.remaining) || !Number.isFinite(start.remaining)) return false
  const most = Math.max(0, start.remaining - answeredBefore - 1)
  if (current.remaining <= most) return false
  return current.remaining > lowest || current.reset > start.reset
}

/** An answer's window, when it carries both X-RateLimit-Remaining and -Reset as numbers. */
const windowOf = (res: CountedAnswer): RateWindow | undefined => {
  const w = rateWindowOf((n) => res.header(n))
  return Number.isFinite(w.remaining) && Number.isFinite(w.reset) ? w : undefined
}

/**
 * Sends until a 429, or until `needed` answers were counted in one window, with at most
 * `concurrency` requests in flight; every request is awaited before it returns. A request that
 * fails (no answer) ends the count with that error once the others have settled. A 429 is the
 * outcome whenever it arrives, even after the count ended (from a request still in flight).
 *
 * Answers without the window's headers: after one, an answer whose Reset is later than any the
 * window's answers gave is a new window (the first of it may have been the one without); and
 * where the probe reads the headers (`readsWindow`), a count with one is no verdict (headerless).
 * Answers to requests sent before the count started again are not counted, but one of them
 * without the headers is treated as above all the same: it arrived while the new window's count
 * went on.
 */
export async function countTo429<A extends CountedAnswer>(
  options: CountOptions<A>,
): Promise<CountOutcome<A>> {
  const { send, needed, budget } = options
  const concurrency = Math.max(1, Math.floor(options.concurrency))
  const startWindow = windowOf(options.start)
  const readsWindow = options.readsWindow ?? startWindow !== undefined
  let start = rateWindowOf((n) => options.start.header(n))
  let lowest = start.remaining
  // the latest Reset of the window's answers with the headers (NaN: none yet), answers without
  // them since the last with them arrived, and answers without them in this count
  let latestReset = startWindow?.reset ?? NaN
  let unseen = startWindow ? 0 : 1
  let headerless = unseen
  // the count's epoch: a restart begins a new one, and answers sent before it are not counted
  let epoch = 0
  let answered = 0
  let counted = 1
  let sent = 0
  let restartsLeft = options.restarts
  // requests of the current epoch in flight: counted when they arrive, so no more are sent
  let inFlightHere = 0
  let outcome: CountOutcome<A> | undefined
  let failure: { error: unknown } | undefined
  // the requests in flight, each marked done when it settled (it never rejects)
  const running = new Set<{ done: boolean; settled: Promise<void> }>()

  const counts = (): void => {
    answered++
    counted++
    if (counted >= needed)
      outcome = readsWindow && headerless > 0 ? { headerless, sent } : { unlimited: true, sent }
  }

  const answer = (res: A, sentIn: number, answeredBefore: number): void => {
    if (res.status === 429) {
      // a 429 is a 429: one still in flight when the count ended is the outcome all the same
      if (!outcome || !('limited' in outcome)) outcome = { limited: res, sent }
      return
    }
    if (outcome) return
    const current = windowOf(res)
    if (!current) {
      unseen++
      headerless++
      if (sentIn === epoch) counts()
      return
    }
    if (sentIn !== epoch) return
    const acrossGap = unseen > 0 && current.reset > latestReset
    if (acrossGap || outsideWindow(start, lowest, answeredBefore, current)) {
      // counting again in the new window costs `needed` - 1 more requests than sent so far
      if (restartsLeft > 0 && sent + needed - 1 <= budget) {
        restartsLeft--
        epoch++
        start = current
        lowest = current.remaining
        latestReset = current.reset
        unseen = 0
        headerless = 0
        answered = 0
        counted = 1
        inFlightHere = 0
        options.onRestart?.(current)
        return
      }
      outcome = { rolledOver: current, sent }
      return
    }
    unseen = 0
    latestReset = Number.isFinite(latestReset)
      ? Math.max(latestReset, current.reset)
      : current.reset
    lowest = Number.isFinite(lowest) ? Math.min(lowest, current.remaining) : current.remaining
    counts()
  }

  const dispatch = (): void => {
    const sentIn = epoch
    const answeredBefore = answered
    sent++
    inFlightHere++
    const flight = { done: false, settled: Promise.resolve() }
    flight.settled = (async () => {
      try {
        const res = await send()
        if (sentIn === epoch) inFlightHere--
        answer(res, sentIn, answeredBefore)
      } catch (error) {
        if (sentIn === epoch) inFlightHere--
        failure ??= { error }
      } finally {
        flight.done = true
      }
    })()
    running.add(flight)
  }

  for (;;) {
    for (const flight of running) if (flight.done) running.delete(flight)
    while (
      !outcome &&
      !failure &&
      running.size < concurrency &&
      sent < budget &&
      counted + inFlightHere < needed
    )
      dispatch()
    if (running.size === 0) break
    // every request is awaited: the loop ends only when none is left in flight
    await Promise.race([...running].map((f) => f.settled))
  }
  if (failure) throw failure.error
  if (outcome) return outcome
  // the budget ran out before the count did: the window's count is what it is
  if (counted < needed) return { rolledOver: start, sent }
  return readsWindow && headerless > 0 ? { headerless, sent } : { unlimited: true, sent }
}
