import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { loadTargetConfig } from './target-config.ts'

const base = {
  baseUrl: 'https://idp.example',
  clients: { main: { id: 'c', secret: 's' } },
  users: { primary: { username: 'u', password: 'p' } },
}

const load = (extra: Record<string, unknown>) => {
  const file = join(mkdtempSync(join(tmpdir(), 'target-config-')), 'target.json')
  writeFileSync(file, JSON.stringify({ ...base, ...extra }))
  return loadTargetConfig({ config: file }, {})
}

describe('target.json: sessionLifetime (SEC-11)', () => {
  test('a whole number of seconds is read', () => {
    expect(load({ sessionLifetime: 20 }).sessionLifetime).toBe(20)
    expect(load({}).sessionLifetime).toBeUndefined()
  })

  test('zero, a fraction or a string is a usage error naming the key', () => {
    for (const bad of [0, 1.5, '20'])
      expect(() => load({ sessionLifetime: bad })).toThrow(/sessionLifetime/)
  })
})
