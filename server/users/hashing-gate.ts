import { OAuthError } from '../errors.ts'

/**
 * Bounds the password hashes that run at once. scrypt runs on libuv's thread pool (4 threads
 * unless `UV_THREADPOOL_SIZE` says otherwise), the same pool the sqlite3 driver and `fs` use for
 * every call: without a bound, a burst of sign-ins (unknown user names cost a full hash by
 * design) fills the pool and stalls every endpoint that reads the store. With one, the rest of
 * the pool is always free for the store, and a burst beyond the bound waits in a bounded queue;
 * beyond the queue the sign-in is refused at once with 503 and Retry-After (RFC 9110 §15.6.4)
 * instead of piling up memory (128 MiB per hash at OWASP's cost) and latency.
 */
export interface HashingGate {
  /**
   * Runs `task` once `weight` permits are free (a verification padded to the current cost
   * runs two hashes side by side, so it takes two). Throws HashingBusy without running it when
   * the queue is full.
   */
  run<T>(task: () => Promise<T>, weight?: number): Promise<T>
  /** Hashes running and waiting now (for tests and metrics). */
  readonly load: { readonly running: number; readonly waiting: number }
}

export interface HashingGateOptions {
  /** Permits: hashes that may run at once. */
  readonly concurrency: number
  /** Sign-ins that may wait for a permit; the next one is refused. */
  readonly queue: number
}

/** Seconds a refused sign-in is told to wait: a queue drains in about that on the default cost. */
const RETRY_AFTER = 2

/** The 503 a sign-in gets when the hashing queue is full (`temporarily_unavailable`). */
export class HashingBusy extends OAuthError {
  constructor() {
    super(
      'temporarily_unavailable',
      'the server is busy signing other users in; try again shortly',
      { headers: { 'Retry-After': String(RETRY_AFTER) } },
    )
  }
}

/**
 * The default number of hashes at once: half of libuv's pool, at least one, so the store keeps
 * the other half whatever the load.
 */
export function defaultHashConcurrency(env: NodeJS.ProcessEnv = process.env): number {
  const pool = Number(env.UV_THREADPOOL_SIZE) || 4
  return Math.max(1, Math.floor(pool / 2))
}

export function createHashingGate({ concurrency, queue }: HashingGateOptions): HashingGate {
  let running = 0
  const waiting: { weight: number; start: () => void }[] = []
  // a task heavier than the whole gate still runs, alone
  const fits = (weight: number) => running === 0 || running + weight <= concurrency
  const next = (): void => {
    // first come, first served: a heavy task at the head is not overtaken by light ones
    while (waiting.length > 0 && fits(waiting[0]?.weight ?? 1)) {
      const head = waiting.shift()
      if (!head) return
      running += head.weight
      head.start()
    }
  }
  return {
    get load() {
      return { running, waiting: waiting.length }
    },
    async run<T>(task: () => Promise<T>, weight = 1): Promise<T> {
      if (waiting.length === 0 && fits(weight)) running += weight
      else if (waiting.length >= queue) throw new HashingBusy()
      else await new Promise<void>((start) => waiting.push({ weight, start }))
      try {
        return await task()
      } finally {
        running -= weight
        next()
      }
    },
  }
}
