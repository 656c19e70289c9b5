import type { BrowserContext } from '@playwright/test'

/**
 * How long one browser authorization (from the authorization URL to the redirect to the
 * client) takes on an idle machine against a provider whose login is a plain form: the speed
 * the default `--check-timeout` was chosen for. A run whose rounds take longer (a loaded
 * machine, a login page rendered by script, a slow provider) scales the default by as much.
 */
export const NOMINAL_ROUND_MS = 2_000

/** The scale never goes past this (the bound of every check's limit: MAX_EXTENSION in check.ts). */
export const MAX_SCALE = 10

/**
 * A declared number of browser rounds gets this many times the measured round each: room for
 * the requests between rounds and for rounds slower than the median.
 */
export const ROUND_MARGIN = 2

/**
 * The run's measured speed: the durations of the browser rounds that reached the client in this
 * run (browser.ts `browse` records each), from which check limits are scaled (check.ts).
 */
export class Pace {
  readonly #rounds: number[] = []
  readonly #listeners = new Set<() => void>()

  /** One browser round that reached the client took `ms`. */
  record(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return
    this.#rounds.push(ms)
    for (const listener of this.#listeners) listener()
  }

  /** How many rounds were measured. */
  get rounds(): number {
    return this.#rounds.length
  }

  /** The median round of this run, or undefined before the first one. */
  roundMs(): number | undefined {
    if (this.#rounds.length === 0) return undefined
    const sorted = [...this.#rounds].sort((a, b) => a - b)
    const mid = Math.floor(sorted.length / 2)
    return sorted.length % 2 === 1
      ? sorted[mid]
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
  }

  /** How much slower than NOMINAL_ROUND_MS this run's rounds are: from 1 to MAX_SCALE. */
  scale(): number {
    const round = this.roundMs()
    if (round === undefined) return 1
    return Math.min(MAX_SCALE, Math.max(1, round / NOMINAL_ROUND_MS))
  }

  /** Called after each new round; returns the function that stops it. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
}

const contextPace = new WeakMap<BrowserContext, Pace>()

/** The browser context's rounds count towards `pace` (check.ts, for each context it opens). */
export function paceIn(context: BrowserContext, pace: Pace): void {
  contextPace.set(context, pace)
}

/** A browser round in `context` reached the client after `ms` (browser.ts `browse`). */
export function recordRound(context: BrowserContext, ms: number): void {
  contextPace.get(context)?.record(ms)
}

/** How much slower than nominal the run `context` belongs to is (1 when it has no pace). */
export function paceScale(context: BrowserContext): number {
  return contextPace.get(context)?.scale() ?? 1
}
