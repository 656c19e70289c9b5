import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, test } from 'vitest'

// Issue 21, fast to start: --help and --list answer from the catalogue, without loading a check
// module, the browser or the embedded server. Asserted on the module graph the real bin loads
// (a Node resolve hook records every module it resolves), never on a time.

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const BIN = join(ROOT, 'scripts/idp-conformance.js')
const dir = mkdtempSync(join(tmpdir(), 'cli-startup-'))
writeFileSync(
  join(dir, 'hooks.mjs'),
  `import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(process.env.LOADED_LOG, resolved.url + '\\n')
  return resolved
}
`,
)
writeFileSync(
  join(dir, 'register.mjs'),
  `import { register } from 'node:module'\nregister('./hooks.mjs', import.meta.url)\n`,
)
const config = join(dir, 'target.json')
writeFileSync(
  config,
  JSON.stringify({
    clients: { main: { id: 'app', secret: 's3cret', redirectUri: 'https://app.example/cb' } },
    users: { primary: { username: 'u', password: 'pa55' } },
  }),
)

/** Runs the bin with `args`; returns its stdout and the modules it loaded, relative to the root. */
function loaded(name: string, args: string[]): { stdout: string; modules: string[] } {
  const log = join(dir, `${name}.log`)
  writeFileSync(log, '')
  const res = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(join(dir, 'register.mjs')).href, BIN, ...args],
    { encoding: 'utf8', timeout: 60_000, env: { ...process.env, LOADED_LOG: log } },
  )
  expect(res.status, res.stderr).toBe(0)
  const root = pathToFileURL(ROOT).href
  const modules = readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((url) => (url.startsWith(root) ? url.slice(root.length) : url))
  return { stdout: res.stdout, modules: [...new Set(modules)] }
}

const HEAVY = [
  /^conformance\/checks\//,
  /^conformance\/runner\.ts$/,
  /^conformance\/harness\/(check|browser|embedded|flows|http|session)\.ts$/,
  /^server\//,
  /playwright/,
  /^node_modules\/(undici|openid-client|jose|msw)\//,
]

describe.each([
  ['help', ['--help'], /--base-url URL/],
  ['list', ['--list'], /^DISC-01 \[MUST\]/m],
  ['list-config', ['--list', '--base-url', 'https://idp.example', '--config', config], /^RS-02/m],
])('idp-conformance %s', (name, args, output) => {
  test('answers without loading a check module, the browser or the server', () => {
    const { stdout, modules } = loaded(name, args)
    expect(stdout).toMatch(output)
    // the control: the hook saw the CLI itself being loaded
    expect(modules).toContain('conformance/cli.ts')
    expect(modules.filter((m) => HEAVY.some((re) => re.test(m)))).toEqual([])
  })
})
