import { readFile, stat } from 'node:fs/promises'
import Joi from 'joi'
import { sha256Hex } from '../protocol/digest.ts'
import { checkRegistrableRedirectUri } from '../protocol/redirect-uri.ts'
import type { Branding, Client, Store, User } from '../store/store.ts'
import { hashPassword, isReadableHash, type PasswordHashing } from '../users/passwords.ts'
import { parseJsonDocument, RegistrationError, showPath, type JsonDocument } from './json-file.ts'

/**
 * Integrators' own clients and users, read from JSON files at start (`serve --clients FILE
 * --users FILE`, or CLIENTS_FILE / USERS_FILE). Validated as a whole before anything is
 * written, every problem reported with its file, line and field; plain secrets and passwords
 * are hashed on load. Each start upserts every entry, so edits take effect on restart.
 */

export { RegistrationError } from './json-file.ts'

const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials'] as const
/** RFC 6749 App. A.4 scope-token. */
const scopeToken = Joi.string()
  .pattern(/^[\x21\x23-\x5B\x5D-\x7E]+$/)
  .messages({
    'string.pattern.base':
      '{{#label}} must be a scope token: printable ASCII without spaces, " or \\ (RFC 6749 §3.3)',
  })
/** RFC 6749 App. A.1 client_id: VSCHAR. */
const clientId = Joi.string()
  .max(255)
  .pattern(/^[\x20-\x7E]+$/)
  .messages({
    'string.pattern.base': '{{#label}} must be printable ASCII (RFC 6749 App. A.1)',
  })
const redirectUri = Joi.string().custom((value: string, helpers) => {
  const verdict = checkRegistrableRedirectUri(value)
  return verdict.error ? helpers.message({ custom: `{{#label}} ${verdict.error}` }) : value
})
const httpsUrl = Joi.string().uri({ scheme: ['https', 'http'] })

const clientSchema = Joi.object<ClientEntry>({
  client_id: clientId.required(),
  client_secret: Joi.string().min(1).max(255),
  client_secret_sha256: Joi.string().hex().length(64).lowercase(),
  name: Joi.string().min(1).max(200),
  redirect_uris: Joi.array().items(redirectUri).unique().default([]),
  post_logout_redirect_uris: Joi.array().items(redirectUri).unique().default([]),
  grant_types: Joi.array()
    .items(Joi.string().valid(...GRANTS))
    .min(1)
    .unique()
    .default(['authorization_code', 'refresh_token']),
  scopes: Joi.array()
    .items(scopeToken)
    .unique()
    .default(['openid', 'profile', 'email', 'offline_access']),
  default_scopes: Joi.array().items(scopeToken).unique().default([]),
  roles: Joi.object()
    .pattern(Joi.string().min(1), Joi.array().items(scopeToken).unique())
    .default({}),
  client_roles: Joi.array().items(Joi.string()).unique().default([]),
  branding: Joi.object({
    application_name: Joi.string().min(1).max(200),
    logo_url: httpsUrl.required(),
    brand_color: Joi.string()
      .pattern(/^#[0-9A-Fa-f]{6}$/)
      .required()
      .messages({ 'string.pattern.base': '{{#label}} must be a colour like #1A73E8' }),
    privacy_policy_url: httpsUrl.required(),
    terms_of_service_url: httpsUrl.required(),
  }),
})
  .xor('client_secret', 'client_secret_sha256')
  .messages({
    'object.missing':
      '{{#label}} needs client_secret (hashed on load) or client_secret_sha256 (as written by `clients add`)',
    'object.xor': '{{#label}} has both client_secret and client_secret_sha256; keep one',
  })

const userSchema = Joi.object<UserEntry>({
  username: Joi.string().min(1).max(64).required(),
  password: Joi.string().min(1).max(1024),
  // a hash the server verifies, its parameters within the bounds a stored hash may ask for
  password_hash: Joi.string()
    .max(1024)
    .custom((value: string, helpers) =>
      isReadableHash(value) ? value : helpers.error('string.pattern.base'),
    )
    .messages({
      'string.max': '{{#label}} must be an argon2id or scrypt hash as written by `users add`',
      'string.pattern.base':
        '{{#label}} must be an argon2id or scrypt hash as written by `users add`',
    }),
  sub: Joi.string()
    .max(255)
    .pattern(/^[\x21-\x7E]+$/),
  name: Joi.string().max(200).allow('').default(''),
  email: Joi.string().email({ tlds: false }).allow('').default(''),
  email_verified: Joi.boolean().default(false),
  picture: httpsUrl.allow('').default(''),
  org_id: Joi.string().min(1).max(200).required(),
  roles: Joi.object().pattern(Joi.string(), Joi.array().items(Joi.string()).unique()).default({}),
  updated_at: Joi.number().integer().min(0),
  permissions: Joi.any().forbidden().messages({
    'any.unknown':
      "is not allowed here: permissions come from roles (ARCHITECTURE.md): list them under the client's roles and give the user that role",
  }),
})
  .xor('password', 'password_hash')
  .messages({
    'object.missing': '{{#label}} needs password (hashed on load) or password_hash',
    'object.xor': '{{#label}} has both password and password_hash; keep one',
  })

type ClientEntry = {
  client_id: string
  client_secret?: string
  client_secret_sha256?: string
  name?: string
  redirect_uris: string[]
  post_logout_redirect_uris: string[]
  grant_types: string[]
  scopes: string[]
  default_scopes: string[]
  roles: Record<string, string[]>
  client_roles: string[]
  branding?: Partial<Branding>
}

type UserEntry = {
  username: string
  password?: string
  password_hash?: string
  sub?: string
  name: string
  email: string
  email_verified: boolean
  picture: string
  org_id: string
  roles: Record<string, string[]>
  updated_at?: number
  /** Refused with an explanation: permissions come from the client's roles. */
  permissions?: never
}

export interface ClientRegistration {
  readonly client: Client
  readonly branding: Branding | undefined
}

export interface UserRegistration {
  readonly user: User
  readonly roles: Readonly<Record<string, readonly string[]>>
}

export interface Registrations {
  readonly clients: readonly ClientRegistration[]
  readonly users: readonly UserRegistration[]
  /** Registrable but worth a look: one line each, with file and line. */
  readonly warnings: readonly string[]
}

/** The list under `key` of a file that is `{ "<key>": [...] }` or a bare array. */
function entries(
  doc: JsonDocument,
  key: string,
  problems: string[],
): [unknown[], (string | number)[]] {
  const v = doc.value
  if (Array.isArray(v)) return [v, []]
  if (v && typeof v === 'object' && Array.isArray((v as Record<string, unknown>)[key]))
    return [(v as Record<string, unknown[]>)[key] ?? [], [key]]
  problems.push(`${doc.where([])}: expected { "${key}": [ ... ] } or a JSON array`)
  return [[], []]
}

function validate<T>(
  schema: Joi.ObjectSchema<T>,
  doc: JsonDocument,
  base: (string | number)[],
  value: unknown,
  problems: string[],
): T | undefined {
  const result = schema.validate(value, {
    abortEarly: false,
    convert: false,
    errors: { wrap: { label: false } },
  })
  for (const d of result.error?.details ?? []) {
    const path = [...base, ...d.path]
    const field = showPath(path)
    const label = d.context?.label ?? '\0'
    const message = d.message.startsWith(label)
      ? d.message.slice(label.length).trimStart()
      : d.message
    problems.push(`${doc.where(path)}: ${field}: ${message}`)
  }
  return result.error ? undefined : result.value
}

export interface ReadOptions {
  readonly clientsFile?: string | undefined
  readonly usersFile?: string | undefined
  /** Clients already in the store (fixtures), which users' roles may refer to. */
  readonly existingClient?: (id: string) => Promise<Client | undefined>
  /** The user that holds a username in the store, to refuse a clash with another id. */
  readonly existingUser?: (username: string) => Promise<User | undefined>
  /**
   * Algorithm and cost for the entries given a clear `password` (default Argon2id at OWASP's
   * minimum).
   */
  readonly hashing?: PasswordHashing
}

async function readDoc(file: string): Promise<JsonDocument> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new RegistrationError([
      `${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    ])
  }
  return parseJsonDocument(file, text)
}

/** Reads and validates both files; throws one RegistrationError listing every problem. */
export async function readRegistrations(options: ReadOptions): Promise<Registrations> {
  const problems: string[] = []
  const warnings: string[] = []
  const clients: ClientRegistration[] = []
  const users: UserRegistration[] = []
  const fileClients = new Map<string, Client>()

  if (options.clientsFile) {
    const doc = await readDoc(options.clientsFile)
    const [list, base] = entries(doc, 'clients', problems)
    list.forEach((raw, i) => {
      const at = [...base, i]
      const e = validate<ClientEntry>(clientSchema, doc, at, raw, problems)
      if (!e) return
      const here = (...p: (string | number)[]): string =>
        `${doc.where([...at, ...p])}: ${showPath([...at, ...p])}`
      if (fileClients.has(e.client_id))
        problems.push(
          `${here('client_id')}: client_id '${e.client_id}' is registered twice in this file`,
        )
      if (e.grant_types.includes('authorization_code') && e.redirect_uris.length === 0)
        problems.push(
          `${here('redirect_uris')}: a client with the authorization_code grant needs at least one redirect URI`,
        )
      if (e.grant_types.includes('refresh_token') && !e.grant_types.includes('authorization_code'))
        problems.push(
          `${here('grant_types')}: refresh_token needs authorization_code: refresh tokens are only issued by the code flow (INTERFACE.md §2.2)`,
        )
      e.default_scopes.forEach((s, j) => {
        if (!e.scopes.includes(s))
          problems.push(`${here('default_scopes', j)}: '${s}' is not in this client's scopes`)
      })
      e.client_roles.forEach((r, j) => {
        if (!(r in e.roles))
          problems.push(
            `${here('client_roles', j)}: role '${r}' is not defined under this client's roles`,
          )
      })
      for (const [role, permissions] of Object.entries(e.roles))
        permissions.forEach((p, j) => {
          if (!e.scopes.includes(p))
            warnings.push(
              `${here('roles', role, j)}: permission '${p}' is not one of the client's scopes; tokens will carry it as a permission only`,
            )
        })
      ;[...e.redirect_uris, ...e.post_logout_redirect_uris].forEach((uri) => {
        const w = checkRegistrableRedirectUri(uri).warning
        if (w) warnings.push(`${here('redirect_uris')}: '${uri}' ${w}`)
      })
      const name = e.name ?? e.branding?.application_name ?? e.client_id
      const client: Client = {
        id: e.client_id,
        secretDigest: e.client_secret_sha256 ?? sha256Hex(e.client_secret ?? ''),
        name,
        redirectUris: e.redirect_uris,
        postLogoutRedirectUris: e.post_logout_redirect_uris,
        grantTypes: e.grant_types,
        scopes: e.scopes,
        defaultScopes: e.default_scopes,
        roleDefinitions: e.roles,
        clientRoles: e.client_roles,
      }
      if (!e.branding)
        warnings.push(
          `${here()}: client '${e.client_id}' has no branding: /auth/branding answers 404 for it and its login page is unbranded`,
        )
      fileClients.set(client.id, client)
      clients.push({
        client,
        branding: e.branding && {
          application_name: e.branding.application_name ?? name,
          logo_url: e.branding.logo_url ?? '',
          brand_color: e.branding.brand_color ?? '',
          privacy_policy_url: e.branding.privacy_policy_url ?? '',
          terms_of_service_url: e.branding.terms_of_service_url ?? '',
        },
      })
    })
  }

  if (options.usersFile) {
    const doc = await readDoc(options.usersFile)
    const mtime = Math.floor((await stat(options.usersFile)).mtimeMs / 1000)
    const [list, base] = entries(doc, 'users', problems)
    const usernames = new Set<string>()
    const subs = new Set<string>()
    for (const [i, raw] of list.entries()) {
      const at = [...base, i]
      const e = validate<UserEntry>(userSchema, doc, at, raw, problems)
      if (!e) continue
      const here = (...p: (string | number)[]): string =>
        `${doc.where([...at, ...p])}: ${showPath([...at, ...p])}`
      const id = e.sub ?? `usr_${sha256Hex(`username:${e.username}`).slice(0, 16)}`
      if (usernames.has(e.username))
        problems.push(`${here('username')}: username '${e.username}' appears twice in this file`)
      if (subs.has(id)) problems.push(`${here('sub')}: sub '${id}' appears twice in this file`)
      usernames.add(e.username)
      subs.add(id)
      // RFC 9700 §4.15: a client_credentials token's sub is its client_id, so a user with that
      // sub could be impersonated by the client at every resource server
      if (fileClients.has(id) || (await options.existingClient?.(id)))
        problems.push(
          `${here(e.sub !== undefined ? 'sub' : 'username')}: sub '${id}' is the client_id of a registered client, whose client_credentials tokens carry it as sub: a resource server could take that client for this user (RFC 9700 §4.15); pick another sub`,
        )
      const holder = await options.existingUser?.(e.username)
      if (holder && holder.id !== id)
        problems.push(
          `${here('username')}: username '${e.username}' belongs to another user (sub ${holder.id}), e.g. a fixture user; pick another username, give this entry "sub": "${holder.id}", or start with LOAD_FIXTURES=false on a new DATA_DIR`,
        )
      for (const [cid, roles] of Object.entries(e.roles)) {
        const client = fileClients.get(cid) ?? (await options.existingClient?.(cid))
        if (!client) {
          problems.push(
            `${here('roles', cid)}: client '${cid}' is not registered (neither in the clients file nor a fixture)`,
          )
          continue
        }
        roles.forEach((r, j) => {
          if (!(r in client.roleDefinitions))
            problems.push(
              `${here('roles', cid, j)}: role '${r}' is not defined by client '${cid}' (defined: ${Object.keys(client.roleDefinitions).join(', ') || 'none'})`,
            )
        })
      }
      users.push({
        user: {
          id,
          username: e.username,
          passwordHash: e.password_hash ?? (await hashPassword(e.password ?? '', options.hashing)),
          name: e.name,
          picture: e.picture,
          email: e.email,
          emailVerified: e.email_verified,
          orgId: e.org_id,
          updatedAt: e.updated_at ?? mtime,
        },
        roles: e.roles,
      })
    }
  }
  if (problems.length > 0) throw new RegistrationError(problems)
  return { clients, users, warnings }
}

/** Writes validated registrations: clients first, so users' roles refer to them. */
export async function applyRegistrations(
  store: Store,
  registrations: Registrations,
): Promise<void> {
  for (const { client, branding } of registrations.clients)
    await store.clients.upsert(client, branding)
  for (const { user, roles } of registrations.users) await store.users.upsert(user, roles)
}
