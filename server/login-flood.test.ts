import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { authorizeQuery, postLoginForm, testApp } from './test-helpers.ts'

let app: App
beforeAll(async () => {
  app = await testApp({ passwordHashConcurrency: 1, passwordHashQueue: 1 })
})
afterAll(async () => {
  await app.stop()
})

/** Opens a login page and posts its form with `accept`. */
const signIn = (username: string, password: string, accept: string) =>
  postLoginForm(app, authorizeQuery(), { username, password }, accept)

describe('a flood of sign-ins cannot stall the server (password hashing is bounded)', () => {
  test('with every hashing permit taken and the queue full, a sign-in is refused 503 with Retry-After while the store still answers', async () => {
    let release: () => void = () => undefined
    const held = app.deps.hashing.run(() => new Promise<void>((resolve) => (release = resolve)))
    const queued = app.deps.hashing.run(() => Promise.resolve())
    try {
      const page = await signIn('nobody', 'guess', 'text/html')
      expect(page.statusCode).toBe(503)
      expect(Number(page.headers['retry-after'])).toBeGreaterThan(0)
      expect(page.headers['content-type']).toMatch(/^text\/html/)
      expect(page.payload).toContain('busy')

      // a client that does not take HTML gets the interface's JSON error shape (§7)
      const json = await signIn('nobody', 'guess', 'application/json')
      expect(json.statusCode).toBe(503)
      expect(Number(json.headers['retry-after'])).toBeGreaterThan(0)
      expect(JSON.parse(json.payload)).toMatchObject({
        error: 'temporarily_unavailable',
        error_description: expect.any(String) as string,
      })

      // the store's own work is not queued behind the hashes
      expect((await app.server.inject('/health/ready')).statusCode).toBe(200)
    } finally {
      release()
      await Promise.all([held, queued])
    }
    // with the permits back, sign-ins are judged again: a wrong password, then the right one
    expect((await signIn('alice', 'not-it', 'text/html')).statusCode).toBe(401)
    expect((await signIn('alice', 'wonderland', 'text/html')).statusCode).toBe(303)
  })
})
