import type { Config } from './config.ts'
import type { Explain } from './explain/findings.ts'
import type { Keystore } from './keys/keystore.ts'
import type { Store } from './store/store.ts'
import type { HashingGate } from './users/hashing-gate.ts'

/**
 * Faults that only tests switch on, so the suite's self-test can prove a check fails where msw
 * cannot reach (browser traffic, TLS, server-side state). createServer refuses them outside the
 * test harness and with NODE_ENV=production (config.ts faultsRefused). The faults about storage
 * (code and refresh-token expiry, spending codes, sessions, the login counters) are played by a
 * store wrapper (store/faulty-store.ts); the others are read where they act.
 */
export type Fault =
  | 'pkce-verifier-optional'
  | 'pkce-plain-fallback'
  | 'pkce-verifier-syntax-unchecked'
  | 'pkce-failure-keeps-code'
  | 'weak-codes'
  | 'short-codes'
  | 'codes-repeat-per-sign-in'
  | 'code-expiry-unchecked'
  | 'authorize-success-drops-state'
  | 'authorize-truncates-state'
  | 'authorize-success-carries-token-type'
  | 'authorize-success-appends-fragment'
  | 'authorize-success-drops-code'
  | 'authorize-reads-pkce-method-after-challenge'
  | 'authorize-refuses-id-token-hint'
  | 'authorize-grants-unknown-scope'
  | 'authorize-grants-foreign-scope'
  | 'token-response-scope-as-registered'
  | 'authorize-drops-nonce'
  | 'authorize-post-reads-query'
  | 'authorize-ignores-prompt-login'
  | 'login-cancel-ignored'
  | 'login-page-unbranded'
  | 'login-csrf-unchecked'
  | 'login-redirect-307'
  | 'login-reflects-username-raw'
  | 'login-enumerates-users'
  | 'login-enumerates-users-by-status'
  | 'login-enumerates-users-by-timing'
  | 'access-token-alg-none'
  | 'hapi-errors-unrendered'
  | 'login-spraying-unthrottled'
  | 'session-fixation'
  | 'grant-types-unenforced'
  | 'authorize-requires-scope'
  | 'redirect-mismatch-spends-code'
  | 'login-unthrottled'
  | 'session-cookie-not-secure'
  | 'session-cookie-not-httponly'
  | 'weak-session-ids'
  | 'logout-keeps-cookie'
  | 'authorize-dead-ends-ended-session'
  | 'session-cookie-samesite-none'
  | 'login-origin-unchecked'
  | 'login-interaction-cookie-unchecked'
  | 'login-csrf-token-unchecked'
  | 'login-throttle-spares-right-password'
  | 'login-page-loads-third-party-script'
  | 'login-page-reflects-hint-raw'
  | 'login-page-evals-hint'
  // not a deviation: a variant the checks must pass (the request as JSON in the login page)
  | 'login-page-embeds-request-json'
  | 'error-page-reflects-client-id-raw'
  | 'authorize-success-drops-iss'

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
  /** Client-check mode's recorder (`config.explain`), or undefined when it is off. */
  readonly explain?: Explain | undefined
}

export const systemClock: Clock = () => Math.floor(Date.now() / 1000)
