import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // fields after the parenthesised command name; utime and stime are fields 14 and 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Resident set size of a process, MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb / 1024
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak and the samples. */
export function sampleRss(pid: number, everyMs = 250) {
  const samples: number[] = []
  const timer = setInterval(() => {
    try {
      samples.push(rssMiB(pid))
    } catch {
      // the process ended
    }
  }, everyMs)
  return {
    stop() {
      clearInterval(timer)
      return { peak: samples.length ? Math.max(...samples) : 0, samples }
    },
  }
}

/** Starts a TypeScript entry point in its own Node process (tsx as a loader, so the PID is the server's). */
export function startNode(
  script: string,
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Resolves when the child prints a line matching `ready`, rejects if it exits first. */
export function waitForLine(
  child: ChildProcess,
  ready: RegExp,
  timeoutMs = 30_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${ready}: ${out}`)),
      timeoutMs,
    )
    let seen = false
    // the listener stays on after the line was seen, so the child's output is drained (a full
    // pipe would stall a child that logs every request), but it is no longer kept
    const onData = (chunk: Buffer) => {
      if (seen) return
      out += chunk.toString()
      const m = ready.exec(out)
      if (m) {
        seen = true
        clearTimeout(timer)
        resolve(m[0])
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (c: Buffer) => {
      if (!seen) out += c.toString()
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited with ${String(code)} before ready: ${out}`))
    })
  })
}

/** Stops a child by its PID and waits for it. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const done = await Promise.race([
    exited.then(() => true),
    new Promise((r) => setTimeout(() => r(false), 5000)),
  ])
  if (!done) child.kill('SIGKILL')
}

/**
 * The reference server as the bench measures it: its own process, on loopback, every rate
 * limit lifted (the bench measures cost, not the limits), explain mode off as deployed.
 */
export function startReferenceServer(
  port: number,
  dataDir: string,
  databaseUrl?: string,
): ChildProcess {
  const unlimited = '1000000000/60'
  return startNode(
    'scripts/serve.ts',
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      CODE_TTL: '600',
      ...(databaseUrl
        ? { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: `bench_${process.pid}` }
        : {}),
      ...Object.fromEntries(
        ['TOKEN', 'INTROSPECT', 'REVOKE', 'USERINFO', 'LOGIN', 'LOGINADDRESS', 'PUBLIC'].map(
          (g) => [`RATE_LIMIT_${g}`, unlimited],
        ),
      ),
    },
    // measured as deployed: explain mode is a development aid (off with NODE_ENV=production)
    ['--no-explain'],
  )
}
