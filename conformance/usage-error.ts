/** A usage or configuration error: the CLI prints its message on one line and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}
