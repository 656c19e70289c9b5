import type { Knex } from 'knex'
import { hashCostPrefix } from '../../users/passwords.ts'
import type { User, UserRepository } from '../store.ts'
import { groupedById } from './group-commit.ts'

interface UserRow {
  id: string
  username: string
  password_hash: string
  name: string
  picture: string
  email: string
  email_verified: boolean | number
  org_id: string
  updated_at: number | string
}

const fromRow = (r: UserRow): User => ({
  id: r.id,
  username: r.username,
  passwordHash: r.password_hash,
  name: r.name,
  picture: r.picture,
  email: r.email,
  emailVerified: Boolean(r.email_verified),
  orgId: r.org_id,
  updatedAt: Number(r.updated_at),
})

const toRow = (user: User): UserRow => ({
  id: user.id,
  username: user.username,
  password_hash: user.passwordHash,
  name: user.name,
  picture: user.picture,
  email: user.email,
  email_verified: user.emailVerified,
  org_id: user.orgId,
  updated_at: user.updatedAt,
})

const roleRows = (userId: string, roles: Readonly<Record<string, readonly string[]>>) =>
  Object.entries(roles).flatMap(([clientId, rs]) =>
    [...new Set(rs)].map((role) => ({ user_id: userId, client_id: clientId, role })),
  )

export const userRepository = (knex: Knex): UserRepository => {
  // user-info, code exchange and refresh read the user of every request: grouped as tokens are
  const byId = groupedById<UserRow>(knex, 'users')
  return {
    async get(id) {
      const row = await byId(id)
      return row && fromRow(row)
    },
    async byUsername(username) {
      // PostgreSQL's text cannot hold U+0000 and refuses the query: no user has such a name
      if (username.includes('\u0000')) return undefined
      const row = await knex<UserRow>('users').where({ username }).first()
      return row && fromRow(row)
    },
    async roles(userId, clientId) {
      const rows = await knex('user_roles')
        .where({ user_id: userId, client_id: clientId })
        .orderBy('role')
        .select<{ role: string }[]>('role')
      return rows.map((r) => r.role)
    },
    async insertIfAbsent(user, roles) {
      await knex.transaction(async (trx) => {
        const inserted = await trx('users')
          .insert(toRow(user))
          .onConflict('id')
          .ignore()
          .returning('id')
        if (inserted.length === 0) return
        const rows = roleRows(user.id, roles)
        if (rows.length > 0)
          await trx('user_roles').insert(rows).onConflict(['user_id', 'client_id', 'role']).ignore()
      })
    },
    async hashCosts() {
      // read once at start; the prefixes are taken here, not in SQL, so SQLite and PostgreSQL
      // need no string functions of their own
      const hashes = await knex<UserRow>('users').pluck('password_hash')
      return [...new Set(hashes.map(hashCostPrefix))]
    },
    async replacePasswordHash(id, current, next) {
      const updated = await knex('users')
        .where({ id, password_hash: current })
        .update({ password_hash: next })
      return updated > 0
    },
    async upsert(user, roles) {
      await knex.transaction(async (trx) => {
        await trx('users').insert(toRow(user)).onConflict('id').merge()
        const rows = roleRows(user.id, roles)
        const keep = new Set(rows.map((r) => `${r.client_id}\0${r.role}`))
        const current = await trx('user_roles')
          .where({ user_id: user.id })
          .select<{ client_id: string; role: string }[]>('client_id', 'role')
        for (const r of current)
          if (!keep.has(`${r.client_id}\0${r.role}`))
            await trx('user_roles')
              .where({ user_id: user.id, client_id: r.client_id, role: r.role })
              .delete()
        // ignore what a process starting at the same time has just inserted
        if (rows.length > 0)
          await trx('user_roles').insert(rows).onConflict(['user_id', 'client_id', 'role']).ignore()
      })
    },
  }
}
