import type { Knex } from 'knex'
import type { Interaction, InteractionRepository, Session, SessionRepository } from '../store.ts'

export const sessionRepository = (knex: Knex): SessionRepository => ({
  async insert(s) {
    await knex('sessions').insert({
      digest: s.digest,
      user_id: s.userId,
      auth_time: s.authTime,
      expires_at: s.expiresAt,
      ended_at: null,
    })
  },
  async get(digest, now) {
    const row = await knex('sessions')
      .where({ digest })
      .whereNull('ended_at')
      .where('expires_at', '>', now)
      .first<
        | {
            digest: string
            user_id: string
            auth_time: number | string
            expires_at: number | string
          }
        | undefined
      >()
    return (
      row && {
        digest: row.digest,
        userId: row.user_id,
        authTime: Number(row.auth_time),
        expiresAt: Number(row.expires_at),
      }
    )
  },
  async end(digest, now) {
    await knex('sessions').where({ digest }).whereNull('ended_at').update({ ended_at: now })
  },
})

export const interactionRepository = (knex: Knex): InteractionRepository => ({
  async insert(i: Interaction) {
    await knex('interactions').insert({
      id: i.id,
      request: JSON.stringify(i.request),
      csrf_digest: i.csrfDigest,
      expires_at: i.expiresAt,
    })
  },
  async get(id, now) {
    const row = await knex('interactions')
      .where({ id })
      .where('expires_at', '>', now)
      .first<
        | { id: string; request: string; csrf_digest: string; expires_at: number | string }
        | undefined
      >()
    return (
      row && {
        id: row.id,
        request: JSON.parse(row.request) as Record<string, unknown>,
        csrfDigest: row.csrf_digest,
        expiresAt: Number(row.expires_at),
      }
    )
  },
  async take(id) {
    const n = await knex('interactions').where({ id }).delete()
    return n === 1
  },
})

export type { Session }
