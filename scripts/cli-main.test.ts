import { spawn, spawnSync } from 'node:child_process'
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

test('a reader that stops early (`--list | head`) ends the output quietly: exit 0, no stack trace', async () => {
  const child = spawn(process.execPath, [BIN, '--list'], { stdio: ['ignore', 'pipe', 'pipe'] })
  // the reader is gone before the first line is written: every write meets a closed pipe
  child.stdout.destroy()
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill()
      reject(new Error('the CLI did not exit within 60 s'))
    }, 60_000)
    child.on('close', (c) => {
      clearTimeout(timer)
      resolve(c)
    })
  })
  expect(stderr).not.toMatch(/EPIPE|\n\s+at /)
  expect(code).toBe(0)
})
