import type { Knex } from 'knex'

/**
 * The initial schema. Times are Unix seconds. Secrets, codes, refresh tokens and session ids
 * are stored only as SHA-256 digests (ARCHITECTURE.md). Never edit this file after merge: add
 * a new migration instead.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('clients', (t) => {
    t.string('id', 255).primary()
    t.string('secret_digest', 64).notNullable()
    t.string('name', 255).notNullable()
    /** JSON arrays of exact-match URIs. */
    t.text('redirect_uris').notNullable()
    t.text('post_logout_redirect_uris').notNullable()
    t.text('grant_types').notNullable()
    /** Scopes the client may request; JSON array. */
    t.text('scopes').notNullable()
    /** Scopes a client_credentials request without `scope` gets; JSON array. */
    t.text('default_scopes').notNullable()
    /** Role definitions of this application: JSON object role -> permissions. */
    t.text('role_definitions').notNullable()
    /** Roles assigned to the client itself (client_credentials); JSON array. */
    t.text('client_roles').notNullable()
  })
  await knex.schema.createTable('branding', (t) => {
    t.string('client_id', 255).primary().references('clients.id').onDelete('CASCADE')
    t.string('logo_url', 2048).notNullable()
    t.string('brand_color', 7).notNullable()
    t.string('application_name', 255).notNullable()
    t.string('privacy_policy_url', 2048).notNullable()
    t.string('terms_of_service_url', 2048).notNullable()
  })
  await knex.schema.createTable('users', (t) => {
    t.string('id', 255).primary()
    t.string('username', 255).notNullable().unique()
    t.string('password_hash', 255).notNullable()
    t.string('name', 255).notNullable()
    t.string('picture', 2048).notNullable()
    t.string('email', 255).notNullable()
    t.boolean('email_verified').notNullable()
    t.string('org_id', 255).notNullable()
    t.bigInteger('updated_at').notNullable()
  })
  await knex.schema.createTable('user_roles', (t) => {
    t.string('user_id', 255).notNullable().references('users.id').onDelete('CASCADE')
    t.string('client_id', 255).notNullable().references('clients.id').onDelete('CASCADE')
    t.string('role', 255).notNullable()
    t.primary(['user_id', 'client_id', 'role'])
  })
  await knex.schema.createTable('signing_keys', (t) => {
    t.string('kid', 255).primary()
    t.text('private_jwk').notNullable()
    t.text('public_jwk').notNullable()
    t.bigInteger('created_at').notNullable()
    /** Signing starts at this time, so that cached JWKS see the key first. */
    t.bigInteger('activate_at').notNullable()
    /** Published until this time; null while the key signs. */
    t.bigInteger('retire_at').nullable()
  })
  await knex.schema.createTable('auth_codes', (t) => {
    t.string('digest', 64).primary()
    t.string('client_id', 255).notNullable()
    t.string('user_id', 255).notNullable()
    t.string('redirect_uri', 2048).notNullable()
    t.string('code_challenge', 128).notNullable()
    t.text('scope').notNullable()
    t.text('nonce').nullable()
    t.bigInteger('auth_time').notNullable()
    t.bigInteger('expires_at').notNullable()
    t.bigInteger('consumed_at').nullable()
  })
  await knex.schema.createTable('tokens', (t) => {
    /** jti of an access token, or the digest of a refresh token. */
    t.string('id', 255).primary()
    t.string('kind', 16).notNullable()
    t.string('client_id', 255).notNullable()
    t.string('subject', 255).notNullable()
    t.text('scope').notNullable()
    t.bigInteger('issued_at').notNullable()
    t.bigInteger('expires_at').notNullable()
    t.bigInteger('revoked_at').nullable()
    /** Digest of the authorization code this token descends from (replay revocation). */
    t.string('code_digest', 64).nullable().index()
    /** The refresh token an access token was minted from (revocation cascade). */
    t.string('parent_id', 255).nullable().index()
  })
  await knex.schema.createTable('sessions', (t) => {
    t.string('digest', 64).primary()
    t.string('user_id', 255).notNullable()
    t.bigInteger('auth_time').notNullable()
    t.bigInteger('expires_at').notNullable()
    t.bigInteger('ended_at').nullable()
  })
  await knex.schema.createTable('interactions', (t) => {
    t.string('id', 64).primary()
    /** The validated authorization request, as JSON. */
    t.text('request').notNullable()
    t.string('csrf_digest', 64).notNullable()
    t.bigInteger('expires_at').notNullable()
  })
  await knex.schema.createTable('rate_limits', (t) => {
    t.string('key', 512).notNullable()
    t.bigInteger('window_start').notNullable()
    t.integer('count').notNullable()
    t.primary(['key', 'window_start'])
  })
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'rate_limits',
    'interactions',
    'sessions',
    'tokens',
    'auth_codes',
    'signing_keys',
    'user_roles',
    'users',
    'branding',
    'clients',
  ]) {
    await knex.schema.dropTableIfExists(table)
  }
}
