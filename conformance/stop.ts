/**
 * How a run is stopped before its end and still reports (issue #29: a CI gate that dies without
 * a verdict is worse than a slow one): SIGINT, SIGTERM or the run's own time limit abort
 * `signal`, which tells the checks in flight to end at once and the rest not to start (each is
 * then reported as not run); `settle` waits for the run to come back with its results, but no
 * longer than a grace period after the stop (a second signal cuts that short), so the caller
 * can write its reports from what has finished even when something hangs.
 */

/** Why a run was stopped, and the exit code that says so. */
export interface Stopped {
  readonly why: string
  readonly code: number
}

export interface RunStop {
  /** Aborted when the run is stopped; its reason is `stopped.why`. */
  readonly signal: AbortSignal
  /** Set once the run is stopped. */
  readonly stopped: Stopped | undefined
  /** Stops the run (the first reason stands). */
  halt(why: string, code: number): void
  /**
   * `running`'s results; undefined when the run was stopped and did not come back within the
   * grace period, or when it threw (a harness error, which stops the run with `failedCode`).
   */
  settle<T>(running: Promise<T>): Promise<T | undefined>
  /**
   * `work`'s value, or undefined as soon as the run is stopped (at once if it already was):
   * a step before the checks (the embedded server's start, the preflight) is not waited for
   * once the run is stopped; it is left to end on its own (an error it ends with then is
   * nobody's to judge, and is dropped). Until then, `work`'s error is thrown.
   */
  until<T>(work: Promise<T>): Promise<{ readonly value: T } | undefined>
  /** Removes the signal handlers and timers (the process's default handling is back). */
  dispose(): void
}

export interface StopOptions {
  /** The run's time limit (--run-timeout), in ms; undefined: none. */
  readonly runTimeoutMs?: number | undefined
  /** How long the checks in flight have to end once the run is stopped. */
  readonly graceMs: number
  /** The exit code of a run stopped by its time limit or by an error of the harness. */
  readonly incompleteCode: number
  /** Exit codes by signal (128 + its number). */
  readonly signalCodes: Partial<Record<NodeJS.Signals, number>>
  /** Told of the stop, one line. */
  readonly tell: (line: string) => void
}

export function runStop(options: StopOptions): RunStop {
  const controller = new AbortController()
  let stopped: Stopped | undefined
  let graceTimer: NodeJS.Timeout | undefined
  let hurry: () => void = () => undefined
  const hurried = new Promise<void>((resolve) => (hurry = resolve))
  const halt = (why: string, code: number): void => {
    if (stopped) return
    stopped = { why, code }
    options.tell(
      `Stopping: ${why}; the checks in flight are stopped and reported, with the rest, as not run`,
    )
    controller.abort(why)
    graceTimer = setTimeout(hurry, options.graceMs)
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopped) {
      // a second signal: the reports are written now, from what has finished
      options.tell(`${signal} again: writing the reports without waiting for the checks`)
      hurry()
      return
    }
    halt(`interrupted by ${signal}`, options.signalCodes[signal] ?? options.incompleteCode)
  }
  const signals = Object.keys(options.signalCodes) as NodeJS.Signals[]
  for (const s of signals) process.on(s, onSignal)
  const runTimer =
    options.runTimeoutMs === undefined
      ? undefined
      : setTimeout(
          () =>
            halt(
              `the run's time limit of ${Math.round((options.runTimeoutMs ?? 0) / 1000)} s was reached (--run-timeout)`,
              options.incompleteCode,
            ),
          options.runTimeoutMs,
        )
  return {
    signal: controller.signal,
    get stopped() {
      return stopped
    },
    halt,
    async settle<T>(running: Promise<T>): Promise<T | undefined> {
      try {
        return await Promise.race([running, hurried.then(() => undefined)])
      } catch (err) {
        halt(
          `the harness failed: ${err instanceof Error ? err.message : String(err)}`,
          options.incompleteCode,
        )
        return undefined
      }
    },
    async until<T>(work: Promise<T>): Promise<{ readonly value: T } | undefined> {
      // the work left behind by a stop must not end the process with an unhandled rejection
      work.catch(() => undefined)
      if (stopped) return undefined
      let onAbort: () => void = () => undefined
      const aborted = new Promise<undefined>((resolve) => {
        onAbort = () => resolve(undefined)
        controller.signal.addEventListener('abort', onAbort, { once: true })
      })
      try {
        return await Promise.race([work.then((value) => ({ value })), aborted])
      } finally {
        controller.signal.removeEventListener('abort', onAbort)
      }
    },
    dispose() {
      for (const s of signals) process.off(s, onSignal)
      clearTimeout(runTimer)
      clearTimeout(graceTimer)
    },
  }
}
