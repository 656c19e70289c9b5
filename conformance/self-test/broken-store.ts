import type { Store, StoredCode } from '../../server/store/store.ts'

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
