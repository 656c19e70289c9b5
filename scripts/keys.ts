import { ConfigError, loadConfig } from '../server/config.ts'
import { describeKeys, rotateSigningKey } from '../server/keys/keystore.ts'
import { createKnexStore, migrate, openDatabase } from '../server/store/knex/index.ts'

const USAGE = `usage: npm run keys -- list | rotate   (or: idp-conformance keys list | rotate)

  list     every signing key with its status: pending (published, not signing yet), active
           (signs every token), retiring (published until its tokens expire), retired
  rotate   publish a new key; every server process signs with it after KEY_ACTIVATION_DELAY
           seconds (default 120), and the current key stays published until the tokens it
           signed have expired

Works on the database the server uses (DATABASE_URL, DATA_DIR, DATABASE_SCHEMA), also while the
server runs: servers re-read the keys every 10 seconds.`

const iso = (t: number | null): string => (t === null ? '-' : new Date(t * 1000).toISOString())

export interface Io {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

/** `keys list` / `keys rotate`; exit 0, or 2 for a usage or configuration error. */
export async function keysMain(
  argv: readonly string[],
  io: Io,
  env: NodeJS.ProcessEnv = process.env,
  now: () => number = () => Math.floor(Date.now() / 1000),
): Promise<number> {
  const [command, ...rest] = argv
  if ((command !== 'list' && command !== 'rotate') || rest.length > 0) {
    io.err(USAGE)
    return 2
  }
  let config
  try {
    config = loadConfig(env)
  } catch (err) {
    io.err(err instanceof ConfigError ? err.message : String(err))
    return 2
  }
  const knex = openDatabase(config.databaseUrl, config.databaseSchema)
  try {
    await migrate(knex, config.databaseSchema)
    const store = createKnexStore(knex)
    if (command === 'rotate') {
      const { added, retireAt } = await rotateSigningKey(store.keys, now(), {
        activationDelay: config.keyActivationDelay,
        tokenLifetime: Math.max(config.accessTokenTtl, config.idTokenTtl),
      })
      io.out(
        `published key ${added.kid}; every process signs with it from ${iso(added.activateAt)}`,
      )
      io.out(`the keys signing until then stay published until ${iso(retireAt)}`)
    }
    const keys = describeKeys(await store.keys.list(), now())
    if (keys.length === 0) {
      io.out('no signing keys yet: the server creates the first one when it starts')
      return 0
    }
    io.out(
      [
        'kid'.padEnd(43),
        'status  ',
        'created'.padEnd(24),
        'signs from'.padEnd(24),
        'published until',
      ].join(' '),
    )
    for (const k of keys)
      io.out(
        [
          k.kid,
          k.status.padEnd(8),
          iso(k.createdAt).padEnd(24),
          iso(k.activateAt).padEnd(24),
          iso(k.retireAt),
        ].join(' '),
      )
    return 0
  } catch (err) {
    io.err(`keys ${command} failed: ${(err as Error).message}`)
    return 1
  } finally {
    await knex.destroy()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await keysMain(process.argv.slice(2), {
    out: (l) => console.log(l),
    err: (l) => console.error(l),
  })
}
