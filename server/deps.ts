import type { Config } from './config.ts'
import type { Explain } from './explain/findings.ts'
import type { Keystore } from './keys/keystore.ts'
import type { Store } from './store/store.ts'
import type { HashingGate } from './users/hashing-gate.ts'
import type { PasswordHashing } from './users/passwords.ts'

/** Unix seconds. The clock is a dependency so tests can move time. */
export type Clock = () => number

export interface Deps {
  readonly config: Config
  readonly store: Store
  readonly keys: Keystore
  readonly clock: Clock
  /**
   * The rate limits in force: `config.rateLimits`, unless the embedded test target lowers one
   * for a bounded 429 probe.
   */
  readonly rateLimits: () => Config['rateLimits']
  readonly log: (event: string, detail?: Record<string, unknown>) => void
  /** Bounds the password hashes running at once (`config.passwordHashConcurrency`). */
  readonly hashing: HashingGate
  /**
   * Checks a sign-in's password against the user's stored hash, taking at least a hash at the
   * configured algorithm and cost (users/passwords.ts, verifyPasswordAtCost).
   */
  readonly verifyPassword: (
    password: string,
    stored: string,
    current: PasswordHashing,
    costs?: readonly PasswordHashing[],
  ) => Promise<boolean>
  /**
   * Every algorithm and cost a failed sign-in is padded to: the configured one first, then each
   * other one stored when the server started (users/passwords.ts, paddingCosts).
   */
  readonly passwordCosts: readonly PasswordHashing[]
  /** Client-check mode's recorder (`config.explain`), or undefined when it is off. */
  readonly explain?: Explain | undefined
}

export const systemClock: Clock = () => Math.floor(Date.now() / 1000)
