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

/** How a round measured before the run was taken (the preflight's sign-in). */
export type SeedSource = 'browser' | 'form post'

/**
 * A round measured before the run (the preflight's sign-in of the primary user, preflight.ts):
 * a browser round itself, or a sign-in by form post over HTTP, which is a lower bound of one
 * (the browser sends the same requests, and renders).
 */
export interface PaceSeed {
  readonly ms: number
  readonly from: SeedSource
}

/**
 * The run's measured speed: the durations of the browser rounds that reached the client in this
 * run (browser.ts `browse` records each), from which check limits are scaled (check.ts). Until
 * the first of them, a round measured before the run (`seed`) stands for them, so the checks
 * that start first are not held to the nominal speed on a machine already known to be slower.
 */
export class Pace {
  readonly #rounds: number[] = []
  readonly #listeners = new Set<() => void>()
  #seed: PaceSeed | undefined

  /**
   * A round measured before the run (the preflight's sign-in): the round until this run
   * measures its own, never one of them.
   */
  seed(ms: number, from: SeedSource): void {
    if (!Number.isFinite(ms) || ms < 0) return
    this.#seed = { ms, from }
    for (const listener of this.#listeners) listener()
  }

  /** The round measured before the run, if one was given. */
  get seeded(): PaceSeed | undefined {
    return this.#seed
  }

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

  /**
   * The median round of this run; before the first one, the round measured before the run
   * (`seed`), else undefined.
   */
  roundMs(): number | undefined {
    if (this.#rounds.length === 0) return this.#seed?.ms
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

/**
 * The run's speed as the summary, report.json and report.html give it (runner.ts RunInfo): why
 * check limits were raised, or were not.
 */
export interface RunSpeed {
  /** How many browser rounds of the run reached the client. */
  readonly rounds: number
  /** Their median (or, before the first, the seed's), in ms; absent when none is known. */
  readonly roundMs?: number | undefined
  /** The round a check limit is made for (NOMINAL_ROUND_MS). */
  readonly nominalMs: number
  /** How much the default limit was multiplied by (1 to MAX_SCALE). */
  readonly scale: number
  /** Whether limits were scaled (false when --check-timeout was given). */
  readonly scaled: boolean
  /** The round measured before the run (the preflight's sign-in), when there was one. */
  readonly seed?: PaceSeed | undefined
}

/** The run's speed from its pace (`scaled`: whether limits scale with it). */
export function speedOf(pace: Pace, scaled: boolean): RunSpeed {
  const roundMs = pace.roundMs()
  return {
    rounds: pace.rounds,
    ...(roundMs === undefined ? {} : { roundMs: Math.round(roundMs) }),
    nominalMs: NOMINAL_ROUND_MS,
    scale: Math.round(pace.scale() * 100) / 100,
    scaled,
    ...(pace.seeded ? { seed: { ...pace.seeded, ms: Math.round(pace.seeded.ms) } } : {}),
  }
}

/**
 * The speed line of the summary and the reports: `one browser round took 4200 ms (median of
 * 12; nominal 2000 ms): check limits scaled ×2.1`; undefined when no round is known.
 */
export function describeSpeed(speed: RunSpeed): string | undefined {
  if (speed.roundMs === undefined) return undefined
  const seed = speed.seed
  const from = seed
    ? seed.from === 'browser'
      ? "the preflight's browser sign-in"
      : "the preflight's sign-in by form post, a lower bound of a browser round"
    : undefined
  const measured =
    speed.rounds > 0
      ? `one browser round took ${speed.roundMs} ms (median of ${speed.rounds}; nominal ${speed.nominalMs} ms)${seed ? `; before the first, ${seed.ms} ms from ${from ?? ''}` : ''}`
      : `one browser round took ${speed.roundMs} ms (${from ?? 'before the run'}; no round of the run reached the client; nominal ${speed.nominalMs} ms)`
  return `${measured}: ${
    speed.scaled
      ? `check limits scaled ×${speed.scale.toFixed(1)}`
      : 'check limits not scaled (--check-timeout given)'
  }`
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

/**
 * How much slower than nominal the run that `context` counts towards is (1 for a context no run
 * paces): the scale of a browser wait with a default bound, as check limits are scaled.
 */
export function scaleIn(context: BrowserContext): number {
  return contextPace.get(context)?.scale() ?? 1
}
