import { isIP } from 'node:net'
import type { Client, Store, StoredCode } from '../../server/store/store.ts'

/**
 * The self-test's broken stores (issue 34): wrappers of the reference server's store, given to
 * the embedded server as its store (a sabotage's `store`), so that the server misbehaves
 * because what it keeps or reads was changed on the way, never by a switch inside `server/`.
 * kit.ts re-exports them.
 */

/** A store given to the server instead of the one it was built with. */
export type StoreWrapper = (store: Store) => Store

/** A store that changes each authorization code before it keeps it. */
export const codesKeptAs =
  (change: (code: StoredCode) => StoredCode) =>
  (store: Store): Store => ({
    ...store,
    codes: {
      insert: (code) => store.codes.insert(change(code)),
      consume: (digest, now, binding) => store.codes.consume(digest, now, binding),
    },
  })

/** A store whose client records are read changed (what the server is told is registered). */
export const clientsReadAs =
  (change: (client: Client) => Client) =>
  (store: Store): Store => ({
    ...store,
    clients: {
      get: async (id) => {
        const client = await store.clients.get(id)
        return client && change(client)
      },
      insertIfAbsent: (client, branding) => store.clients.insertIfAbsent(client, branding),
      branding: (id) => store.clients.branding(id),
      upsert: (client, branding) => store.clients.upsert(client, branding),
    },
  })

/** A store that hands out refresh tokens as if they never expired (RT-11). */
export const refreshTokensNeverExpire = (store: Store): Store => ({
  ...store,
  tokens: {
    ...store.tokens,
    async get(id) {
      const stored = await store.tokens.get(id)
      return stored?.kind === 'refresh' ? { ...stored, expiresAt: Infinity } : stored
    },
  },
})

/** A store in which ending a session leaves it live: logout clears nothing at the server. */
export const sessionsOutliveLogout = (store: Store): Store => ({
  ...store,
  sessions: { ...store.sessions, end: () => Promise.resolve() },
})

/**
 * A store that forgets which refresh token an access token was minted from, for every access
 * token but the first of each refresh token (the one the authorization code issued beside it):
 * revoking the refresh token leaves the tokens minted from it live (REV-03).
 */
export const refreshMintsOrphans = (store: Store): Store => {
  const firstChildSeen = new Set<string>()
  return {
    ...store,
    tokens: {
      ...store.tokens,
      insert(token) {
        const parent = token.kind === 'access' ? token.parentId : null
        if (parent === null) return store.tokens.insert(token)
        if (!firstChildSeen.has(parent)) {
          firstChildSeen.add(parent)
          return store.tokens.insert(token)
        }
        return store.tokens.insert({ ...token, parentId: null })
      },
    },
  }
}

/** A store whose rate-limit counters are renamed (or, for undefined, never count). */
const renamedCounters = (store: Store, rename: (key: string) => string | undefined): Store => ({
  ...store,
  rateLimits: {
    // an uncounted hit is always the first of its window
    hit(key, windowStart, window) {
      const to = rename(key)
      return to === undefined ? Promise.resolve(1) : store.rateLimits.hit(to, windowStart, window)
    },
    count(key, windowStart) {
      const to = rename(key)
      return to === undefined ? Promise.resolve(0) : store.rateLimits.count(to, windowStart)
    },
  },
})

/**
 * The server's counter of failed client authentications, `<group>:authfail:<address>:<client_id>`,
 * split into its parts; `clientId` undefined for the per-address total `<group>:authfail:<address>`.
 */
function failureCounter(key: string): { group: string; clientId: string | undefined } | undefined {
  const m = /^(\w+):authfail:(.*)$/.exec(key)
  if (!m) return undefined
  const [, group = '', rest = ''] = m
  if (isIP(rest)) return { group, clientId: undefined }
  // the address is the longest prefix before a colon that is an IP address (IPv6 has colons)
  for (let at = rest.lastIndexOf(':'); at > 0; at = rest.lastIndexOf(':', at - 1))
    if (isIP(rest.slice(0, at))) return { group, clientId: rest.slice(at + 1) }
  return undefined
}

/**
 * A store that charges failed client authentications to the client_id they name, whatever
 * their source, and keeps no per-address total: anyone can lock a client out (SEC-01).
 */
export const failuresChargedToClient = (store: Store): Store =>
  renamedCounters(store, (key) => {
    const counter = failureCounter(key)
    if (!counter) return key
    return counter.clientId === undefined
      ? undefined
      : `${counter.group}:client:${counter.clientId}:failures`
  })

/**
 * A store in which the per-client counters of the token, introspection and revocation
 * endpoints (`<group>:client:…` and `<group>:authfail:…`) never count: what is left to limit
 * those endpoints is what a sabotage adds (rate-limit.ts's ipLimitOnClientEndpoints).
 */
export const clientCountersUncounted = (store: Store): Store =>
  renamedCounters(store, (key) => (/^\w+:(client|authfail):/.test(key) ? undefined : key))

/**
 * A store in which the rate-limit counters whose keys `uncounted` matches never count (every hit
 * the first of its window): `/^userinfo:/` is a user-info endpoint that is never limited,
 * `/^public:/` the public documents (discovery, JWKS, branding), `/^introspect:client:/` the
 * introspection requests of authenticated clients.
 */
export const countersUncounted =
  (uncounted: RegExp) =>
  (store: Store): Store =>
    renamedCounters(store, (key) => (uncounted.test(key) ? undefined : key))
