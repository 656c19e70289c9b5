import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'

/**
 * scrypt on threads of its own, at a lower CPU priority than the server's (issue 33).
 *
 * node:crypto's async scrypt runs on libuv's thread pool, which the sqlite3 driver and
 * WebCrypto's RSA signatures (every token) use too, and at the same priority as the event loop:
 * a sign-in flood (unknown user names cost a full hash by design) kept two of the pool's four
 * threads and both cores of a 2-core server busy, and client_credentials' p99 went 4 × (the
 * bench's sign-in flood). Here each hash runs synchronously (scryptSync) on a worker thread that
 * lowered its own nice value at start, so the kernel gives the API's threads the CPU first and
 * the hashes the rest, and libuv's pool stays free for the store and the signatures. Same
 * function, same parameters, same output: only where and at what priority it runs changes.
 */

/**
 * The nice value the hashing threads take (Linux: a thread's nice value is its own, man 2
 * setpriority). At 10 a busy hashing thread gets about a tenth of the CPU of a busy thread at
 * 0, so sign-ins still progress while the API is loaded, and take every idle cycle otherwise.
 */
export const HASHING_NICE = 10

// A plain-JavaScript worker (eval), so it runs the same from the TypeScript sources, the
// compiled dist/ and any bundle, without a loader.
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
parentPort.on('message', ({ id, password, salt, keylen, options }) => {
  try {
    const key = scryptSync(password, salt, keylen, options)
    parentPort.postMessage({ id, key })
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) })
  }
})
`

interface Task {
  readonly id: number
  readonly password: string
  readonly salt: Uint8Array
  readonly keylen: number
  readonly options: { N: number; r: number; p: number; maxmem: number }
  readonly resolve: (key: Buffer) => void
  readonly reject: (err: Error) => void
}

interface Slot {
  worker: Worker
  task: Task | undefined
}

export interface HasherThreads {
  scrypt(
    password: string,
    salt: Uint8Array,
    keylen: number,
    options: { N: number; r: number; p: number; maxmem: number },
  ): Promise<Buffer>
  /** Ends the threads (tests); a later call starts new ones. */
  close(): Promise<void>
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

  const start = (index: number): Slot => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { nice }, execArgv: [] })
    const slot: Slot = { worker, task: undefined }
    const fail = (err: Error) => {
      if (slots[index] === slot) slots[index] = undefined
      const task = slot.task
      slot.task = undefined
      task?.reject(err)
      dispatch()
    }
    worker.on('message', (msg: { id: number; key?: Uint8Array; error?: string }) => {
      const task = slot.task
      if (!task || task.id !== msg.id) return
      slot.task = undefined
      worker.unref()
      if (msg.error !== undefined || !msg.key) task.reject(new Error(msg.error ?? 'no key'))
      else task.resolve(Buffer.from(msg.key.buffer, msg.key.byteOffset, msg.key.byteLength))
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
      const { id, password, salt, keylen, options } = task
      slot.worker.postMessage({ id, password, salt, keylen, options })
    }
  }

  return {
    scrypt(password, salt, keylen, options) {
      return new Promise<Buffer>((resolve, reject) => {
        waiting.push({ id: nextId++, password, salt, keylen, options, resolve, reject })
        dispatch()
      })
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
