import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'

/** Another live process serves the SQLite file. */
export class DatabaseInUseError extends Error {
  override readonly name = 'DatabaseInUseError'
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: the process exists but belongs to someone else
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Takes `<file>.lock` for this process: a SQLite database is served by one server process,
 * which keeps state (rate-limit counters) in its memory. A second process on the same file is
 * refused with the way out; a lock left by a process that died (kill -9) is taken over.
 * Returns the release function.
 */
export function lockSqliteFile(file: string): () => void {
  const lockPath = `${file}.lock`
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      let released = false
      return () => {
        if (released) return
        released = true
        try {
          if (readFileSync(lockPath, 'utf8') === String(process.pid)) unlinkSync(lockPath)
        } catch {
          // already gone
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    let holder = Number.NaN
    try {
      holder = Number(readFileSync(lockPath, 'utf8'))
    } catch {
      continue // released between our open and read: try again
    }
    if (Number.isInteger(holder) && holder > 0 && alive(holder))
      throw new DatabaseInUseError(
        `the SQLite database ${file} is already served by process ${holder}${holder === process.pid ? ' (this one)' : ''}: SQLite serves one server process; for several, use DATABASE_URL=postgres://…`,
      )
    try {
      unlinkSync(lockPath) // stale: its process is gone
    } catch {
      // someone else removed it first
    }
  }
  throw new DatabaseInUseError(
    `could not take the lock ${lockPath}; another process keeps taking it`,
  )
}
