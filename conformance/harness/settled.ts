/**
 * Waits for `promise` at most `ms`, never rejecting: a bounded wait for something whose outcome
 * is not the caller's to judge (browser contexts closing at a check's end, a stopped run's
 * clean-up before its reports are written).
 */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    promise.catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ])
  clearTimeout(timer)
}
