import type { Config } from './config.ts'
import type { Explain } from './explain/findings.ts'
import type { Keystore } from './keys/keystore.ts'
import type { Store } from './store/store.ts'
import type { HashingGate } from './users/hashing-gate.ts'
import type { ScryptParams } from './users/passwords.ts'

/**
 * Faults that only tests switch on, so the suite's self-test can prove a check fails where msw
 * cannot reach (browser traffic, TLS, server-side state). createServer refuses them outside the
 * test harness and with NODE_ENV=production (config.ts faultsRefused). The faults about storage
 * (code and refresh-token expiry, spending codes, sessions, the login counters) are played by a
 * store wrapper (store/faulty-store.ts); the others are read where they act.
 */
export type Fault =
  | 'plain-http-serves-documents'
  | 'weak-tls'
  | 'client-credentials-user-subject'
  | 'refresh-orphans-access-tokens'
  | 'logout-keeps-session'
  | 'logout-empty-state'
  | 'logout-post-reads-query'
  | 'logout-without-confirmation'
  | 'rate-limit-keyed-by-ip'
  | 'client-auth-failures-charged-to-client'
  | 'client-credentials-in-query-accepted'
  | 'client-credentials-sub-of-user'
  | 'refresh-expiry-unchecked'
  | 'logout-truncates-state'
  | 'logout-requires-redirect-uri'
  | 'logout-defaults-to-registered-uri'
  | 'logout-refuses-state-without-client'
  | 'logout-hint-signature-unchecked'
  | 'logout-without-hint-refused'
  | 'logout-confirmation-ends-nothing'
  | 'logout-page-sends-user-on'

/** Unix seconds. The clock is a dependency so tests can move time. */
export type Clock = () => number

export interface Deps {
  readonly config: Config
  readonly store: Store
  readonly keys: Keystore
  readonly clock: Clock
  readonly faults: ReadonlySet<Fault>
  /**
   * The rate limits in force: `config.rateLimits`, unless the embedded test target lowers one
   * for a bounded 429 probe.
   */
  readonly rateLimits: () => Config['rateLimits']
  readonly log: (event: string, detail?: Record<string, unknown>) => void
  /** Bounds the password hashes running at once (`config.passwordHashConcurrency`). */
  readonly hashing: HashingGate
  /** Checks a sign-in's password against the user's stored hash, at the configured cost. */
  readonly verifyPassword: (
    password: string,
    stored: string,
    current: ScryptParams,
  ) => Promise<boolean>
  /** Client-check mode's recorder (`config.explain`), or undefined when it is off. */
  readonly explain?: Explain | undefined
}

export const systemClock: Clock = () => Math.floor(Date.now() / 1000)
