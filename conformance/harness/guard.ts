import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * A run never dies of an error nobody caught. Each check's body runs in an async scope that
 * knows the check (runCheck); while a run is in progress, a process-level guard catches what
 * escapes every await (an unhandled rejection, an exception thrown from a timer or an event
 * handler) and hands it to the check it came from, which ends as inconclusive (ERROR). What
 * cannot be traced to a check still running (it came from the harness itself, or from a check
 * that has already ended) is told to the run as a notice, and the run goes on.
 */

/** The check whose body is running, as the async scope of an escaped error knows it. */
export interface CheckScope {
  readonly id: string
  /**
   * Ends the check as inconclusive with this error; false when the check has already ended
   * (the error outlived it).
   */
  escaped(err: unknown): boolean
}

const scope = new AsyncLocalStorage<CheckScope>()

/** Runs a check's body in its scope, so an error escaping it is traced back to it. */
export const inCheckScope = <T>(check: CheckScope, body: () => T): T => scope.run(check, body)

/** What an escaped error that belongs to no running check is told to (one per run in progress). */
type Listener = (message: string) => void
const runs = new Set<Listener>()

const describe = (err: unknown): string =>
  err instanceof Error ? (err.message.split('\n')[0] ?? err.name) : String(err)

const onEscaped = (err: unknown): void => {
  const check = scope.getStore()
  if (check?.escaped(err)) return
  const where = check ? `check ${check.id} after it had ended` : 'the run outside any check'
  const message = `an error escaped ${where} and was caught; the run goes on: ${describe(err)}`
  for (const tell of runs) tell(message)
}

/**
 * Installs the process-level guard for one run (several runs in one process share it); the
 * returned function removes it again. `onUnattributed` is told of escaped errors no check
 * running in this process could take.
 */
export function guardRun(onUnattributed: Listener = () => undefined): () => void {
  const tell: Listener = (message) => onUnattributed(message)
  if (runs.size === 0) {
    process.on('unhandledRejection', onEscaped)
    process.on('uncaughtException', onEscaped)
  }
  runs.add(tell)
  return () => {
    if (!runs.delete(tell) || runs.size > 0) return
    process.off('unhandledRejection', onEscaped)
    process.off('uncaughtException', onEscaped)
  }
}
