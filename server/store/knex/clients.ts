import type { Knex } from 'knex'
import type { Branding, Client, ClientRepository } from '../store.ts'

interface ClientRow {
  id: string
  secret_digest: string
  name: string
  redirect_uris: string
  post_logout_redirect_uris: string
  grant_types: string
  scopes: string
  default_scopes: string
  role_definitions: string
  client_roles: string
}

const fromRow = (r: ClientRow): Client => ({
  id: r.id,
  secretDigest: r.secret_digest,
  name: r.name,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  postLogoutRedirectUris: JSON.parse(r.post_logout_redirect_uris) as string[],
  grantTypes: JSON.parse(r.grant_types) as string[],
  scopes: JSON.parse(r.scopes) as string[],
  defaultScopes: JSON.parse(r.default_scopes) as string[],
  roleDefinitions: JSON.parse(r.role_definitions) as Record<string, string[]>,
  clientRoles: JSON.parse(r.client_roles) as string[],
})

const toRow = (c: Client): ClientRow => ({
  id: c.id,
  secret_digest: c.secretDigest,
  name: c.name,
  redirect_uris: JSON.stringify(c.redirectUris),
  post_logout_redirect_uris: JSON.stringify(c.postLogoutRedirectUris),
  grant_types: JSON.stringify(c.grantTypes),
  scopes: JSON.stringify(c.scopes),
  default_scopes: JSON.stringify(c.defaultScopes),
  role_definitions: JSON.stringify(c.roleDefinitions),
  client_roles: JSON.stringify(c.clientRoles),
})

export const clientRepository = (knex: Knex): ClientRepository => ({
  async get(id) {
    const row = await knex<ClientRow>('clients').where({ id }).first()
    return row && fromRow(row)
  },
  async insertIfAbsent(client, branding) {
    await knex.transaction(async (trx) => {
      await trx('clients').insert(toRow(client)).onConflict('id').ignore()
      if (branding)
        await trx('branding')
          .insert({ client_id: client.id, ...branding })
          .onConflict('client_id')
          .ignore()
    })
  },
  async branding(id) {
    const row = await knex<Branding & { client_id: string }>('branding')
      .where({ client_id: id })
      .first()
    if (!row) return undefined
    const { client_id: _, ...branding } = row
    return branding
  },
  async upsert(client, branding) {
    await knex.transaction(async (trx) => {
      await trx('clients').insert(toRow(client)).onConflict('id').merge()
      // an upsert, not delete + insert, so that processes starting together cannot collide
      if (branding)
        await trx('branding')
          .insert({ client_id: client.id, ...branding })
          .onConflict('client_id')
          .merge()
      else await trx('branding').where({ client_id: client.id }).delete()
    })
  },
})
