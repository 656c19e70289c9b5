import type { CheckResult } from '../harness/types.ts'
import type { Recorded } from '../previous-run.ts'

/** "about 1 min 20 s", "about 40 s", "under 5 s". */
export function aboutDuration(ms: number): string {
  const s = Math.round(ms / 1000)
  if (s < 5) return 'under 5 s'
  if (s < 60) return `about ${s} s`
  const min = Math.floor(s / 60)
  const rest = s % 60
  return `about ${min} min${rest ? ` ${rest} s` : ''}`
}

/**
 * The progress of a run, for the line a terminal shows under the results: checks done of the
 * total, failures so far, and the time left. The time left is the remaining checks' durations
 * (as an earlier run against the same target recorded them, else the mean of those finished
 * here) scaled by how much this run runs in parallel (its wall time so far over the durations
 * of the checks it finished, or before the first one, the earlier run's).
 */
export class Progress {
  readonly #ids: readonly string[]
  readonly #recorded: Recorded | undefined
  readonly #startedAt: number
  readonly #done = new Map<string, CheckResult>()

  constructor(ids: readonly string[], recorded: Recorded | undefined, startedAt: number) {
    this.#ids = ids
    this.#recorded = recorded
    this.#startedAt = startedAt
  }

  done(result: CheckResult): void {
    this.#done.set(result.id, result)
  }

  /** The time left in ms, or undefined while there is nothing to estimate it from. */
  left(now: number): number | undefined {
    const finished = [...this.#done.values()]
    const finishedMs = finished.reduce((a, r) => a + r.durationMs, 0)
    const mean = finished.length ? finishedMs / finished.length : undefined
    const ratio = finishedMs > 0 ? (now - this.#startedAt) / finishedMs : this.#recorded?.ratio
    let work = 0
    for (const id of this.#ids) {
      if (this.#done.has(id)) continue
      const ms = this.#recorded?.durations.get(id) ?? mean
      if (ms === undefined) return undefined
      work += ms
    }
    return ratio === undefined ? undefined : work * ratio
  }

  /** "[37/160] 2 failed, 1 inconclusive · about 1 min 20 s left" */
  line(now: number): string {
    const counts = { fail: 0, error: 0 }
    for (const r of this.#done.values())
      if (r.verdict === 'fail' || r.verdict === 'error') counts[r.verdict]++
    const width = String(this.#ids.length).length
    const left = this.left(now)
    return [
      `[${String(this.#done.size).padStart(width)}/${this.#ids.length}]`,
      `${counts.fail} failed${counts.error ? `, ${counts.error} inconclusive` : ''}`,
      '·',
      left === undefined ? 'estimating the time left' : `${aboutDuration(left)} left`,
    ].join(' ')
  }
}

/** A stream a progress line is drawn on (stdout when it is a terminal). */
export interface ProgressOut {
  write(s: string): unknown
  readonly columns?: number
}

/**
 * Draws the progress line under what is written: each write first erases the line, and a
 * write that ends a line draws it again below. `tick` redraws it (the time left moves on);
 * `end` erases it for good.
 */
export function progressWriter(
  out: ProgressOut,
  progress: Progress,
  now: () => number = Date.now,
): { write(s: string): void; tick(): void; end(): void } {
  const CLEAR = '\r\x1b[2K'
  let shown = false
  let ended = false
  const draw = (): void => {
    const line = progress.line(now())
    // a terminal of unknown width (0: a pseudo-terminal nobody sized) is taken as 80 columns
    const max = Math.max(20, (out.columns || 80) - 1)
    out.write(line.length > max ? line.slice(0, max) : line)
    shown = true
  }
  return {
    write(s) {
      if (ended) {
        out.write(s)
        return
      }
      out.write(shown ? `${CLEAR}${s}` : s)
      shown = false
      if (s.endsWith('\n')) draw()
    },
    tick() {
      if (ended) return
      if (shown) out.write(CLEAR)
      draw()
    },
    end() {
      if (shown) out.write(CLEAR)
      shown = false
      ended = true
    },
  }
}

/** Whether to draw a progress line: on a terminal, never in CI logs (CI set) or when piped. */
export const showProgress = (out: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean =>
  Boolean(out.isTTY) && !env.CI
