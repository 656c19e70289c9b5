import type { Fault } from '../deps.ts'
import type { Store } from './store.ts'

/**
 * The test-only faults that are about storage (deps.ts), played by the store instead of by the
 * grant and route code: the store misbehaves the way the fault says and the code above it stays
 * as it ships. createServer wraps its store in this only when the self-test asks for faults,
 * which it refuses outside the test harness (config.ts faultsRefused).
 */
export function withStorageFaults(store: Store, faults: ReadonlySet<Fault>): Store {
  const { tokens, sessions } = store
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
    sessions: {
      ...sessions,
      // LOGOUT-01's sabotage: logout clears the cookie but the session stays live in the store
      end: (digest, now) =>
        faults.has('logout-keeps-session') ? Promise.resolve() : sessions.end(digest, now),
    },
  }
}
