import type { Fault } from '../deps.ts'
import type { Store } from './store.ts'

/**
 * The test-only faults that are about storage (deps.ts), played by the store instead of by the
 * grant and route code: the store misbehaves the way the fault says and the code above it stays
 * as it ships. createServer wraps its store in this only when the self-test asks for faults,
 * which it refuses outside the test harness (config.ts faultsRefused).
 */
export function withStorageFaults(store: Store, faults: ReadonlySet<Fault>): Store {
  const { tokens, sessions, rateLimits } = store
  /**
   * The login throttle's counters (routes/login.ts keys them `login:…` per address and user
   * name, `loginaddress:…` per address) that a fault keeps from counting.
   */
  const uncounted = (key: string): boolean =>
    // RATE-01's and LOGIN-07's sabotage: failed sign-ins are never throttled
    (faults.has('login-unthrottled') && /^login(address)?:/.test(key)) ||
    // SEC-02's sabotage: limited per user name only, never per address (password spraying)
    (faults.has('login-spraying-unthrottled') && key.startsWith('loginaddress:'))
  return {
    ...store,
    tokens: {
      ...tokens,
      async get(id) {
        const stored = await tokens.get(id)
        // RT-11's sabotage: the store hands out refresh tokens as if they never expired
        return stored?.kind === 'refresh' && faults.has('refresh-expiry-unchecked')
          ? { ...stored, expiresAt: Number.POSITIVE_INFINITY }
          : stored
      },
    },
    rateLimits: {
      // an uncounted hit is always the first of its window
      hit: (key, windowStart, window) =>
        uncounted(key) ? Promise.resolve(1) : rateLimits.hit(key, windowStart, window),
      count: (key, windowStart) =>
        uncounted(key) ? Promise.resolve(0) : rateLimits.count(key, windowStart),
    },
    sessions: {
      ...sessions,
      // LOGOUT-01's sabotage: logout clears the cookie but the session stays live in the store
      end: (digest, now) =>
        faults.has('logout-keeps-session') ? Promise.resolve() : sessions.end(digest, now),
    },
  }
}
