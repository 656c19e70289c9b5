/**
 * The storage contracts. One implementation (knex: SQLite by default, PostgreSQL by URL); the
 * interfaces document what each method promises and let tests give the server a store that misbehaves.
 * Times are Unix seconds.
 */

export interface Client {
  readonly id: string
  /** SHA-256 hex digest of the client secret. */
  readonly secretDigest: string
  readonly name: string
  readonly redirectUris: readonly string[]
  readonly postLogoutRedirectUris: readonly string[]
  readonly grantTypes: readonly string[]
  /** Scopes the client may be granted. */
  readonly scopes: readonly string[]
  /** Scopes of a client_credentials request that names none. */
  readonly defaultScopes: readonly string[]
  /** The application's roles and the permissions each grants. */
  readonly roleDefinitions: Readonly<Record<string, readonly string[]>>
  /** Roles held by the client itself (client_credentials tokens). */
  readonly clientRoles: readonly string[]
}

export interface Branding {
  readonly logo_url: string
  readonly brand_color: string
  readonly application_name: string
  readonly privacy_policy_url: string
  readonly terms_of_service_url: string
}

export interface User {
  readonly id: string
  readonly username: string
  /** Argon2id (PHC string) or scrypt hash, see users/passwords.ts. */
  readonly passwordHash: string
  readonly name: string
  readonly picture: string
  readonly email: string
  readonly emailVerified: boolean
  readonly orgId: string
  readonly updatedAt: number
}

export interface SigningKey {
  readonly kid: string
  readonly privateJwk: Record<string, unknown>
  readonly publicJwk: Record<string, unknown>
  readonly createdAt: number
  readonly activateAt: number
  readonly retireAt: number | null
}

export interface StoredCode {
  readonly digest: string
  readonly clientId: string
  readonly userId: string
  readonly redirectUri: string
  readonly codeChallenge: string
  readonly scope: string
  readonly nonce: string | null
  readonly authTime: number
  readonly expiresAt: number
}

export type TokenKind = 'access' | 'refresh'

export interface StoredToken {
  /** jti of an access token, digest of a refresh token. */
  readonly id: string
  readonly kind: TokenKind
  readonly clientId: string
  readonly subject: string
  readonly scope: string
  readonly issuedAt: number
  readonly expiresAt: number
  readonly revokedAt: number | null
  readonly codeDigest: string | null
  readonly parentId: string | null
}

export interface Session {
  readonly digest: string
  readonly userId: string
  readonly authTime: number
  readonly expiresAt: number
}

export interface Interaction {
  readonly id: string
  readonly request: Record<string, unknown>
  readonly csrfDigest: string
  readonly expiresAt: number
}

export interface ClientRepository {
  get(id: string): Promise<Client | undefined>
  /** Inserts the client unless one with its id exists. */
  insertIfAbsent(client: Client, branding: Branding | undefined): Promise<void>
  branding(id: string): Promise<Branding | undefined>
  /**
   * Inserts the client or replaces every field of the one with its id, and its branding
   * (removed when undefined). For registrations read from a file at start.
   */
  upsert(client: Client, branding: Branding | undefined): Promise<void>
}

export interface UserRepository {
  get(id: string): Promise<User | undefined>
  byUsername(username: string): Promise<User | undefined>
  /** Roles the user holds in the client's application. */
  roles(userId: string, clientId: string): Promise<string[]>
  /** Inserts the user and their roles unless a user with that id exists. */
  insertIfAbsent(user: User, roles: Readonly<Record<string, readonly string[]>>): Promise<void>
  /** Inserts the user or replaces the one with its id, and replaces all of their roles. */
  upsert(user: User, roles: Readonly<Record<string, readonly string[]>>): Promise<void>
  /**
   * Replaces the user's password hash if it is still `current` (a rehash with stronger
   * parameters must not undo a change made meanwhile). Returns whether it was replaced.
   */
  replacePasswordHash(id: string, current: string, next: string): Promise<boolean>
  /**
   * The distinct algorithm-and-cost prefixes of the stored password hashes
   * (users/passwords.ts, hashCostPrefix): what a failed sign-in must be padded to.
   */
  hashCosts(): Promise<string[]>
}

export interface KeyRepository {
  /** Every stored key, newest first. */
  list(): Promise<SigningKey[]>
  /**
   * Inserts the key only when the table is empty, in one transaction, so that two processes
   * booting on an empty database end with one key set. Returns whether it was inserted.
   */
  insertIfNone(key: SigningKey): Promise<boolean>
  insert(key: SigningKey): Promise<void>
  /**
   * Key rotation in one transaction: every key still without a retirement time gets `retireAt`,
   * and `key` is inserted.
   */
  rotate(key: SigningKey, retireAt: number): Promise<void>
}

export interface CodeRepository {
  insert(code: StoredCode): Promise<void>
  /**
   * Marks the code used. Atomic: of concurrent callers with the same digest exactly one gets
   * `{ firstUse: true }`. A replay gets `{ firstUse: false }` so the grant can revoke what the
   * code issued (RFC 6749 §4.1.2). Unknown digest: undefined. With `binding`, only a caller
   * presenting the code's own client and redirect_uri can use it: another gets
   * `{ firstUse: false, unbound: true }` and leaves the code unused for its rightful redemption.
   */
  consume(
    digest: string,
    now: number,
    binding?: CodeBinding,
  ): Promise<{ code: StoredCode; firstUse: boolean; unbound?: boolean } | undefined>
}

/** What a code is bound to besides its PKCE challenge (RFC 6749 §4.1.3). */
export interface CodeBinding {
  readonly clientId: string
  readonly redirectUri: string
}

export interface TokenRepository {
  insert(token: StoredToken): Promise<void>
  get(id: string): Promise<StoredToken | undefined>
  /** Revokes one token and, for a refresh token, the access tokens minted from it. */
  revoke(id: string, now: number): Promise<void>
  /** Revokes every token issued from an authorization code (code replay). */
  revokeByCode(codeDigest: string, now: number): Promise<void>
}

export interface SessionRepository {
  insert(session: Session): Promise<void>
  /** The live session with this digest (not ended, not expired), or undefined. */
  get(digest: string, now: number): Promise<Session | undefined>
  end(digest: string, now: number): Promise<void>
}

export interface InteractionRepository {
  insert(interaction: Interaction): Promise<void>
  get(id: string, now: number): Promise<Interaction | undefined>
  /** Deletes it; atomic, returns whether this caller deleted it. */
  take(id: string): Promise<boolean>
}

export interface RateLimitRepository {
  /**
   * Adds one hit to the counter of `key` in the window starting at `windowStart` (and lasting
   * `windowSeconds`); returns the new count.
   */
  hit(key: string, windowStart: number, windowSeconds: number): Promise<number>
  /** The counter of `key` in the window starting at `windowStart`, without adding a hit (0 if none). */
  count(key: string, windowStart: number): Promise<number>
}

/** How long purged rows are kept past their expiry, seconds. */
export interface PurgePolicy {
  /**
   * A spent code is kept while the tokens it issued may live, so that a replay can still
   * revoke them (RFC 6749 §4.1.2): the longest token lifetime.
   */
  readonly spentCodeRetention: number
  /** Rate-limit windows older than this are over: the longest window. */
  readonly rateLimitHorizon: number
  /** Verification leeway: expired tokens are kept this much longer. */
  readonly tokenGrace: number
}

export interface Store {
  readonly clients: ClientRepository
  readonly users: UserRepository
  readonly keys: KeyRepository
  readonly codes: CodeRepository
  readonly tokens: TokenRepository
  readonly sessions: SessionRepository
  readonly interactions: InteractionRepository
  readonly rateLimits: RateLimitRepository
  /**
   * Deletes what can no longer matter: expired codes, tokens, sessions, interactions,
   * rate-limit windows and retired signing keys. Returns the rows deleted per table.
   */
  purge(now: number, policy: PurgePolicy): Promise<Record<string, number>>
  /** A cheap real query, for readiness. */
  ping(): Promise<void>
  close(): Promise<void>
}
