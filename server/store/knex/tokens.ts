import type { Knex } from 'knex'
import type { StoredToken, TokenKind, TokenRepository } from '../store.ts'
import { groupedById, groupedInsert } from './group-commit.ts'

interface TokenRow {
  id: string
  kind: string
  client_id: string
  subject: string
  scope: string
  issued_at: number | string
  expires_at: number | string
  revoked_at: number | string | null
  code_digest: string | null
  parent_id: string | null
}

const fromRow = (r: TokenRow): StoredToken => ({
  id: r.id,
  kind: r.kind as TokenKind,
  clientId: r.client_id,
  subject: r.subject,
  scope: r.scope,
  issuedAt: Number(r.issued_at),
  expiresAt: Number(r.expires_at),
  revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  codeDigest: r.code_digest,
  parentId: r.parent_id,
})

export const tokenRepository = (knex: Knex): TokenRepository => {
  const insert = groupedInsert(knex, 'tokens')
  const get = groupedById<TokenRow>(knex, 'tokens')
  return {
    async insert(t) {
      await insert({
        id: t.id,
        kind: t.kind,
        client_id: t.clientId,
        subject: t.subject,
        scope: t.scope,
        issued_at: t.issuedAt,
        expires_at: t.expiresAt,
        revoked_at: t.revokedAt,
        code_digest: t.codeDigest,
        parent_id: t.parentId,
      })
    },
    async get(id) {
      const row = await get(id)
      return row && fromRow(row)
    },
    async revoke(id, now) {
      await knex('tokens')
        .where((q) => {
          void q.where({ id }).orWhere({ parent_id: id })
        })
        .whereNull('revoked_at')
        .update({ revoked_at: now })
    },
    async revokeByCode(codeDigest, now) {
      await knex('tokens')
        .where({ code_digest: codeDigest })
        .whereNull('revoked_at')
        .update({ revoked_at: now })
    },
  }
}
