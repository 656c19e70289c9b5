import type { Fault } from '../deps.ts'
import type { Store } from './store.ts'

/**
 * The test-only faults that are about storage (deps.ts), played by the store instead of by the
 * grant and route code: the store misbehaves the way the fault says and the code above it stays
 * as it ships. createServer wraps its store in this only when the self-test asks for faults,
 * which it refuses outside the test harness (config.ts faultsRefused).
 */
export function withStorageFaults(store: Store, faults: ReadonlySet<Fault>): Store {
  const { codes, tokens, rateLimits } = store
  /**
   * The login throttle's counters (routes/login.ts keys them `login:…` per address and user
   * name, `loginaddress:…` per address) that a fault keeps from counting.
   */
  const uncounted = (key: string): boolean =>
    // RATE-01's and LOGIN-07's sabotage: failed sign-ins are never throttled
    (faults.has('login-unthrottled') && /^login(address)?:/.test(key)) ||
    // SEC-02's sabotage: limited per user name only, never per address (password spraying)
    (faults.has('login-spraying-unthrottled') && key.startsWith('loginaddress:'))
  /** Codes that have issued tokens: with `pkce-failure-keeps-code`, only these count as spent. */
  const issuedFrom = new Set<string>()
  /** Digests of the codes stored, for `codes-repeat-per-sign-in`. */
  const stored = new Set<string>()
  return {
    ...store,
    codes: {
      insert(code) {
        // CODE-10's sabotage: a code issued again (the same sign-in) keeps its first record
        if (faults.has('codes-repeat-per-sign-in')) {
          if (stored.has(code.digest)) return Promise.resolve()
          stored.add(code.digest)
        }
        return codes.insert(code)
      },
      async consume(digest, now, binding) {
        // CODE-11's sabotage: the code is spent by whoever presents it, before any comparison
        const consumed = await codes.consume(
          digest,
          now,
          faults.has('redirect-mismatch-spends-code') ? undefined : binding,
        )
        if (!consumed) return undefined
        let { code, firstUse } = consumed
        // CODE-07's sabotage: the store hands out codes as if they never expired
        if (faults.has('code-expiry-unchecked'))
          code = { ...code, expiresAt: Number.POSITIVE_INFINITY }
        // PKCE-08's sabotage: a code counts as spent only once it has issued tokens, so a
        // redemption that failed (on PKCE, say) leaves it redeemable
        if (faults.has('pkce-failure-keeps-code') && !consumed.unbound && !issuedFrom.has(digest))
          firstUse = true
        return { ...consumed, code, firstUse }
      },
    },
    tokens: {
      ...tokens,
      async insert(token) {
        if (faults.has('pkce-failure-keeps-code') && token.codeDigest !== null)
          issuedFrom.add(token.codeDigest)
        await tokens.insert(token)
      },
    },
    rateLimits: {
      // an uncounted hit is always the first of its window
      hit: (key, windowStart, window) =>
        uncounted(key) ? Promise.resolve(1) : rateLimits.hit(key, windowStart, window),
      count: (key, windowStart) =>
        uncounted(key) ? Promise.resolve(0) : rateLimits.count(key, windowStart),
    },
  }
}
