import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from './app.ts'
import { RATE_LIMIT_GROUPS, type Config } from './config.ts'
import { OAuthError, STATUS, type OAuthErrorCode } from './errors.ts'
import { signInAndRedeem, testApp, windowFromNow } from './test-helpers.ts'
import { params, RUNS, sabotageParams, SEED } from './property-runs.ts'

// Property-based robustness of every endpoint (ARCHITECTURE.md: "never a 5xx for bad input"):
// generated requests (random parameters, repeats, odd encodings, sizes up to and past the
// payload limits, wrong content types and methods) get no 5xx, a JSON body with a registered
// error code and its decided status (the HTML pages aside, which must still not 5xx), and the
// server answers a valid request normally afterwards. PROPERTY_RUNS sets the number of cases
// (npm run test:deep: 10,000), PROPERTY_SEED replays a run.

const timeout = 30_000 + RUNS * 40

const FORM_LIMIT = 16 * 1024
const DEFAULT_LIMIT = 64 * 1024

// windows that start now: an exhausted limit stays exhausted for the whole test
const limits = (limit: number, window = 60): Config['rateLimits'] =>
  Object.fromEntries(
    RATE_LIMIT_GROUPS.map((g) => [g, windowFromNow(limit, window)]),
  ) as Config['rateLimits']

/** The codes of server/errors.ts. */
const REGISTERED = new Set(Object.keys(STATUS))

/**
 * The decided status per code (ARCHITECTURE.md): hapi's own refusals (404, 405, 413, 415) keep
 * their status as invalid_request; a rate limit is 429. Nothing in 5xx is ever decided for bad
 * input.
 */
const DECIDED: Readonly<Partial<Record<OAuthErrorCode, readonly number[]>>> = {
  invalid_request: [400, 404, 405, 413, 415],
  invalid_client: [401],
  invalid_grant: [400],
  unauthorized_client: [400],
  unsupported_grant_type: [400],
  unsupported_response_type: [400],
  invalid_scope: [400],
  invalid_token: [401],
  insufficient_scope: [403],
  unsupported_token_type: [400],
  temporarily_unavailable: [429],
}

/** RFC 6749 App. A.7, A.8: the characters of error and error_description. */
const ERROR_CHARS = /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/

const PAGES = new Set(['/auth/authorize', '/auth/login', '/auth/logout'])

const ENDPOINTS: readonly { readonly path: string; readonly methods: readonly string[] }[] = [
  { path: '/auth/token', methods: ['POST'] },
  { path: '/auth/introspect', methods: ['POST'] },
  { path: '/auth/revoke', methods: ['POST'] },
  { path: '/auth/user-info', methods: ['GET', 'POST'] },
  { path: '/auth/branding', methods: ['GET'] },
  { path: '/.well-known/openid-configuration', methods: ['GET'] },
  { path: '/.well-known/oauth-authorization-server', methods: ['GET'] },
  { path: '/.well-known/jwks.json', methods: ['GET'] },
  { path: '/auth/authorize', methods: ['GET', 'POST'] },
  { path: '/auth/login', methods: ['POST'] },
  { path: '/auth/logout', methods: ['GET', 'POST'] },
  { path: '/assets/idp.css', methods: ['GET'] },
]

const KNOWN_PARAMS = [
  'grant_type',
  'client_id',
  'client_secret',
  'code',
  'code_verifier',
  'redirect_uri',
  'refresh_token',
  'scope',
  'token',
  'token_type_hint',
  'access_token',
  'response_type',
  'state',
  'nonce',
  'prompt',
  'max_age',
  'code_challenge',
  'code_challenge_method',
  'id_token_hint',
  'post_logout_redirect_uri',
  'interaction',
  'csrf',
  'username',
  'password',
  'action',
  'request',
  'request_uri',
]

/** Placeholders for real values, filled in when the request is built. */
const REAL = ['$access', '$refresh', '$id', '$service'] as const
type Real = (typeof REAL)[number]

const GOOD_VALUES = [
  'conformance-client',
  'conformance-secret',
  'service-client',
  'service-secret',
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'https://client.example/callback',
  'https://client.example/logged-out',
  'openid',
  'openid profile email offline_access',
  'read:documents',
  'api:reports',
  'code',
  'S256',
  'plain',
  'access_token',
  'none',
  'login',
  'alice',
  'wonderland',
  ...REAL,
]

/** Characters an HTTP header value may hold (RFC 9110 §5.5), without CR and LF. */
const headerValue = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 60,
})

const keyArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KNOWN_PARAMS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('a[b]', 'a[]', '__proto__', 'constructor', '', '=', '&'),
  },
)
const valueArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...GOOD_VALUES) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', ' ', '%', '%zz', '+', '\u0000', '\ud800', 'a'.repeat(300)),
  },
)

type Encoding = 'form' | 'raw' | 'percent-all' | 'broken-escape'
const BROKEN_ESCAPES = ['%', '%z', '%zz', '%E0%A4', '%ED%A0%80', '%00', '%C0%AF', '%FF', '%+']

/** Every UTF-8 byte as %XX (lone surrogates become U+FFFD, as a browser would send). */
const percentAll = (s: string): string =>
  [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')

function encode(pairs: readonly (readonly [string, string])[], how: Encoding, at: number): string {
  switch (how) {
    case 'form':
      return new URLSearchParams(pairs.map(([k, v]) => [k, v])).toString()
    case 'raw':
      return pairs.map(([k, v]) => `${k}=${v}`).join('&')
    case 'percent-all':
      return pairs.map(([k, v]) => `${percentAll(k)}=${percentAll(v)}`).join('&')
    case 'broken-escape': {
      const text = new URLSearchParams(pairs.map(([k, v]) => [k, v])).toString()
      const i = at % (text.length + 1)
      return `${text.slice(0, i)}${BROKEN_ESCAPES[at % BROKEN_ESCAPES.length] ?? '%'}${text.slice(i)}`
    }
  }
}

/** A request target may only hold visible ASCII: anything else is sent percent-encoded. */
const asRequestTarget = (s: string): string =>
  Array.from(s)
    .map((c) => (/^[\x21-\x7e]$/.test(c) && c !== '#' ? c : percentAll(c)))
    .join('')

type PathVariant =
  | 'exact'
  | 'trailing-slash'
  | 'upper'
  | 'double-slash'
  | 'extra-segment'
  | 'encoded'
  | 'dot-segment'
  | 'traversal'
  | 'unknown'

const TRAVERSALS = ['/..%2f..%2fapp.ts', '/..%2F', '/%2e%2e/%2e%2e/', '/..%5c..%5capp.ts']

function variantPath(path: string, how: PathVariant, segment: string, at: number): string {
  switch (how) {
    case 'exact':
      return path
    case 'trailing-slash':
      return `${path}/`
    case 'upper':
      return path.toUpperCase()
    case 'double-slash':
      return path.replace('/', '//')
    case 'extra-segment':
      return `${path}/${asRequestTarget(segment) || 'x'}`
    case 'encoded': {
      const i = 1 + (at % (path.length - 1))
      return `${path.slice(0, i)}${percentAll(path[i] ?? 'x')}${path.slice(i + 1)}`
    }
    case 'dot-segment':
      return path.replace(/\/([^/]*)$/, at % 2 === 0 ? '/./$1' : '/x/../$1')
    case 'traversal':
      return path.replace(/\/[^/]*$/, TRAVERSALS[at % TRAVERSALS.length] ?? '/..%2f')
    case 'unknown':
      return `/${asRequestTarget(segment)}`
  }
}

type BodyKind = 'none' | 'params' | 'json' | 'bytes'

interface GeneratedRequest {
  readonly endpoint: number
  readonly path: PathVariant
  readonly segment: string
  readonly method: string
  readonly query: readonly (readonly [string, string])[]
  readonly queryEncoding: Encoding
  readonly body: BodyKind
  readonly params: readonly (readonly [string, string])[]
  readonly repeat: number | undefined
  readonly encoding: Encoding
  readonly bytes: Uint8Array
  readonly size: number
  readonly at: number
  readonly contentType: string | undefined
  readonly authorization: string | undefined
  readonly cookie: string | undefined
  readonly accept: string | undefined
  readonly contentEncoding: string | undefined
  readonly origin: boolean
  readonly extraHeader: readonly [string, string] | undefined
}

const pairs = fc.array(fc.tuple(keyArb, valueArb), { maxLength: 8 })
const sizeArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 2048 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      FORM_LIMIT - 1,
      FORM_LIMIT,
      FORM_LIMIT + 1,
      DEFAULT_LIMIT,
      DEFAULT_LIMIT + 1,
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: FORM_LIMIT - 512, max: FORM_LIMIT + 512 }) },
  { weight: 1, arbitrary: fc.integer({ min: DEFAULT_LIMIT - 512, max: DEFAULT_LIMIT + 512 }) },
)
const contentTypeArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/x-www-form-urlencoded') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/x-www-form-urlencoded; charset=utf-8',
      'application/x-www-form-urlencoded; charset=iso-8859-1',
      'APPLICATION/X-WWW-FORM-URLENCODED',
      'application/x-www-form-urlencoded;',
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'text/html',
      'multipart/form-data',
      'multipart/form-data; boundary=x',
      'multipart/form-data; boundary=----x',
      'multipart/mixed; boundary=x',
      'application/xml',
      'application/octet-stream',
      '*/*',
      '',
      ';',
      'application/x-www-form-urlencoded, application/json',
    ),
  },
  { weight: 1, arbitrary: headerValue },
)
const tokenish = fc.oneof(
  fc.constantFrom(...REAL),
  fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,40}=*$/),
  headerValue,
)
const authorizationArb = fc.oneof(
  tokenish.map((t) => `Bearer ${t}`),
  fc.constantFrom('Bearer', 'Bearer ', 'bearer x.y.z', 'Basic', 'Digest x', 'Bearer a b'),
  fc
    .tuple(valueArb, valueArb)
    .map(([u, p]) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`),
  headerValue,
)
const HOP_BY_HOP = new Set([
  'connection',
  'content-length',
  'host',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-type',
  'authorization',
  'cookie',
  'content-encoding',
  'expect',
])

const requestArb: fc.Arbitrary<GeneratedRequest> = fc.nat(ENDPOINTS.length - 1).chain((endpoint) =>
  fc.record({
    endpoint: fc.constant(endpoint),
    path: fc.oneof(
      { weight: 12, arbitrary: fc.constant<PathVariant>('exact') },
      {
        weight: 3,
        arbitrary: fc.constantFrom<PathVariant>(
          'trailing-slash',
          'upper',
          'double-slash',
          'extra-segment',
          'encoded',
          'dot-segment',
          'traversal',
          'unknown',
        ),
      },
    ),
    segment: fc.string({ maxLength: 16 }),
    method: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...(ENDPOINTS[endpoint]?.methods ?? ['GET'])) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'GET',
          'POST',
          'PUT',
          'PATCH',
          'DELETE',
          'HEAD',
          'OPTIONS',
          'TRACE',
        ),
      },
    ),
    query: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 2, arbitrary: pairs }),
    queryEncoding: fc.constantFrom<Encoding>('form', 'raw', 'percent-all', 'broken-escape'),
    body: fc.constantFrom<BodyKind>('none', 'params', 'params', 'params', 'json', 'bytes'),
    params: pairs,
    repeat: fc.option(fc.nat(), { nil: undefined }),
    encoding: fc.oneof(
      { weight: 3, arbitrary: fc.constant<Encoding>('form') },
      { weight: 1, arbitrary: fc.constantFrom<Encoding>('raw', 'percent-all', 'broken-escape') },
    ),
    bytes: fc.uint8Array({ maxLength: 64 }),
    size: sizeArb,
    at: fc.nat(),
    contentType: fc.option(contentTypeArb, { nil: undefined, freq: 6 }),
    authorization: fc.option(authorizationArb, { nil: undefined, freq: 2 }),
    cookie: fc.option(
      fc.oneof(
        headerValue.map((v) => `__Host-idp_session=${v}`),
        headerValue.map((v) => `__Host-idp_interaction=${v}`),
        headerValue,
      ),
      { nil: undefined, freq: 4 },
    ),
    accept: fc.option(
      fc.constantFrom('text/html', 'application/json', '*/*', 'image/png', '', 'text/html;q=x'),
      { nil: undefined, freq: 4 },
    ),
    contentEncoding: fc.option(
      fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom('gzip', 'deflate') },
        {
          weight: 1,
          arbitrary: fc.constantFrom('br', 'identity', 'compress', 'x-unknown', 'gzip, gzip'),
        },
      ),
      { nil: undefined, freq: 4 },
    ),
    origin: fc.boolean(),
    extraHeader: fc.option(
      fc.tuple(
        fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/).filter((n) => !HOP_BY_HOP.has(n)),
        headerValue,
      ),
      { nil: undefined, freq: 4 },
    ),
  }),
)

interface Built {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly payload: Buffer | undefined
}

/** Fills a body up to `size` bytes (a long parameter for forms, filler otherwise). */
function padded(body: Buffer, size: number, form: boolean): Buffer {
  if (size <= body.length) return body
  const fill = form ? `${body.length > 0 ? '&' : ''}pad=` : ''
  const room = size - body.length - fill.length
  return Buffer.concat([body, Buffer.from(fill + 'x'.repeat(Math.max(0, room)))])
}

function build(r: GeneratedRequest, real: Readonly<Record<Real, string>>): Built {
  // own keys only: fast-check draws '__proto__' and 'constructor' too, which `in` finds on the
  // prototype
  const fill = (v: string): string => (Object.hasOwn(real, v) ? real[v as Real] : v)
  const filled = (list: readonly (readonly [string, string])[]) =>
    list.map(([k, v]) => [k, fill(v)] as const)
  let params = filled(r.params)
  const again = r.repeat === undefined ? undefined : params[r.repeat % Math.max(1, params.length)]
  // RFC 6749 §3.1, §3.2: a repeated parameter is a malformed request
  if (again) params = [...params, again]
  const endpoint = ENDPOINTS[r.endpoint] ?? ENDPOINTS[0]
  const path = variantPath(endpoint?.path ?? '/', r.path, r.segment, r.at)
  const query = asRequestTarget(encode(filled(r.query), r.queryEncoding, r.at))
  let payload: Buffer | undefined
  switch (r.body) {
    case 'none':
      payload = r.size > 0 ? padded(Buffer.alloc(0), r.size, false) : undefined
      break
    case 'params':
      payload = padded(Buffer.from(encode(params, r.encoding, r.at)), r.size, true)
      break
    case 'json':
      payload = padded(Buffer.from(JSON.stringify(Object.fromEntries(params))), r.size, false)
      break
    case 'bytes':
      payload = padded(Buffer.from(r.bytes), r.size, false)
      break
  }
  const headers: Record<string, string> = {}
  if (r.contentType !== undefined) headers['content-type'] = r.contentType
  if (r.authorization !== undefined) {
    headers.authorization = r.authorization.replace(/\$(access|refresh|id|service)/, (m) => fill(m))
  }
  if (r.cookie !== undefined) headers.cookie = r.cookie
  if (r.accept !== undefined) headers.accept = r.accept
  if (r.contentEncoding !== undefined) headers['content-encoding'] = r.contentEncoding
  if (r.origin) {
    headers.origin = 'https://attacker.example'
    headers['access-control-request-method'] = r.method
  }
  if (r.extraHeader) headers[r.extraHeader[0]] = r.extraHeader[1]
  return { method: r.method, url: query ? `${path}?${query}` : path, headers, payload }
}

interface Target {
  readonly app: App
  readonly real: Readonly<Record<Real, string>>
  /** Server errors logged while the property ran, for the failure message. */
  readonly errors: Record<string, unknown>[]
  /** Whether a valid request must still succeed after each case. */
  readonly followUp: boolean
}

const show = (built: Built): string =>
  `${built.method} ${built.url.slice(0, 200)} ${JSON.stringify(built.headers).slice(0, 300)} body ${String(built.payload?.length ?? 0)} bytes`

/** The rules every answer follows. */
function expectWellFormed(
  built: Built,
  res: Awaited<ReturnType<App['server']['inject']>>,
  target: Target,
): void {
  const what = `${show(built)} -> ${String(res.statusCode)} ${res.payload.slice(0, 300)}`
  const logged = target.errors.at(-1)
  expect(
    res.statusCode,
    `${what}${logged ? ` (logged: ${JSON.stringify(logged)})` : ''}`,
  ).toBeLessThan(500)
  const route = res.request.route.path
  const type = String(res.headers['content-type'] ?? '')
  const json = /^application\/json\b/.test(type)
  // a CORS preflight answers with headers only
  if (built.method === 'OPTIONS' && res.statusCode < 300 && res.payload === '') return
  if (PAGES.has(route) && !json) return
  if (route === '/assets/{file}' && res.statusCode === 200) return
  expect(json, `expected a JSON answer: ${what}`).toBe(true)
  if (built.method === 'HEAD') return
  const body = JSON.parse(res.payload) as unknown
  expect(body !== null && typeof body === 'object' && !Array.isArray(body), what).toBe(true)
  if (res.statusCode < 400) return
  const { error, error_description: description } = body as Record<string, unknown>
  expect(REGISTERED.has(String(error)), `unregistered error code: ${what}`).toBe(true)
  expect(DECIDED[error as OAuthErrorCode] ?? [], `undecided status: ${what}`).toContain(
    res.statusCode,
  )
  expect(typeof description === 'string' && ERROR_CHARS.test(description), what).toBe(true)
  // RFC 6750 §3: the user-info endpoint challenges every 401
  if (route === '/auth/user-info' && res.statusCode === 401)
    expect(String(res.headers['www-authenticate']), what).toMatch(/^Bearer /)
  // RFC 6749 §5.2: a client that tried the Authorization header gets its challenge
  if (error === 'invalid_client' && built.headers.authorization !== undefined)
    expect(res.headers['www-authenticate'], what).toBeDefined()
  if (res.statusCode === 429) expect(res.headers['retry-after'], what).toBeDefined()
}

/** A valid request after the generated ones: the server still works. */
async function expectServing(app: App): Promise<void> {
  const res = await app.server.inject({
    method: 'POST',
    url: '/auth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'grant_type=client_credentials&client_id=service-client&client_secret=service-secret',
  })
  expect(res.statusCode, `a valid token request failed afterwards: ${res.payload}`).toBe(200)
  expect(JSON.parse(res.payload)).toHaveProperty('access_token')
}

/** Errors nothing handled: on a real server each one would end the process. */
const uncaught: unknown[] = []
const onUncaught = (err: unknown): void => {
  uncaught.push(err)
}

/** Property: every generated request gets a well-formed answer, and the server keeps serving. */
const wellFormed =
  (target: Target) =>
  async (requests: readonly GeneratedRequest[]): Promise<void> => {
    for (const r of requests) {
      const built = build(r, target.real)
      const res = await target.app.server.inject({
        method: built.method,
        url: built.url,
        headers: built.headers,
        ...(built.payload ? { payload: built.payload } : {}),
      })
      expectWellFormed(built, res, target)
      // a decoder's error surfaces a moment after the answer
      if (built.headers['content-encoding']) await new Promise((r) => setTimeout(r, 5))
      expect(uncaught.splice(0).map(String), `unhandled error after ${show(built)}`).toEqual([])
    }
    if (target.followUp) await expectServing(target.app)
  }
const requestsArb = fc.array(requestArb, { minLength: 1, maxLength: 3 })

/**
 * Breaks a server from outside its code so that hapi's own refusals (its 400s, 404s, 415s…)
 * leave in hapi's shape: an extension that runs before the oauth-errors plugin's answers them
 * as hapi would have.
 */
function hapiErrorsUnrendered(app: App): void {
  app.server.ext(
    'onPreResponse',
    (request, h) => {
      const response = request.response
      if (!('isBoom' in response) || !response.isBoom || response instanceof OAuthError)
        return h.continue
      return h.response(response.output.payload).code(response.output.statusCode)
    },
    { before: ['oauth-errors'] },
  )
}

async function targetWith(
  config: Partial<Config>,
  followUp: boolean,
  extend: (app: App) => void = () => undefined,
): Promise<Target> {
  const errors: Record<string, unknown>[] = []
  const app = await testApp(config, {
    log: (event, detail) => {
      if (event === 'error') errors.push(detail ?? {})
    },
  })
  extend(app)
  const alice = await signInAndRedeem(app, {
    username: 'alice',
    password: 'wonderland',
    scope: 'openid profile offline_access',
  })
  const service = await app.server.inject({
    method: 'POST',
    url: '/auth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'grant_type=client_credentials&client_id=service-client&client_secret=service-secret',
  })
  const real: Record<Real, string> = {
    $access: alice.access_token ?? '',
    $refresh: alice.refresh_token ?? '',
    $id: alice.id_token ?? '',
    $service: (JSON.parse(service.payload) as { access_token: string }).access_token,
  }
  return { app, real, errors, followUp }
}

/** The sabotage proof: a counterexample against `weak` that the healthy target passes. */
async function expectCaught(weak: Target, healthy: Target): Promise<void> {
  const details = await fc.check(fc.asyncProperty(requestsArb, wellFormed(weak)), sabotageParams)
  expect(details.failed, `no counterexample in ${String(details.numRuns)} runs`).toBe(true)
  const [example] = details.counterexample ?? []
  if (example === undefined) throw new Error('no counterexample recorded')
  await wellFormed(healthy)(example)
}

let healthy: Target
beforeAll(async () => {
  console.info(
    `robustness properties: ${String(RUNS)} runs, seed ${String(SEED)} (PROPERTY_SEED replays)`,
  )
  healthy = await targetWith({ rateLimits: limits(1e9) }, true)
  process.on('uncaughtException', onUncaught)
}, 60_000)
afterAll(async () => {
  process.off('uncaughtException', onUncaught)
  await healthy.app.stop()
})

describe('every endpoint under generated requests (property-based)', () => {
  test(
    'never a 5xx, always JSON with a registered code and its status, and still serving',
    async () => {
      await fc.assert(fc.asyncProperty(requestsArb, wellFormed(healthy)), params)
      expect(healthy.errors).toEqual([])
    },
    timeout,
  )

  test(
    'the same while rate-limited (429 temporarily_unavailable)',
    async () => {
      const limited = await targetWith({ rateLimits: limits(3, 3600) }, false)
      try {
        await fc.assert(fc.asyncProperty(requestsArb, wellFormed(limited)), {
          ...params,
          numRuns: Math.max(10, Math.ceil(RUNS / 4)),
        })
      } finally {
        await limited.app.stop()
      }
    },
    timeout,
  )

  test(
    'the property fails against a server that leaves hapi’s own errors unrendered',
    async () => {
      const broken = await targetWith({ rateLimits: limits(1e9) }, true, hapiErrorsUnrendered)
      try {
        await expectCaught(broken, healthy)
      } finally {
        await broken.app.stop()
      }
    },
    timeout,
  )

  test(
    'the property fails against a server that stops serving valid requests',
    async () => {
      const exhausted = await targetWith({ rateLimits: limits(4, 3600) }, true)
      try {
        await expectCaught(exhausted, healthy)
      } finally {
        await exhausted.app.stop()
      }
    },
    timeout,
  )
})
