import type { Knex } from 'knex'
import type { Store } from '../store.ts'
import { clientRepository } from './clients.ts'
import { codeRepository } from './codes.ts'
import { interactionRepository, sessionRepository } from './sessions.ts'
import { keyRepository } from './keys.ts'
import { rateLimitRepository } from './rate-limits.ts'
import { tokenRepository } from './tokens.ts'
import { userRepository } from './users.ts'

export { openDatabase, migrate } from './database.ts'

/**
 * The knex implementation of every repository over one database; `overrides` replaces some
 * (SQLite keeps rate-limit counters in memory: server/store/memory-rate-limits.ts).
 */
export function createKnexStore(
  knex: Knex,
  overrides: Partial<Pick<Store, 'rateLimits'>> = {},
): Store {
  return {
    clients: clientRepository(knex),
    users: userRepository(knex),
    keys: keyRepository(knex),
    codes: codeRepository(knex),
    tokens: tokenRepository(knex),
    sessions: sessionRepository(knex),
    interactions: interactionRepository(knex),
    rateLimits: overrides.rateLimits ?? rateLimitRepository(knex),
    async purge(now, policy) {
      const counts: Record<string, number> = {}
      const del = async (table: string, query: (q: Knex.QueryBuilder) => Knex.QueryBuilder) => {
        counts[table] = (counts[table] ?? 0) + (await query(knex(table)).delete())
      }
      // never redeemed: nothing was issued from them
      await del('auth_codes', (q) => q.whereNull('consumed_at').where('expires_at', '<', now))
      await del('auth_codes', (q) => q.where('expires_at', '<', now - policy.spentCodeRetention))
      await del('tokens', (q) => q.where('expires_at', '<', now - policy.tokenGrace))
      await del('sessions', (q) =>
        q.where('expires_at', '<', now).orWhere('ended_at', '<', now - policy.tokenGrace),
      )
      await del('interactions', (q) => q.where('expires_at', '<', now))
      await del('rate_limits', (q) => q.where('window_start', '<', now - policy.rateLimitHorizon))
      await del('signing_keys', (q) => q.whereNotNull('retire_at').where('retire_at', '<', now))
      return counts
    },
    async ping() {
      await knex.raw('select 1')
    },
    close: () => knex.destroy(),
  }
}
