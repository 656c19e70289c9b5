import { OAuthError } from '../errors.ts'

/**
 * Bounds the password hashes that run at once. They run on hashing threads of their own at a
 * lower CPU priority (users/hasher-threads.ts), not on libuv's pool that the sqlite3 driver and
 * WebCrypto's signatures use; still, each hash holds its memory (19 MiB for Argon2id at OWASP's
 * minimum, 128 MiB for scrypt) and a core while it runs, and unknown user names cost a full hash
 * by design. A burst beyond the bound waits in
 * a bounded queue; beyond the queue the sign-in is refused at once with 503 and Retry-After
 * (RFC 9110 §15.6.4) instead of piling up memory and latency.
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
  /**
   * True when `run` would refuse any task now, whatever its weight (every permit taken and the
   * queue full): a sign-in can be refused before the work that leads up to its hash.
   */
  readonly full: boolean
  /**
   * Holds a refused sign-in on a timer before it is answered (`busyHold` ms; no CPU while
   * held), so a client that retries each refusal at once sends one per hold instead of
   * spinning the event loop every endpoint shares (issue 33). Returns at once when holding is
   * off, when HOLD_CAP refusals are held already, or when `closed` is aborted; a hold ends early
   * when `closed` aborts (the client went away). Never rejects.
   */
  holdRefusal(closed: AbortSignal): Promise<void>
  /** Refusals held now (for tests and metrics). */
  readonly held: number
}

export interface HashingGateOptions {
  /** Permits: hashes that may run at once. */
  readonly concurrency: number
  /** Sign-ins that may wait for a permit; the next one is refused. */
  readonly queue: number
  /** Milliseconds a refused sign-in is held before its answer (holdRefusal); 0: none. */
  readonly busyHold?: number
}

/**
 * Refusals held at once, at most: each holds a socket and a timer, a few KiB. Beyond it a
 * refusal is answered at once, so holding never grows without bound; the connection caps
 * (plugins/connections.ts) bound the clients that can be spinning then.
 */
export const HOLD_CAP = 256

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
 * The default number of hashes at once: half of `UV_THREADPOOL_SIZE` (2 of its default 4), at
 * least one, as when hashes ran on that pool; 2 × 19 MiB at Argon2id's OWASP minimum. Capping at one per
 * core or one in all did not lower the API's latency under a sign-in flood and halved sign-ins
 * per second (README, Benchmarks).
 */
export function defaultHashConcurrency(env: NodeJS.ProcessEnv = process.env): number {
  const pool = Number(env.UV_THREADPOOL_SIZE) || 4
  return Math.max(1, Math.floor(pool / 2))
}

export function createHashingGate({
  concurrency,
  queue,
  busyHold = 0,
}: HashingGateOptions): HashingGate {
  let running = 0
  let held = 0
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
    get held() {
      return held
    },
    async holdRefusal(closed: AbortSignal): Promise<void> {
      if (busyHold <= 0 || held >= HOLD_CAP || closed.aborted) return
      held++
      try {
        await new Promise<void>((resolve) => {
          const end = () => {
            clearTimeout(timer)
            closed.removeEventListener('abort', end)
            resolve()
          }
          const timer = setTimeout(end, busyHold)
          closed.addEventListener('abort', end, { once: true })
        })
      } finally {
        held--
      }
    },
    get full() {
      // a non-empty queue refuses every newcomer once it is full; an empty one (queue 0)
      // refuses only when no permit is left for even the lightest task
      return waiting.length >= queue && (waiting.length > 0 || running >= concurrency)
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
