import { createRequire } from 'node:module'
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'

/**
 * Password hashes (Argon2id and scrypt) on threads of their own, at a lower CPU priority than
 * the server's (issue 33).
 *
 * node:crypto's async scrypt, and @node-rs/argon2's async functions, run on libuv's thread
 * pool, which the sqlite3 driver and WebCrypto's RSA signatures (every token) use too, and at
 * the same priority as the event loop: a sign-in flood (unknown user names cost a full hash by
 * design) kept two of the pool's four threads and both cores of a 2-core server busy, and
 * client_credentials' p99 went 4 × (the bench's sign-in flood). Here each hash runs
 * synchronously (scryptSync, or the library's hashSync/verifySync) on a worker thread that
 * lowered its own nice value at start, so the kernel gives the API's threads the CPU first and
 * the hashes the rest, and libuv's pool stays free for the store and the signatures. Same
 * functions, same parameters, same output: only where and at what priority they run changes.
 */

/**
 * The nice value the hashing threads take (Linux: a thread's nice value is its own, man 2
 * setpriority). At 10 a busy hashing thread gets about a tenth of the CPU of a busy thread at
 * 0, so sign-ins still progress while the API is loaded, and take every idle cycle otherwise.
 */
export const HASHING_NICE = 10

// A plain-JavaScript worker (eval), so it runs the same from the TypeScript sources, the
// compiled dist/ and any bundle, without a loader. @node-rs/argon2 is required by the path the
// main thread resolved (workerData.argon2), on the first Argon2id task: an eval'd worker has
// no module of its own to resolve a package from.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { scryptSync } = require('node:crypto')
const { readlinkSync } = require('node:fs')
const { setPriority } = require('node:os')
if (process.platform === 'linux') {
  try {
    // /proc/thread-self is this thread's /proc/<pid>/task/<tid>; setpriority on a tid is
    // per thread on Linux
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, workerData.nice)
  } catch {
    // a sandbox without /proc or without setpriority: the hashes run at normal priority
  }
}
let argon2
const run = (job) => {
  if (job.kind === 'scrypt') return scryptSync(job.password, job.salt, job.keylen, job.options)
  if (!workerData.argon2) throw new Error('@node-rs/argon2 is not installed (PASSWORD_HASH=argon2id needs it)')
  argon2 ??= require(workerData.argon2)
  if (job.kind === 'argon2id')
    return argon2.hashSync(job.password, {
      ...job.options,
      algorithm: argon2.Algorithm.Argon2id,
      version: argon2.Version.V0x13,
    })
  if (job.kind === 'argon2id-verify') return argon2.verifySync(job.stored, job.password)
  throw new Error('unknown hashing task ' + String(job.kind))
}
parentPort.on('message', ({ id, job }) => {
  try {
    parentPort.postMessage({ id, result: run(job) })
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) })
  }
})
`

/** scryptSync's options (node:crypto). */
export interface ScryptOptions {
  readonly N: number
  readonly r: number
  readonly p: number
  readonly maxmem: number
}

/** The library's hash options this module sets; the algorithm is always Argon2id, v=19. */
export interface Argon2idOptions {
  /** KiB */
  readonly memoryCost: number
  readonly timeCost: number
  readonly parallelism: number
  /** bytes */
  readonly outputLen: number
}

/** What a hashing thread is asked to compute, and what it answers. */
type Job =
  | {
      readonly kind: 'scrypt'
      readonly password: string
      readonly salt: Uint8Array
      readonly keylen: number
      readonly options: ScryptOptions
    }
  | { readonly kind: 'argon2id'; readonly password: string; readonly options: Argon2idOptions }
  | { readonly kind: 'argon2id-verify'; readonly stored: string; readonly password: string }

interface Task {
  readonly id: number
  readonly job: Job
  readonly resolve: (result: unknown) => void
  readonly reject: (err: Error) => void
}

interface Slot {
  worker: Worker
  task: Task | undefined
}

export interface HasherThreads {
  /** node:crypto's scryptSync on a hashing thread: the derived key. */
  scrypt(
    password: string,
    salt: Uint8Array,
    keylen: number,
    options: ScryptOptions,
  ): Promise<Buffer>
  /** @node-rs/argon2's hashSync (Argon2id, v=19, a fresh random salt): its PHC string. */
  argon2id(password: string, options: Argon2idOptions): Promise<string>
  /**
   * @node-rs/argon2's verifySync: whether `password` matches the PHC string `stored`, at the
   * parameters `stored` names (bound them before: users/passwords.ts).
   */
  argon2idVerify(stored: string, password: string): Promise<boolean>
  /** Ends the threads (tests); a later call starts new ones. */
  close(): Promise<void>
}

/**
 * Where @node-rs/argon2 is, for the eval'd worker: resolved from this module, wherever it runs
 * from (sources, dist/, an installed package). Undefined when it cannot be found: an Argon2id
 * task then fails saying so, and scrypt keeps working.
 */
function resolveArgon2(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve('@node-rs/argon2')
  } catch {
    return undefined
  }
}

/**
 * A pool of `size` hashing threads, started on first use. Tasks beyond `size` wait in order
 * (the hashing gate, users/hashing-gate.ts, bounds how many are asked for at once). A thread
 * holds the process open only while it hashes, so a CLI that hashes and returns exits. A
 * thread that dies fails its task and is replaced at the next one.
 */
export function createHasherThreads(size: number, nice = HASHING_NICE): HasherThreads {
  const slots: (Slot | undefined)[] = Array.from({ length: Math.max(1, size) }, () => undefined)
  const waiting: Task[] = []
  let nextId = 0
  const argon2 = resolveArgon2()

  const start = (index: number): Slot => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { nice, argon2 },
      execArgv: [],
    })
    const slot: Slot = { worker, task: undefined }
    const fail = (err: Error) => {
      if (slots[index] === slot) slots[index] = undefined
      const task = slot.task
      slot.task = undefined
      task?.reject(err)
      dispatch()
    }
    worker.on('message', (msg: { id: number; result?: unknown; error?: string }) => {
      const task = slot.task
      if (!task || task.id !== msg.id) return
      slot.task = undefined
      worker.unref()
      if (msg.error !== undefined) task.reject(new Error(msg.error))
      else task.resolve(msg.result)
      dispatch()
    })
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`hashing thread exited (${code})`)))
    worker.unref()
    return slot
  }

  const dispatch = (): void => {
    for (let i = 0; i < slots.length && waiting.length > 0; i++) {
      const slot = slots[i] ?? (slots[i] = start(i))
      if (slot.task) continue
      const task = waiting.shift()
      if (!task) return
      slot.task = task
      slot.worker.ref()
      slot.worker.postMessage({ id: task.id, job: task.job })
    }
  }

  const submit = (job: Job): Promise<unknown> =>
    new Promise<unknown>((resolve, reject) => {
      waiting.push({ id: nextId++, job, resolve, reject })
      dispatch()
    })

  /** The answer when it has the type asked for; a thread that answers otherwise fails its task. */
  const expect = async <T>(
    job: Job,
    is: (value: unknown) => value is T,
    what: string,
  ): Promise<T> => {
    const result = await submit(job)
    if (!is(result)) throw new Error(`hashing thread answered ${job.kind} without ${what}`)
    return result
  }

  return {
    async scrypt(password, salt, keylen, options) {
      const key = await expect(
        { kind: 'scrypt', password, salt, keylen, options },
        (v): v is Uint8Array => v instanceof Uint8Array,
        'a key',
      )
      return Buffer.from(key.buffer, key.byteOffset, key.byteLength)
    },
    argon2id(password, options) {
      return expect(
        { kind: 'argon2id', password, options },
        (v): v is string => typeof v === 'string',
        'a hash',
      )
    },
    argon2idVerify(stored, password) {
      return expect(
        { kind: 'argon2id-verify', stored, password },
        (v): v is boolean => typeof v === 'boolean',
        'a verdict',
      )
    },
    async close() {
      const running = slots.filter((s): s is Slot => s !== undefined)
      slots.fill(undefined)
      await Promise.all(running.map((s) => s.worker.terminate()))
    },
  }
}

/**
 * The process's hashing threads: as many as the cores, at least two (a verification padded to
 * the current cost runs two hashes side by side, users/passwords.ts). How many hash at once is
 * the hashing gate's to bound; these are only the threads they run on.
 */
export const hasherThreads: HasherThreads = createHasherThreads(Math.max(2, availableParallelism()))
