import type { Config } from './config.ts'
import type { Keystore } from './keys/keystore.ts'
import type { Store } from './store/store.ts'

/**
 * Faults that only tests switch on, so the suite's self-test can prove a check fails where msw
 * cannot reach (browser traffic, TLS, server-side state). Production code never sets them.
 */
export type Fault = 'plain-http-serves-documents' | 'weak-tls'

/** Unix seconds. The clock is a dependency so tests can move time. */
export type Clock = () => number

export interface Deps {
  readonly config: Config
  readonly store: Store
  readonly keys: Keystore
  readonly clock: Clock
  readonly faults: ReadonlySet<Fault>
  readonly log: (event: string, detail?: Record<string, unknown>) => void
}

export const systemClock: Clock = () => Math.floor(Date.now() / 1000)
