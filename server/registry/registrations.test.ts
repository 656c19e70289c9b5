import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { sha256Hex } from '../protocol/digest.ts'
import { hashPassword, TEST_SCRYPT, verifyPassword } from '../users/passwords.ts'
import { readRegistrations, RegistrationError } from './registrations.ts'

const dir = mkdtempSync(join(tmpdir(), 'registrations-'))
let n = 0
const file = (text: string): string => {
  const path = join(dir, `f${++n}.json`)
  writeFileSync(path, text)
  return path
}

const problemsOf = async (options: Parameters<typeof readRegistrations>[0]): Promise<string[]> => {
  try {
    await readRegistrations(options)
  } catch (err) {
    if (err instanceof RegistrationError) return [...err.problems]
    throw err
  }
  throw new Error('expected a RegistrationError')
}

const CLIENTS = `{
  // the integrator's web app
  "clients": [
    {
      "client_id": "my-app",
      "client_secret": "my-secret",
      "redirect_uris": ["http://127.0.0.1:3000/cb"],
      "roles": { "editor": ["read:notes", "write:notes"] },
      "scopes": ["openid", "profile", "email", "offline_access", "read:notes", "write:notes"]
    }
  ]
}
`

describe('clients and users files', () => {
  test("a user's sub may not be a client_id (RFC 9700 §4.15: client impersonating a user)", async () => {
    const clientsFile = file(CLIENTS)
    const usersFile = file(
      JSON.stringify({
        users: [{ username: 'dave', password: 'pw', sub: 'my-app', org_id: 'org-1' }],
      }),
    )
    const problems = await problemsOf({
      clientsFile,
      usersFile,
      existingClient: (id) =>
        Promise.resolve(id === 'service-client' ? ({ id } as never) : undefined),
    })
    expect(problems.join('\n')).toMatch(/sub 'my-app' is the client_id of a registered client/)
    const fixtureClash = file(
      JSON.stringify({
        users: [{ username: 'erin', password: 'pw', sub: 'service-client', org_id: 'org-1' }],
      }),
    )
    expect(
      (
        await problemsOf({
          usersFile: fixtureClash,
          existingClient: (id) =>
            Promise.resolve(id === 'service-client' ? ({ id } as never) : undefined),
        })
      ).join('\n'),
    ).toMatch(/sub 'service-client' is the client_id/)
  })

  test('a valid pair loads, secrets and passwords hashed, defaults filled in', async () => {
    const clientsFile = file(CLIENTS)
    const usersFile = file(
      JSON.stringify({
        users: [
          {
            username: 'carol',
            password: 'carol-pw',
            email: 'carol@example.com',
            org_id: 'org-7',
            roles: { 'my-app': ['editor'] },
          },
        ],
      }),
    )
    const r = await readRegistrations({ clientsFile, usersFile })
    const [c] = r.clients
    expect(c?.client).toMatchObject({
      id: 'my-app',
      name: 'my-app',
      secretDigest: sha256Hex('my-secret'),
      grantTypes: ['authorization_code', 'refresh_token'],
      defaultScopes: [],
      roleDefinitions: { editor: ['read:notes', 'write:notes'] },
    })
    expect(JSON.stringify(r)).not.toContain('my-secret')
    expect(JSON.stringify(r)).not.toContain('carol-pw')
    const [u] = r.users
    expect(u?.user).toMatchObject({ username: 'carol', orgId: 'org-7', emailVerified: false })
    expect(u?.user.id).toMatch(/^usr_[0-9a-f]{16}$/)
    expect(await verifyPassword('carol-pw', u?.user.passwordHash ?? '')).toBe(true)
    expect(u?.roles).toEqual({ 'my-app': ['editor'] })
    // no branding is allowed, and said
    expect(r.warnings.join('\n')).toMatch(/:4: clients\[0\]: client 'my-app' has no branding/)
  })

  test('every problem is reported with file, line and field', async () => {
    const clientsFile = file(`{
  "clients": [
    {
      "client_id": "a",
      "client_secret": "s",
      "redirect_uris": ["http://app.example/cb"],
      "grant_types": ["authorization_code", "password"]
    },
    {
      "client_id": "a",
      "redirect_uris": ["https://x.example/cb#f"],
      "default_scopes": ["admin"]
    }
  ]
}`)
    const problems = await problemsOf({ clientsFile })
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^${clientsFile}:6: clients\\[0\\]\\.redirect_uris\\[0\\]: must use https.*RFC 8252 §7\\.3`,
          ),
        ),
        expect.stringMatching(
          new RegExp(`^${clientsFile}:7: clients\\[0\\]\\.grant_types\\[1\\]: must be one of`),
        ),
        expect.stringMatching(new RegExp(`^${clientsFile}:9: clients\\[1\\]: needs client_secret`)),
        expect.stringMatching(
          new RegExp(
            `^${clientsFile}:11: clients\\[1\\]\\.redirect_uris\\[0\\]: must not contain a fragment`,
          ),
        ),
      ]),
    )
    expect(problems).toHaveLength(4)
  })

  test('cross-field rules name the field that breaks them', async () => {
    const clientsFile = file(`{"clients": [
  {"client_id": "a", "client_secret": "s", "redirect_uris": ["https://a.example/cb"]},
  {"client_id": "a", "client_secret": "s", "redirect_uris": ["https://a.example/cb"]},
  {"client_id": "b", "client_secret": "s", "grant_types": ["authorization_code"]},
  {"client_id": "c", "client_secret": "s", "grant_types": ["client_credentials"],
   "scopes": ["x"], "default_scopes": ["y"], "client_roles": ["ghost"]}
]}`)
    const problems = (await problemsOf({ clientsFile })).map((p) => p.slice(clientsFile.length))
    expect(problems).toEqual([
      ":3: clients[1].client_id: client_id 'a' is registered twice in this file",
      ':4: clients[2].redirect_uris: a client with the authorization_code grant needs at least one redirect URI',
      ":6: clients[3].default_scopes[0]: 'y' is not in this client's scopes",
      ":6: clients[3].client_roles[0]: role 'ghost' is not defined under this client's roles",
    ])
  })

  test('users: unknown clients and roles, duplicates, permissions and clashes', async () => {
    const clientsFile = file(CLIENTS)
    const usersFile = file(`[
  {"username": "dan", "password": "p", "org_id": "o", "roles": {"my-app": ["editor", "admin"]}},
  {"username": "dan", "password": "p", "org_id": "o", "roles": {"nope": ["x"]}},
  {"username": "eve", "password_hash": "plain", "org_id": "o", "permissions": ["x"]},
  {"username": "alice", "password": "p"}
]`)
    const problems = (
      await problemsOf({
        clientsFile,
        usersFile,
        existingUser: (u) =>
          Promise.resolve(u === 'alice' ? ({ id: 'usr_fixture' } as never) : undefined),
      })
    ).map((p) => p.slice(usersFile.length))
    expect(problems).toEqual([
      ":2: [0].roles.my-app[1]: role 'admin' is not defined by client 'my-app' (defined: editor)",
      ":3: [1].username: username 'dan' appears twice in this file",
      expect.stringMatching(/^:3: \[1\]\.sub: sub 'usr_[0-9a-f]{16}' appears twice in this file$/),
      ":3: [1].roles.nope: client 'nope' is not registered (neither in the clients file nor a fixture)",
      ':4: [2].password_hash: must be an argon2id or scrypt hash as written by `users add`',
      expect.stringMatching(
        /^:4: \[2\]\.permissions: is not allowed here: permissions come from roles/,
      ),
      ':5: [3].org_id: is required',
    ])
  })

  test('password_hash: an Argon2id or scrypt hash the server verifies; parameters past the bounds are refused at load', async () => {
    const argon2id = await hashPassword('fran-pw')
    const scrypt = await hashPassword('gil-pw', { algorithm: 'scrypt', ...TEST_SCRYPT })
    const usersFile = file(
      JSON.stringify({
        users: [
          { username: 'fran', password_hash: argon2id, org_id: 'o' },
          { username: 'gil', password_hash: scrypt, org_id: 'o' },
        ],
      }),
    )
    const r = await readRegistrations({ usersFile })
    expect(r.users.map((u) => u.user.passwordHash)).toEqual([argon2id, scrypt])
    expect(await verifyPassword('fran-pw', r.users[0]?.user.passwordHash ?? '')).toBe(true)
    expect(await verifyPassword('gil-pw', r.users[1]?.user.passwordHash ?? '')).toBe(true)

    const [, , , , salt, key] = argon2id.split('$')
    const greedy = file(
      JSON.stringify({
        users: [
          // 4 GiB of memory: verified at every sign-in, it would be a denial of service
          {
            username: 'hal',
            password_hash: `$argon2id$v=19$m=4194304,t=2,p=1$${salt}$${key}`,
            org_id: 'o',
          },
          { username: 'ida', password_hash: 'scrypt$1073741824$8$1$AAAA$AAAA', org_id: 'o' },
        ],
      }),
    )
    expect(await problemsOf({ usersFile: greedy })).toEqual([
      expect.stringMatching(/\[0\]\.password_hash: must be an argon2id or scrypt hash/),
      expect.stringMatching(/\[1\]\.password_hash: must be an argon2id or scrypt hash/),
    ])
  })

  test('a syntax error names its line; a missing file says so', async () => {
    const bad = file('{\n  "clients": [\n    { "client_id": "a", }\n  ]\n}')
    expect(await problemsOf({ clientsFile: bad })).toEqual([
      `${bad}:3: JSON syntax error: PropertyNameExpected`,
      `${bad}:3: JSON syntax error: ValueExpected`,
    ])
    expect(await problemsOf({ clientsFile: join(dir, 'missing.json') })).toEqual([
      `${join(dir, 'missing.json')}: cannot read it (ENOENT)`,
    ])
    expect(await problemsOf({ clientsFile: file('{"users": []}') })).toEqual([
      expect.stringMatching(/:1: expected \{ "clients": \[ \.\.\. \] \} or a JSON array$/),
    ])
  })
})
