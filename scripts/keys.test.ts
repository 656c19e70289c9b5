import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { keysMain } from './keys.ts'

async function run(argv: string[], env: NodeJS.ProcessEnv, now: number) {
  const out: string[] = []
  const err: string[] = []
  const code = await keysMain(
    argv,
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    env,
    () => now,
  )
  return { code, out: out.join('\n'), err: err.join('\n') }
}

test('keys rotate publishes a pending key and keys list shows every status', async () => {
  const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'keys-')), KEY_ACTIVATION_DELAY: '100' }
  expect((await run(['list'], env, 1000)).out).toMatch(/no signing keys yet/)
  expect((await run(['rotate'], env, 1000)).code).toBe(0) // the first key signs at once
  const second = await run(['rotate'], env, 2000)
  expect(second.out).toMatch(/signs with it from 1970-01-01T00:35:00\.000Z/)
  const rows = (await run(['list'], env, 2050)).out.split('\n').slice(1)
  expect(rows.map((r) => r.split(/\s+/)[1])).toEqual(['pending', 'active'])
  const later = (await run(['list'], env, 2100)).out.split('\n').slice(1)
  expect(later.map((r) => r.split(/\s+/)[1])).toEqual(['active', 'retiring'])
})

test('usage and configuration errors exit 2', async () => {
  expect((await run(['spin'], {}, 0)).code).toBe(2)
  expect((await run(['list', 'extra'], {}, 0)).code).toBe(2)
  const bad = await run(['list'], { KEY_ACTIVATION_DELAY: 'soon' }, 0)
  expect(bad.code).toBe(2)
  expect(bad.err).toMatch(/keyActivationDelay/)
})
