import type { Knex } from 'knex'
import type { RateLimitRepository } from '../store.ts'

export const rateLimitRepository = (knex: Knex): RateLimitRepository => ({
  async hit(key, windowStart) {
    // An upsert that increments in the database, so concurrent processes share one counter.
    const rows = await knex('rate_limits')
      .insert({ key, window_start: windowStart, count: 1 })
      .onConflict(['key', 'window_start'])
      .merge({ count: knex.raw('rate_limits.count + 1') })
      .returning<{ count: number | string }[]>('count')
    return Number(rows[0]?.count ?? 1)
  },
  async count(key, windowStart) {
    const row = await knex('rate_limits')
      .where({ key, window_start: windowStart })
      .first<{ count: number | string } | undefined>('count')
    return Number(row?.count ?? 0)
  },
})
