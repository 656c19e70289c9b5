import { spawn, type ChildProcess } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

/**
 * `npm run test:loaded [-- --busy N] [--max-minutes M] [-- command …]`: runs a command (default
 * `npm test`) beside N busy processes (default 4: twice the 2-core machine's cores, as a shared CI
 * runner is oversubscribed), and prints its wall time (issue 32 item 7: no verdict of the
 * project's own tests may depend on the machine being quiet).
 *
 * Each busy process is a bounded loop: it ends by itself after `--max-minutes` (default 60), so
 * none outlives the run even if this script is killed hard; this script stops each one by its
 * PID as soon as the command ends, or when it is interrupted. The command gets the same time
 * limit, and its exit code is this script's.
 */

/** A loop that keeps one core busy until `ms` have passed, then exits. */
const BUSY_LOOP = 'const end = Date.now() + Number(process.argv[1]); while (Date.now() < end) {}'

export interface LoadedRun {
  readonly exitCode: number
  readonly wallMs: number
  /** The busy processes' PIDs, each stopped when the command ended. */
  readonly busyPids: readonly number[]
}

/** Whether a process with this PID still runs (signal 0 only tests). */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Resolves when the child has exited (at once if it already has). */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

/**
 * Runs `command` beside `busy` busy loops, each bounded to `maxMs`; the command is killed
 * (SIGTERM, then SIGKILL 10 s later) if it runs past `maxMs`.
 */
export async function runLoaded(
  command: readonly [string, ...string[]],
  options: { readonly busy: number; readonly maxMs: number; readonly quiet?: boolean },
): Promise<LoadedRun> {
  const { busy, maxMs } = options
  const loops = Array.from({ length: busy }, () =>
    spawn(process.execPath, ['-e', BUSY_LOOP, String(maxMs)], { stdio: 'ignore' }),
  )
  const stopLoops = async () => {
    for (const loop of loops) if (loop.exitCode === null && loop.signalCode === null) loop.kill()
    await Promise.all(loops.map(exited))
  }
  const onSignal = (signal: NodeJS.Signals) => {
    void stopLoops().then(() => process.exit(signal === 'SIGINT' ? 130 : 143))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const started = performance.now()
  try {
    const [file, ...args] = command
    const child = spawn(file, args, { stdio: options.quiet ? 'ignore' : 'inherit' })
    let killTimer: NodeJS.Timeout | undefined
    const limit = setTimeout(() => {
      console.error(`test:loaded: the command ran past ${minutes(maxMs)}; stopped`)
      child.kill('SIGTERM')
      killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    }, maxMs)
    const exitCode = await new Promise<number>((resolve) => {
      child.once('error', (err) => {
        console.error(`test:loaded: ${file} could not start: ${err.message}`)
        resolve(127)
      })
      child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
    })
    clearTimeout(limit)
    clearTimeout(killTimer)
    return {
      exitCode,
      wallMs: performance.now() - started,
      busyPids: loops.flatMap((l) => (l.pid === undefined ? [] : [l.pid])),
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await stopLoops()
  }
}

/** m:ss */
export const minutes = (ms: number): string => {
  const s = Math.round(ms / 1000)
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}

async function main(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      busy: { type: 'string', default: '4' },
      'max-minutes': { type: 'string', default: '60' },
    },
    allowPositionals: true,
  })
  const busy = Number(values.busy)
  const maxMinutes = Number(values['max-minutes'])
  if (!Number.isInteger(busy) || busy < 0 || !(maxMinutes > 0)) {
    console.error('usage: npm run test:loaded [-- --busy N] [--max-minutes M] [-- command …]')
    return 2
  }
  const [file, ...rest] = positionals.length > 0 ? positionals : ['npm', 'test']
  const command: [string, ...string[]] = [file ?? 'npm', ...rest]
  console.log(
    `test:loaded: ${command.join(' ')} beside ${busy} busy processes ` +
      `(${availableParallelism()} cores; each stops after ${maxMinutes} min at most)`,
  )
  const run = await runLoaded(command, { busy, maxMs: maxMinutes * 60_000 })
  console.log(
    `test:loaded: ${command.join(' ')} exited ${run.exitCode} after ${minutes(run.wallMs)} ` +
      `(${Math.round(run.wallMs / 1000)} s wall) beside ${busy} busy processes`,
  )
  return run.exitCode
}

// run as a script (npm run test:loaded), not when a test imports it
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = await main(process.argv.slice(2))
