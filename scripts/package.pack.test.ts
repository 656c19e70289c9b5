import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, fetch } from 'undici'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { freePort } from '../server/test-helpers.ts'

// PACKAGING TEST (npm run test:package, run by .ci/run; not part of `npm test`: it takes
// minutes). `npm pack` (whose prepack compiles dist/), the tarball installed in an empty
// directory, then what a user of the installed package runs: --help, the embedded suite for one
// area, and `serve` until discovery answers. Bounded: every step has a timeout.
//
// The install uses npm's local cache first (--prefer-offline) and skips install scripts: the
// only one that matters, sqlite3's native build (minutes of C++), is replaced by copying this
// checkout's compiled addon (same sqlite3 version, same Node), so the test stays bounded.

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'idp-package-'))
const app = join(work, 'app')
const bin = join(app, 'node_modules', '.bin', 'idp-conformance')

const run = (cmd: string, args: string[], options: SpawnSyncOptions = {}) => {
  const res = spawnSync(cmd, args, { encoding: 'utf8', timeout: 600_000, ...options })
  return { status: res.status, out: `${String(res.stdout)}${String(res.stderr)}` }
}

describe('the installed package', () => {
  beforeAll(() => {
    const packed = run('npm', ['pack', '--pack-destination', work, '--no-fund'], { cwd: ROOT })
    expect(packed.status, packed.out.slice(-3000)).toBe(0)
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))
    if (!tarball) throw new Error(`npm pack made no tarball:\n${packed.out}`)
    // an empty project that depends on nothing but the tarball
    mkdirSync(app)
    writeFileSync(join(app, 'package.json'), '{ "name": "try-idp-conformance", "private": true }\n')
    const installed = run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        join(work, tarball),
      ],
      { cwd: app },
    )
    expect(installed.status, installed.out.slice(-3000)).toBe(0)
    cpSync(
      join(ROOT, 'node_modules', 'sqlite3', 'build'),
      join(app, 'node_modules', 'sqlite3', 'build'),
      { recursive: true },
    )
  })
  afterAll(() => {
    rmSync(work, { recursive: true, force: true })
  })

  test('ships compiled JavaScript, not the TypeScript sources', () => {
    const pkg = join(app, 'node_modules', 'idp-conformance')
    expect(existsSync(join(pkg, 'dist', 'scripts', 'cli-main.js'))).toBe(true)
    expect(existsSync(join(pkg, 'scripts', 'cli-main.ts'))).toBe(false)
    expect(existsSync(join(pkg, 'conformance'))).toBe(false)
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>
    }
    expect(Object.keys(manifest.dependencies)).not.toContain('tsx')
  })

  test('idp-conformance --help lists every subcommand', () => {
    const res = run(bin, ['--help'], { cwd: app, timeout: 60_000 })
    expect(res.status, res.out).toBe(0)
    for (const sub of ['serve', 'clients add', 'users add', 'keys list'])
      expect(res.out).toContain(`idp-conformance ${sub}`)
  })

  test('the embedded suite runs one area (discovery) and passes', () => {
    const res = run(bin, ['--only', 'DISC-*', '--report-dir', join(work, 'reports')], {
      cwd: app,
      timeout: 300_000,
      env: { ...process.env, NO_COLOR: '1' },
    })
    expect(res.status, res.out.slice(-3000)).toBe(0)
    expect(res.out).toMatch(/Result: PASSED/)
  })

  test('serve starts and answers discovery', async () => {
    const port = await freePort()
    const dataDir = join(work, 'data')
    const child = spawn(bin, ['serve'], {
      cwd: app,
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        BASE_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    try {
      let status = 0
      let issuer = ''
      for (let i = 0; i < 120 && status !== 200 && child.exitCode === null; i++) {
        await new Promise((r) => setTimeout(r, 500))
        if (!existsSync(join(dataDir, 'tls', 'ca.pem'))) continue
        const agent = new Agent({ connect: { ca: readFileSync(join(dataDir, 'tls', 'ca.pem')) } })
        try {
          const res = await fetch(`https://127.0.0.1:${port}/.well-known/openid-configuration`, {
            dispatcher: agent,
          })
          status = res.status
          issuer = ((await res.json()) as { issuer: string }).issuer
        } catch {
          // not listening yet
        } finally {
          await agent.close()
        }
      }
      expect(status, output.slice(-3000)).toBe(200)
      expect(issuer).toBe(`https://127.0.0.1:${port}`)
    } finally {
      child.kill('SIGTERM')
    }
  })
})
