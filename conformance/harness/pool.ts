/**
 * Runs `run` over `items` with up to `concurrency` in flight. An item for which `alone` is true
 * waits for everything in flight, runs by itself, and only then lets the next items start.
 * Results come back in the order of `items`, whatever order they finished in; `onDone` sees each
 * as it finishes. A rejected `run` rejects the whole pool once the items in flight have settled.
 */
export async function runPool<T, R>(
  items: readonly T[],
  options: {
    readonly concurrency: number
    readonly alone: (item: T) => boolean
    readonly run: (item: T) => Promise<R>
    readonly onDone?: (result: R, item: T) => void
  },
): Promise<R[]> {
  const concurrency = Math.max(1, Math.floor(options.concurrency))
  const results = new Array<R>(items.length)
  const inFlight = new Set<Promise<void>>()
  const start = (item: T, index: number): Promise<void> => {
    const running: Promise<void> = options
      .run(item)
      .then((result) => {
        results[index] = result
        options.onDone?.(result, item)
      })
      .finally(() => inFlight.delete(running))
    inFlight.add(running)
    return running
  }
  try {
    for (const [index, item] of items.entries()) {
      if (options.alone(item)) {
        await Promise.all(inFlight)
        await start(item, index)
        continue
      }
      while (inFlight.size >= concurrency) await Promise.race(inFlight)
      // a rejection is not lost: Promise.race/all over inFlight rethrows it
      start(item, index).catch(() => undefined)
    }
    await Promise.all(inFlight)
  } finally {
    await Promise.allSettled(inFlight)
  }
  return results
}

/** One place taken in `Slots`: `ready` once granted; `release` gives it back (or stops waiting). */
export interface Slot {
  readonly ready: Promise<void>
  release(): void
}

/**
 * At most `size` holders at once, served in the order they asked (the run's browser pool: how
 * many checks drive the browser at the same time, whatever the run's concurrency).
 */
export class Slots {
  #free: number
  readonly #waiting: (() => void)[] = []
  constructor(size: number) {
    this.#free = Math.max(1, Math.floor(size))
  }

  acquire(): Slot {
    let granted = false
    let released = false
    let resolve: () => void = () => undefined
    const ready = new Promise<void>((r) => (resolve = r))
    const grant = (): void => {
      granted = true
      resolve()
    }
    if (this.#free > 0) {
      this.#free--
      grant()
    } else this.#waiting.push(grant)
    return {
      ready,
      release: () => {
        if (released) return
        released = true
        if (!granted) {
          // still waiting (the check ended first): leave the queue, hold nothing
          const at = this.#waiting.indexOf(grant)
          if (at >= 0) this.#waiting.splice(at, 1)
          return
        }
        const next = this.#waiting.shift()
        if (next) next()
        else this.#free++
      },
    }
  }
}
