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
