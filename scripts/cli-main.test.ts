import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const BIN = fileURLToPath(new URL('./idp-conformance.js', import.meta.url))

test('--help lists every subcommand, then the suite options', () => {
  const res = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8', timeout: 60_000 })
  expect(res.status).toBe(0)
  for (const sub of ['serve', 'clients add', 'users add', 'keys list | rotate', 'rp-test'])
    expect(res.stdout).toContain(`idp-conformance ${sub}`)
  expect(res.stdout).toContain('--base-url URL')
})
