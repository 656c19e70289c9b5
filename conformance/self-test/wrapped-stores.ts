import { afterEach } from 'vitest'
import { createKnexStore, migrate, openDatabase } from '../../server/store/knex/index.ts'
import type { Store } from '../../server/store/store.ts'

/**
 * For the tests of the self-test's store wrappers: opens a fresh in-memory store, wrapped as a
 * sabotage wraps the embedded server's, and closes every store a test opened after it (registers
 * the file's afterEach).
 */
export function wrappedStores(): (wrap: (store: Store) => Store) => Promise<Store> {
  const opened: Store[] = []
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close()
  })
  return async (wrap) => {
    const knex = openDatabase('sqlite::memory:')
    await migrate(knex)
    const store = createKnexStore(knex)
    opened.push(store)
    return wrap(store)
  }
}
