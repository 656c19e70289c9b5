import type { Knex } from 'knex'
import type { CodeRepository, StoredCode } from '../store.ts'

interface CodeRow {
  digest: string
  client_id: string
  user_id: string
  redirect_uri: string
  code_challenge: string
  scope: string
  nonce: string | null
  auth_time: number | string
  expires_at: number | string
  consumed_at: number | string | null
}

const fromRow = (r: CodeRow): StoredCode => ({
  digest: r.digest,
  clientId: r.client_id,
  userId: r.user_id,
  redirectUri: r.redirect_uri,
  codeChallenge: r.code_challenge,
  scope: r.scope,
  nonce: r.nonce,
  authTime: Number(r.auth_time),
  expiresAt: Number(r.expires_at),
})

export const codeRepository = (knex: Knex): CodeRepository => ({
  async insert(c) {
    await knex('auth_codes').insert({
      digest: c.digest,
      client_id: c.clientId,
      user_id: c.userId,
      redirect_uri: c.redirectUri,
      code_challenge: c.codeChallenge,
      scope: c.scope,
      nonce: c.nonce,
      auth_time: c.authTime,
      expires_at: c.expiresAt,
      consumed_at: null,
    })
  },
  async consume(digest, now, binding) {
    // One conditional write decides the winner: it matches an unconsumed row for exactly one
    // of any number of concurrent callers, on SQLite and PostgreSQL alike, and returns the code
    // to that caller in the same statement. Only the others read the row afterwards. With a
    // binding, a caller with another client or redirect_uri matches nothing and spends nothing.
    const [won] = await knex<CodeRow>('auth_codes')
      .where({
        digest,
        ...(binding ? { client_id: binding.clientId, redirect_uri: binding.redirectUri } : {}),
      })
      .whereNull('consumed_at')
      .update({ consumed_at: now })
      .returning('*')
    if (won) return { code: fromRow(won), firstUse: true }
    const row = await knex<CodeRow>('auth_codes').where({ digest }).first()
    if (!row) return undefined
    return binding && row.consumed_at === null
      ? { code: fromRow(row), firstUse: false, unbound: true }
      : { code: fromRow(row), firstUse: false }
  },
})
