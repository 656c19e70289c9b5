import type { Branding, Client, ClientRepository } from './store.ts'

/**
 * Client records cached in the process for `ttlSeconds`: every token, introspection and
 * revocation request authenticates its client, and on SQLite's one connection that lookup was
 * half of introspection's queries (README, Benchmarks). Clients change only when registrations
 * are applied at start, through this same repository, which drops the entry; another process
 * of a PostgreSQL deployment sees a restarted process's change within `ttlSeconds`. Unknown ids
 * are not cached, and the cache holds at most `maxEntries`, so random ids cannot grow it. A
 * cached client's branding is cached with it (every login page reads it: issue 33's sign-in
 * flood), and dropped with it.
 */
export function cachedClients(
  inner: ClientRepository,
  options: { ttlSeconds?: number; maxEntries?: number; now?: () => number } = {},
): ClientRepository {
  const ttl = (options.ttlSeconds ?? 10) * 1000
  const max = options.maxEntries ?? 1000
  const now = options.now ?? Date.now
  const cache = new Map<string, { client: Client; until: number }>()
  const brandings = new Map<string, { branding: Branding | undefined; until: number }>()
  return {
    async get(id) {
      const hit = cache.get(id)
      if (hit && hit.until > now()) return hit.client
      cache.delete(id)
      const client = await inner.get(id)
      if (client) {
        if (cache.size >= max) cache.delete(cache.keys().next().value ?? '')
        cache.set(id, { client, until: now() + ttl })
      }
      return client
    },
    async insertIfAbsent(client, branding) {
      cache.delete(client.id)
      brandings.delete(client.id)
      await inner.insertIfAbsent(client, branding)
    },
    async upsert(client, branding) {
      cache.delete(client.id)
      brandings.delete(client.id)
      await inner.upsert(client, branding)
    },
    async branding(id) {
      const hit = brandings.get(id)
      if (hit && hit.until > now()) return hit.branding
      brandings.delete(id)
      const branding = await inner.branding(id)
      // only for a client this cache holds (authorize has just read it), so ids that name no
      // client are never cached, whether or not a client has branding
      const known = cache.get(id)
      if (known && known.until > now()) {
        if (brandings.size >= max) brandings.delete(brandings.keys().next().value ?? '')
        brandings.set(id, { branding, until: known.until })
      }
      return branding
    },
  }
}
