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
    async ping() {
      await knex.raw('select 1')
    },
    close: () => knex.destroy(),
  }
}
