import type { Knex } from 'knex'
import type { KeyRepository, SigningKey } from '../store.ts'

interface KeyRow {
  kid: string
  private_jwk: string
  public_jwk: string
  created_at: number | string
  activate_at: number | string
  retire_at: number | string | null
}

const fromRow = (r: KeyRow): SigningKey => ({
  kid: r.kid,
  privateJwk: JSON.parse(r.private_jwk) as Record<string, unknown>,
  publicJwk: JSON.parse(r.public_jwk) as Record<string, unknown>,
  createdAt: Number(r.created_at),
  activateAt: Number(r.activate_at),
  retireAt: r.retire_at === null ? null : Number(r.retire_at),
})

const toRow = (k: SigningKey): KeyRow => ({
  kid: k.kid,
  private_jwk: JSON.stringify(k.privateJwk),
  public_jwk: JSON.stringify(k.publicJwk),
  created_at: k.createdAt,
  activate_at: k.activateAt,
  retire_at: k.retireAt,
})

export const keyRepository = (knex: Knex): KeyRepository => ({
  async list() {
    const rows = await knex<KeyRow>('signing_keys').orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'kid', order: 'asc' },
    ])
    return rows.map(fromRow)
  },
  async insertIfNone(key) {
    // insert … select … where not exists: one statement, so two processes booting at once on
    // an empty database cannot both insert (PostgreSQL additionally serialises via the lock).
    return knex.transaction(async (trx) => {
      if ((trx.client as { config: { client: unknown } }).config.client === 'pg')
        await trx.raw('lock table signing_keys in share row exclusive mode')
      const existing = await trx('signing_keys').count<{ n: number | string }[]>({ n: '*' })
      if (Number(existing[0]?.n ?? 0) > 0) return false
      await trx('signing_keys').insert(toRow(key))
      return true
    })
  },
  async insert(key) {
    await knex('signing_keys').insert(toRow(key))
  },
  async rotate(key, retireAt) {
    await knex.transaction(async (trx) => {
      await trx('signing_keys').whereNull('retire_at').update({ retire_at: retireAt })
      await trx('signing_keys').insert(toRow(key))
    })
  },
})
