import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { applyEdits, modify } from 'jsonc-parser'
import { clients as fixtureClients } from '../fixtures/clients.ts'
import { sha256Hex } from '../server/protocol/digest.ts'
import { readRegistrations, RegistrationError } from '../server/registry/registrations.ts'
import type { Client } from '../server/store/store.ts'
import { hashPassword } from '../server/users/passwords.ts'

const USAGE = `usage:
  idp-conformance clients add --file FILE --id CLIENT_ID [--name NAME]
      [--redirect-uri URI]... [--post-logout-redirect-uri URI]... [--grant GRANT]... [--scope SCOPE]...
      [--role ROLE=PERM,PERM]... [--client-role ROLE]...
      [--logo-url URL --brand-color #RRGGBB --privacy-policy-url URL --terms-of-service-url URL]
  idp-conformance users add --file FILE --username NAME --org ORG_ID [--password PASSWORD]
      [--name NAME] [--email EMAIL] [--email-verified] [--role CLIENT_ID:ROLE]... [--clients FILE]

Adds one entry to the file (created if missing; comments and layout kept), validates the
result as \`serve\` would, and prints a generated client secret or password once: the file
keeps only its hash. Restart the server to pick the change up.`

export interface Io {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } }

/** Appends `entry` to the list `key` of `file`, checks the whole file, then replaces it. */
async function append(
  file: string,
  key: 'clients' | 'users',
  entry: Record<string, unknown>,
  check: (tmp: string) => Promise<void>,
): Promise<void> {
  let text = existsSync(file) ? readFileSync(file, 'utf8') : `{\n  "${key}": []\n}\n`
  if (text.trim() === '') text = `{\n  "${key}": []\n}\n`
  const isArray = text.trimStart().startsWith('[')
  text = applyEdits(
    text,
    modify(text, isArray ? [-1] : [key, -1], entry, { ...FORMAT, isArrayInsertion: true }),
  )
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, text, { mode: 0o600 })
  try {
    await check(tmp)
    renameSync(tmp, file)
  } catch (err) {
    rmSync(tmp, { force: true })
    if (err instanceof RegistrationError)
      throw new RegistrationError(err.problems.map((p) => p.replaceAll(tmp, file)))
    throw err
  }
}

const list = (v: string[] | undefined): string[] | undefined => (v && v.length > 0 ? v : undefined)

async function clientsAdd(argv: string[], io: Io): Promise<number> {
  const { values: a } = parseArgs({
    args: argv,
    options: {
      file: { type: 'string' },
      id: { type: 'string' },
      name: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      'post-logout-redirect-uri': { type: 'string', multiple: true },
      grant: { type: 'string', multiple: true },
      scope: { type: 'string', multiple: true },
      role: { type: 'string', multiple: true },
      'client-role': { type: 'string', multiple: true },
      'logo-url': { type: 'string' },
      'brand-color': { type: 'string' },
      'privacy-policy-url': { type: 'string' },
      'terms-of-service-url': { type: 'string' },
    },
    strict: true,
  })
  if (!a.file || !a.id) throw new UsageError('clients add needs --file and --id')
  const brandingFlags = [
    'logo-url',
    'brand-color',
    'privacy-policy-url',
    'terms-of-service-url',
  ] as const
  const given = brandingFlags.filter((f) => a[f] !== undefined)
  if (given.length > 0 && given.length < brandingFlags.length)
    throw new UsageError(
      `branding needs all of ${brandingFlags.map((f) => `--${f}`).join(', ')} (missing: ${brandingFlags
        .filter((f) => a[f] === undefined)
        .map((f) => `--${f}`)
        .join(', ')})`,
    )
  const roles: Record<string, string[]> = {}
  for (const r of a.role ?? []) {
    const m = /^([^=]+)=(.*)$/.exec(r)
    if (!m?.[1]) throw new UsageError(`--role ${r}: expected ROLE=PERMISSION,PERMISSION`)
    roles[m[1]] = (m[2] ?? '').split(',').filter(Boolean)
  }
  const secret = randomBytes(32).toString('base64url')
  const entry: Record<string, unknown> = {
    client_id: a.id,
    client_secret_sha256: sha256Hex(secret),
    ...(a.name ? { name: a.name } : {}),
    redirect_uris: a['redirect-uri'] ?? [],
    ...(list(a['post-logout-redirect-uri'])
      ? { post_logout_redirect_uris: a['post-logout-redirect-uri'] }
      : {}),
    ...(list(a.grant) ? { grant_types: a.grant } : {}),
    ...(list(a.scope) ? { scopes: a.scope } : {}),
    ...(Object.keys(roles).length > 0 ? { roles } : {}),
    ...(list(a['client-role']) ? { client_roles: a['client-role'] } : {}),
    ...(given.length > 0
      ? {
          branding: {
            ...(a.name ? { application_name: a.name } : {}),
            logo_url: a['logo-url'],
            brand_color: a['brand-color'],
            privacy_policy_url: a['privacy-policy-url'],
            terms_of_service_url: a['terms-of-service-url'],
          },
        }
      : {}),
  }
  await append(a.file, 'clients', entry, async (tmp) => {
    await readRegistrations({ clientsFile: tmp })
  })
  io.out(`added client ${a.id} to ${a.file}`)
  io.out(`client_secret (shown once; the file keeps its SHA-256): ${secret}`)
  return 0
}

async function usersAdd(argv: string[], io: Io): Promise<number> {
  const { values: a } = parseArgs({
    args: argv,
    options: {
      file: { type: 'string' },
      username: { type: 'string' },
      password: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      'email-verified': { type: 'boolean' },
      org: { type: 'string' },
      role: { type: 'string', multiple: true },
      clients: { type: 'string' },
    },
    strict: true,
  })
  if (!a.file || !a.username || !a.org)
    throw new UsageError('users add needs --file, --username and --org')
  const roles: Record<string, string[]> = {}
  for (const r of a.role ?? []) {
    const m = /^([^:]+):(.+)$/.exec(r)
    if (!m?.[1] || !m[2]) throw new UsageError(`--role ${r}: expected CLIENT_ID:ROLE`)
    ;(roles[m[1]] ??= []).push(m[2])
  }
  const generated = a.password === undefined
  const password = a.password ?? randomBytes(12).toString('base64url')
  const entry: Record<string, unknown> = {
    username: a.username,
    // Argon2id at OWASP's minimum, the server's default; a server configured with another
    // algorithm or cost verifies it and rehashes it at the user's first sign-in
    password_hash: await hashPassword(password),
    ...(a.name ? { name: a.name } : {}),
    ...(a.email ? { email: a.email } : {}),
    ...(a['email-verified'] ? { email_verified: true } : {}),
    org_id: a.org,
    ...(Object.keys(roles).length > 0 ? { roles } : {}),
  }
  const fixtures = new Map<string, Client>(
    fixtureClients.map((c): [string, Client] => [c.id, { ...c, secretDigest: '' }]),
  )
  await append(a.file, 'users', entry, async (tmp) => {
    const fromFile = a.clients ? (await readRegistrations({ clientsFile: a.clients })).clients : []
    await readRegistrations({
      usersFile: tmp,
      existingClient: (id) =>
        Promise.resolve(fromFile.find((c) => c.client.id === id)?.client ?? fixtures.get(id)),
    })
  })
  io.out(`added user ${a.username} to ${a.file}`)
  if (generated) io.out(`password (shown once; the file keeps its argon2id hash): ${password}`)
  return 0
}

class UsageError extends Error {}

/** `idp-conformance clients add …` / `users add …`; exit 0, or 2 with one clear message. */
export async function registrationsMain(argv: readonly string[], io: Io): Promise<number> {
  const [what, verb, ...rest] = argv
  try {
    if (verb !== 'add' || (what !== 'clients' && what !== 'users')) throw new UsageError('')
    return what === 'clients' ? await clientsAdd(rest, io) : await usersAdd(rest, io)
  } catch (err) {
    if (err instanceof RegistrationError) io.err(err.message)
    else if (
      err instanceof UsageError ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    )
      io.err(`${(err as Error).message ? `${(err as Error).message}\n\n` : ''}${USAGE}`)
    else io.err(`failed: ${(err as Error).message}`)
    return 2
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await registrationsMain(process.argv.slice(2), {
    out: (l) => console.log(l),
    err: (l) => console.error(l),
  })
}
