import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import type { App } from './app.ts'
import { loadConfig } from './config.ts'
import { authorizeQuery, postLoginForm, testApp, windowFromNow } from './test-helpers.ts'

let app: App
beforeAll(async () => {
  // refusals answered at once: the hold (PASSWORD_HASH_BUSY_HOLD) has tests of its own
  // (users/hashing-gate.test.ts, the last test here, scale/login-flood.scale.test.ts)
  app = await testApp({ passwordHashConcurrency: 1, passwordHashQueue: 1, passwordHashBusyHold: 0 })
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

describe('a sign-in refused for capacity is cheap and counts against its address (issue 33)', () => {
  const ADDRESS_LIMIT = 3
  const USER_LIMIT = 2
  let limited: App
  beforeAll(async () => {
    limited = await testApp({
      passwordHashConcurrency: 1,
      passwordHashQueue: 1,
      passwordHashBusyHold: 0,
      rateLimits: {
        ...loadConfig({}, {}).rateLimits,
        login: windowFromNow(USER_LIMIT, 300),
        loginaddress: windowFromNow(ADDRESS_LIMIT, 300),
      },
    })
  })
  afterAll(async () => {
    await limited.stop()
  })

  /** Opens a login page and posts its form from `remoteAddress`, as JSON. */
  async function attempt(username: string, password: string, remoteAddress: string) {
    const page = await limited.server.inject({
      url: `/auth/authorize?${authorizeQuery().toString()}`,
      remoteAddress,
    })
    const field = (name: string) =>
      new RegExp(`name="${name}" value="([^"]+)"`).exec(page.payload)?.[1] ?? ''
    const set = page.headers['set-cookie']
    const cookie = (Array.isArray(set) ? set : set ? [set] : [])
      .map((c) => c.split(';')[0] ?? '')
      .join('; ')
    return limited.server.inject({
      method: 'POST',
      url: '/auth/login',
      remoteAddress,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        cookie,
      },
      payload: new URLSearchParams({
        interaction: field('interaction'),
        csrf: field('csrf'),
        username,
        password,
        action: 'login',
      }).toString(),
    })
  }

  /** Takes the gate's permit and its queue place until the returned function is called. */
  function fillGate(): () => Promise<void> {
    let release: () => void = () => undefined
    const held = limited.deps.hashing.run(() => new Promise<void>((r) => (release = r)))
    const queued = limited.deps.hashing.run(() => Promise.resolve())
    expect(limited.deps.hashing.full).toBe(true)
    return async () => {
      release()
      await Promise.all([held, queued])
    }
  }

  test('refused before the store is read, the same for a known user and an unknown name, and not counted against the username', async () => {
    const interactions = vi.spyOn(limited.deps.store.interactions, 'get')
    const users = vi.spyOn(limited.deps.store.users, 'byUsername')
    const drain = fillGate()
    let known: Awaited<ReturnType<typeof attempt>>
    let unknown: Awaited<ReturnType<typeof attempt>>
    try {
      known = await attempt('alice', 'guess', '192.0.2.10')
      unknown = await attempt('nobody', 'guess', '192.0.2.10')
      // no interaction read, no user lookup (and so no hash) for a refused sign-in
      expect(interactions).not.toHaveBeenCalled()
      expect(users).not.toHaveBeenCalled()
    } finally {
      interactions.mockRestore()
      users.mockRestore()
      await drain()
    }
    for (const res of [known, unknown]) {
      expect(res.statusCode).toBe(503)
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
    }
    expect(JSON.parse(known.payload)).toEqual(JSON.parse(unknown.payload))
    expect(known.payload).not.toContain('alice')
    // two refusals for alice reached the username's limit (2) had they counted against it:
    // they did not, and the address (2 of 3) still has room
    expect((await attempt('alice', 'wonderland', '192.0.2.10')).statusCode).toBe(303)
  })

  test('an address that retries refusals at once uses up its budget and is then refused 429', async () => {
    const address = '192.0.2.20'
    const drain = fillGate()
    const statuses: number[] = []
    try {
      for (let i = 0; i < ADDRESS_LIMIT + 2; i++)
        statuses.push((await attempt(`user${i}`, 'guess', address)).statusCode)
    } finally {
      await drain()
    }
    expect(statuses).toEqual([...Array.from({ length: ADDRESS_LIMIT }, () => 503), 429, 429])
    // with the queue free again, that address is still over its budget, whoever signs in,
    // while another address is not
    const after = await attempt('alice', 'wonderland', address)
    expect(after.statusCode).toBe(429)
    expect(Number(after.headers['retry-after'])).toBeGreaterThan(0)
    expect((await attempt('alice', 'wonderland', '192.0.2.21')).statusCode).toBe(303)
  })
})

describe('a sign-in refused for capacity is held before its answer (PASSWORD_HASH_BUSY_HOLD)', () => {
  test('the refusal waits on the hold, then answers 503, and nothing stays held', async () => {
    const held = await testApp({
      passwordHashConcurrency: 1,
      passwordHashQueue: 1,
      passwordHashBusyHold: 0.2,
    })
    let release: () => void = () => undefined
    const running = held.deps.hashing.run(() => new Promise<void>((r) => (release = r)))
    const queued = held.deps.hashing.run(() => Promise.resolve())
    try {
      const state = { answered: false }
      const refusal = postLoginForm(
        held,
        authorizeQuery(),
        { username: 'nobody', password: 'guess' },
        'application/json',
      ).finally(() => (state.answered = true))
      // bounded: the route reaches the hold within a few seconds of event-loop turns
      const until = performance.now() + 10_000
      while (held.deps.hashing.held === 0 && !state.answered && performance.now() < until)
        await new Promise((r) => setImmediate(r))
      expect(held.deps.hashing.held, 'the refusal was held').toBe(1)
      expect(state.answered).toBe(false)
      const res = await refusal
      expect(res.statusCode).toBe(503)
      expect(held.deps.hashing.held).toBe(0)
    } finally {
      release()
      await Promise.all([running, queued])
      await held.stop()
    }
  })
})
