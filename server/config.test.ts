import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { ConfigError, envNameOf, loadConfig, windowStart } from './config.ts'

describe('loadConfig', () => {
  test('applies the documented defaults', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8443,
      baseUrl: 'https://127.0.0.1:8443',
      dataDir: '.data',
      databaseUrl: 'sqlite:.data/idp.sqlite',
      accessTokenTtl: 3600,
      codeTtl: 60,
      refreshTokenTtl: 2592000,
      trustProxy: false,
    })
    expect(config.rateLimits.token).toEqual({ limit: 300, window: 60 })
    expect(config).toMatchObject({ passwordHashConcurrency: 2, passwordHashQueue: 16 })
  })

  test("NODE_ENV=production refuses an Argon2id cost below OWASP's minimum unless told explicitly", () => {
    const production = { NODE_ENV: 'production', RP_TESTS: 'false' }
    // the default is OWASP's minimum, m=19456 KiB t=2 p=1
    expect(loadConfig(production)).toMatchObject({
      passwordHash: 'argon2id',
      argon2: { memory: 19456, time: 2, parallelism: 1 },
    })
    const weak = { ...production, ARGON2_MEMORY: '19455' }
    expect(() => loadConfig(weak)).toThrow(
      /ARGON2_MEMORY=19455 ARGON2_TIME=2 is below OWASP's minimum for Argon2id.*ALLOW_WEAK_PASSWORD_HASH=true/,
    )
    expect(() => loadConfig({ ...production, ARGON2_TIME: '1' })).toThrow(/below OWASP's minimum/)
    expect(loadConfig({ ...weak, ALLOW_WEAK_PASSWORD_HASH: 'true' }).argon2.memory).toBe(19455)
    // the older name still says it
    expect(loadConfig({ ...weak, ALLOW_WEAK_SCRYPT: 'true' }).argon2.memory).toBe(19455)
    // OWASP's other configurations of equal defence trade memory for passes
    expect(loadConfig({ ...production, ARGON2_MEMORY: '47104', ARGON2_TIME: '1' }).argon2).toEqual({
      memory: 47104,
      time: 1,
      parallelism: 1,
    })
    expect(loadConfig({ ...production, ARGON2_MEMORY: '7168', ARGON2_TIME: '5' }).argon2.time).toBe(
      5,
    )
    expect(() => loadConfig({ ...production, ARGON2_MEMORY: '7168', ARGON2_TIME: '4' })).toThrow(
      /below OWASP's minimum/,
    )
    // a weak scrypt cost does not matter while scrypt is not the algorithm
    expect(loadConfig({ ...production, SCRYPT_N: '1024' }).scrypt.N).toBe(1024)
    // outside production (tests) a low cost is the caller's choice
    expect(loadConfig({ ARGON2_MEMORY: '64', ARGON2_TIME: '1' }).argon2.memory).toBe(64)
  })

  test("NODE_ENV=production refuses a scrypt cost below OWASP's minimum unless told explicitly", () => {
    const weak = {
      NODE_ENV: 'production',
      PASSWORD_HASH: 'scrypt',
      SCRYPT_N: '1024',
      RP_TESTS: 'false',
    }
    expect(() => loadConfig(weak)).toThrow(
      /SCRYPT_N=1024 SCRYPT_R=8 is below OWASP's minimum for scrypt.*ALLOW_WEAK_PASSWORD_HASH=true/,
    )
    expect(loadConfig({ ...weak, ALLOW_WEAK_PASSWORD_HASH: 'true' }).scrypt.N).toBe(1024)
    expect(loadConfig({ ...weak, ALLOW_WEAK_SCRYPT: 'true' }).scrypt.N).toBe(1024)
    expect(loadConfig({ NODE_ENV: 'production', PASSWORD_HASH: 'scrypt' }).scrypt.N).toBe(2 ** 17)
    // a weak Argon2id cost does not matter while Argon2id is not the algorithm
    expect(
      loadConfig({ NODE_ENV: 'production', PASSWORD_HASH: 'scrypt', ARGON2_MEMORY: '64' })
        .passwordHash,
    ).toBe('scrypt')
    // outside production (tests, the embedded target) a low cost is the caller's choice
    expect(loadConfig({ SCRYPT_N: '1024' }).scrypt.N).toBe(1024)
  })

  test('names each key by its environment variable', () => {
    expect(envNameOf('port')).toBe('PORT')
    expect(envNameOf('accessTokenTtl')).toBe('ACCESS_TOKEN_TTL')
    expect(envNameOf('scrypt.N')).toBe('SCRYPT_N')
    expect(envNameOf('passwordHash')).toBe('PASSWORD_HASH')
    expect(envNameOf('argon2.memory')).toBe('ARGON2_MEMORY')
    expect(envNameOf('argon2.parallelism')).toBe('ARGON2_PARALLELISM')
    expect(envNameOf('rateLimits.loginaddress')).toBe('RATE_LIMIT_LOGINADDRESS')
    expect(envNameOf('rateLimits.login.limit')).toBe('RATE_LIMIT_LOGIN')
    expect(envNameOf('maxConnectionsPerAddress')).toBe('MAX_CONNECTIONS_PER_ADDRESS')
  })

  test('reads the password hashing bounds and refuses a gate with no permit', () => {
    expect(loadConfig({ PASSWORD_HASH_CONCURRENCY: '3', PASSWORD_HASH_QUEUE: '0' })).toMatchObject({
      passwordHashConcurrency: 3,
      passwordHashQueue: 0,
    })
    expect(() => loadConfig({ PASSWORD_HASH_CONCURRENCY: '0' })).toThrow(
      /PASSWORD_HASH_CONCURRENCY/,
    )
  })

  test('reads the hold of a refused sign-in: 1 s by default, fractions and 0 allowed, bounded', () => {
    expect(loadConfig({}).passwordHashBusyHold).toBe(1)
    expect(loadConfig({ PASSWORD_HASH_BUSY_HOLD: '0.25' }).passwordHashBusyHold).toBe(0.25)
    expect(loadConfig({ PASSWORD_HASH_BUSY_HOLD: '0' }).passwordHashBusyHold).toBe(0)
    expect(() => loadConfig({ PASSWORD_HASH_BUSY_HOLD: '-1' })).toThrow(/PASSWORD_HASH_BUSY_HOLD/)
    expect(() => loadConfig({ PASSWORD_HASH_BUSY_HOLD: '31' })).toThrow(/PASSWORD_HASH_BUSY_HOLD/)
  })

  test('reads the environment, a config file, and lets the environment win', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'))
    const file = join(dir, 'config.json')
    writeFileSync(
      file,
      JSON.stringify({
        port: 9000,
        accessTokenTtl: 600,
        rateLimits: { login: { limit: 3, window: 10 } },
      }),
    )
    const config = loadConfig({
      CONFIG_FILE: file,
      PORT: '9443',
      TRUST_PROXY: 'true',
      RATE_LIMIT_TOKEN: '5/30',
    })
    expect(config.port).toBe(9443)
    expect(config.baseUrl).toBe('https://127.0.0.1:9443')
    expect(config.accessTokenTtl).toBe(600)
    expect(config.trustProxy).toBe(1)
    expect(config.rateLimits.token).toEqual({ limit: 5, window: 30 })
    expect(config.rateLimits.login).toEqual({ limit: 3, window: 10 })
  })

  test('reports every problem together', () => {
    let error: unknown
    try {
      loadConfig({
        PORT: 'eighty',
        BASE_URL: 'http://idp.example/',
        ACCESS_TOKEN_TTL: '-1',
        TLS_CERT: 'cert.pem',
        RATE_LIMIT_LOGIN: 'lots',
        DATABASE_URL: 'mysql://x',
      })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems.join('\n')
    // named by the environment variables that were set, with the CONFIG_FILE key beside
    expect(problems).toMatch(/PORT \("port" in CONFIG_FILE\)/)
    expect(problems).toMatch(/BASE_URL/)
    expect(problems).toMatch(/ACCESS_TOKEN_TTL \("accessTokenTtl" in CONFIG_FILE\)/)
    expect(problems).toMatch(/TLS_CERT and TLS_KEY/)
    expect(problems).toMatch(/RATE_LIMIT_LOGIN/)
    expect(problems).toMatch(/DATABASE_URL/)
    expect((error as ConfigError).problems.length).toBeGreaterThanOrEqual(6)
  })

  test('refuses a base URL with a trailing slash, query or fragment', () => {
    for (const BASE_URL of [
      'https://idp.example/',
      'https://idp.example?x=1',
      'https://idp.example#f',
    ]) {
      expect(() => loadConfig({ BASE_URL })).toThrow(ConfigError)
    }
    expect(loadConfig({ BASE_URL: 'https://idp.example/tenant' }).baseUrl).toBe(
      'https://idp.example/tenant',
    )
  })

  test('refuses unknown members of a config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'))
    const file = join(dir, 'config.json')
    writeFileSync(file, JSON.stringify({ acessTokenTtl: 5 }))
    expect(() => loadConfig({ CONFIG_FILE: file })).toThrow(/acessTokenTtl/)
  })
})

describe('windowStart: the fixed window of a rate limit', () => {
  test('windows start at multiples of their length by default', () => {
    expect(windowStart(1795548763, { limit: 3, window: 97 })).toBe(1795548667)
    expect(windowStart(1795548764, { limit: 3, window: 97 })).toBe(1795548764)
  })

  // what the embedded target's controls do when a probe lowers a limit
  test('with an origin, a window starts at the origin and lasts its length', () => {
    const limit = { limit: 3, window: 97, origin: 1795548763 }
    expect(windowStart(1795548763, limit)).toBe(1795548763)
    expect(windowStart(1795548764, limit)).toBe(1795548763)
    expect(windowStart(1795548859, limit)).toBe(1795548763)
    expect(windowStart(1795548860, limit)).toBe(1795548860)
  })

  test('a clock set back before the origin still gets a window of its own', () => {
    const limit = { limit: 3, window: 97, origin: 1000 }
    expect(windowStart(999, limit)).toBe(903)
  })
})
