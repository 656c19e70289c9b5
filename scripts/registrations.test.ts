import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { sha256Hex } from '../server/protocol/digest.ts'
import { readRegistrations } from '../server/registry/registrations.ts'
import { verifyPassword } from '../server/users/passwords.ts'
import { registrationsMain } from './registrations.ts'

const dir = mkdtempSync(join(tmpdir(), 'reg-cli-'))

async function run(...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const code = await registrationsMain(argv, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

describe('clients add / users add', () => {
  test('clients add creates the file, prints the secret once and stores only its digest', async () => {
    const file = join(dir, 'clients.json')
    const r = await run(
      'clients',
      'add',
      '--file',
      file,
      '--id',
      'my-app',
      '--redirect-uri',
      'http://127.0.0.1:3000/cb',
      '--role',
      'editor=read:notes',
      '--scope',
      'openid',
      '--scope',
      'read:notes',
    )
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    const secret = /client_secret \(shown once[^)]*\): (\S+)/.exec(r.out)?.[1] ?? ''
    expect(secret).toMatch(/^[\w-]{43}$/)
    const text = readFileSync(file, 'utf8')
    expect(text).not.toContain(secret)
    expect(text).toContain(sha256Hex(secret))
    const loaded = await readRegistrations({ clientsFile: file })
    expect(loaded.clients[0]?.client).toMatchObject({
      id: 'my-app',
      secretDigest: sha256Hex(secret),
      roleDefinitions: { editor: ['read:notes'] },
    })
  })

  test('a second client is appended, comments kept; an invalid one leaves the file as it was', async () => {
    const file = join(dir, 'commented.json')
    writeFileSync(file, '{\n  // ours\n  "clients": []\n}\n')
    expect(
      (
        await run(
          'clients',
          'add',
          '--file',
          file,
          '--id',
          'a',
          '--redirect-uri',
          'https://a.example/cb',
        )
      ).code,
    ).toBe(0)
    const before = readFileSync(file, 'utf8')
    expect(before).toContain('// ours')
    const bad = await run(
      'clients',
      'add',
      '--file',
      file,
      '--id',
      'b',
      '--redirect-uri',
      'http://b.example/cb',
    )
    expect(bad.code).toBe(2)
    expect(bad.err).toMatch(
      new RegExp(`${file}:\\d+: clients\\[1\\]\\.redirect_uris\\[0\\]: must use https`),
    )
    expect(readFileSync(file, 'utf8')).toBe(before)
  })

  test('users add hashes the password, checks roles against clients, prints a generated password once', async () => {
    const clients = join(dir, 'clients.json')
    const file = join(dir, 'users.json')
    const r = await run(
      'users',
      'add',
      '--file',
      file,
      '--username',
      'carol',
      '--org',
      'org-7',
      '--role',
      'my-app:editor',
      '--clients',
      clients,
    )
    expect(r.err).toBe('')
    const password = /password \(shown once[^)]*\): (\S+)/.exec(r.out)?.[1] ?? ''
    expect(password.length).toBeGreaterThanOrEqual(16)
    const text = readFileSync(file, 'utf8')
    expect(text).not.toContain(password)
    const hash = (JSON.parse(text) as { users: { password_hash: string }[] }).users[0]
      ?.password_hash
    // Argon2id at OWASP's minimum, the server's default
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(await verifyPassword(password, hash ?? '')).toBe(true)

    const unknownRole = await run(
      'users',
      'add',
      '--file',
      file,
      '--username',
      'dan',
      '--org',
      'o',
      '--password',
      'pw',
      '--role',
      'my-app:owner',
      '--clients',
      clients,
    )
    expect(unknownRole.code).toBe(2)
    expect(unknownRole.err).toMatch(
      /role 'owner' is not defined by client 'my-app' \(defined: editor\)/,
    )
    // a fixture client's roles are known without --clients
    const fixtureRole = await run(
      'users',
      'add',
      '--file',
      join(dir, 'fixture-users.json'),
      '--username',
      'erin',
      '--org',
      'o',
      '--password',
      'pw',
      '--role',
      'conformance-client:viewer',
    )
    expect(fixtureRole.code).toBe(0)
    expect(fixtureRole.out).not.toMatch(/shown once/)
  })

  test("the README's clients add and users add example registers without a warning", async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const sub = mkdtempSync(join(tmpdir(), 'reg-readme-'))
    // the shell lines of the example, joined across their backslash continuations
    const commands = readme
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .filter((l) => /^npx idp-conformance (clients|users) add /.test(l))
    expect(commands).toHaveLength(2)
    for (const command of commands) {
      const argv = [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)]
        .map((m) => m[1] ?? m[2] ?? m[3] ?? '')
        .slice(2)
        .map((a) => (a.endsWith('.json') ? join(sub, a) : a))
      const r = await run(...argv)
      expect(r.err, command).toBe('')
      expect(r.code, command).toBe(0)
    }
    const loaded = await readRegistrations({
      clientsFile: join(sub, 'clients.json'),
      usersFile: join(sub, 'users.json'),
    })
    expect(loaded.warnings).toEqual([])
  })

  test('usage errors exit 2 with the usage text', async () => {
    for (const argv of [
      ['clients'],
      ['clients', 'add'],
      ['users', 'add', '--nope'],
      ['clients', 'remove'],
    ]) {
      const r = await run(...argv)
      expect(r.code, argv.join(' ')).toBe(2)
      expect(r.err).toMatch(/usage:/)
    }
  })
})
