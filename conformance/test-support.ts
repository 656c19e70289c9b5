import { execFileSync } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { main } from './cli.ts'

/**
 * Support for the CLI's tests (not part of the suite): the CLI run in this process with its output
 * captured, and the browser processes a run started.
 */

export interface CliRun {
  code: number
  out: string
  err: string
  /** how long `main` took */
  ms: number
}

/**
 * Runs the CLI's `main` with `argv` and `env`, capturing standard output and error (`merged`: both
 * into `out`, in the order written).
 */
export async function runCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: { isTTY?: boolean; merged?: boolean } = {},
): Promise<CliRun> {
  let out = ''
  let err = ''
  const started = performance.now()
  const code = await main(argv, {
    out: { write: (s: string) => (out += s), isTTY: options.isTTY ?? false },
    err: { write: (s: string) => (options.merged ? (out += s) : (err += s)) },
    env,
  })
  return { code, out, err, ms: performance.now() - started }
}

/**
 * Every process under `root` whose command line names Chromium, with every process under those
 * (Debian's chromium-headless-shell is a shell script that starts the browser as its child).
 */
export function chromiumUnder(root: number): number[] {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => {
      const [pid, ppid, ...args] = line.trim().split(/\s+/)
      return { pid: Number(pid), ppid: Number(ppid), args: args.join(' ') }
    })
  const below = [root]
  for (let i = 0; i < below.length; i++)
    for (const p of table) if (p.ppid === below[i] && !below.includes(p.pid)) below.push(p.pid)
  const browsers = table
    .filter((p) => below.includes(p.pid) && /chrom|headless/i.test(p.args))
    .map((p) => p.pid)
  for (let i = 0; i < browsers.length; i++)
    for (const p of table)
      if (p.ppid === browsers[i] && !browsers.includes(p.pid)) browsers.push(p.pid)
  return browsers
}
