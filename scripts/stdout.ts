/**
 * The process's stdout for the CLI, safe to pipe into a reader that stops early
 * (`idp-conformance --list | head`): once the reader is gone (EPIPE), further writes are
 * dropped quietly, with no stack trace, and a run goes on to write its reports and exit with
 * its own code. Any other error of the stream is not hidden.
 */
export function pipeSafe(stream: NodeJS.WriteStream): {
  write(s: string): boolean
  readonly isTTY: boolean
  readonly columns: number | undefined
} {
  let gone = false
  stream.on('error', (err: NodeJS.ErrnoException) => {
    // a write already under way when the reader left fails once more, on the closed stream
    if (err.code !== 'EPIPE' && !(gone && err.code === 'ERR_STREAM_DESTROYED')) throw err
    gone = true
  })
  return {
    write: (s) => (gone ? false : stream.write(s)),
    get isTTY() {
      return stream.isTTY
    },
    get columns() {
      return stream.isTTY ? stream.columns : undefined
    },
  }
}
