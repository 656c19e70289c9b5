import { createHmac, createPublicKey, type JsonWebKey } from 'node:crypto'
import fc from 'fast-check'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import { check, type CheckContext } from '../harness/check.ts'
import type { HttpResponse, RequestOptions } from '../harness/http.ts'
import type { TargetClient } from '../harness/target.ts'
import {
  about,
  CheckFailure,
  ERROR_CHARS,
  expectActive,
  expectBearerChallenge,
  expectInactive,
  expectJsonObject,
  expectOAuthError,
  expectStatus,
  expectThat,
} from '../harness/expect.ts'
import { idTokenOf, signIn } from '../harness/flows.ts'
import {
  BRANDING,
  clientCredentialsRaw,
  credentials,
  INTROSPECT,
  REVOKE,
  TOKEN,
  USER_INFO,
} from '../harness/requests.ts'

/*
 * Property-based checks that are safe against a production deployment: a small, fixed number
 * of generated cases (IDP_PROPERTY_RUNS raises it), a seed recorded in the notes
 * (IDP_PROPERTY_SEED replays it), a hard cap on the requests that shrinking may add, and
 * nothing that could hurt a server beyond an error answer (no compressed bodies, nothing over
 * 16 KiB, no header over 8 KiB).
 */

/** The run count and seed of a property check, noted on the result. */
function propertyBudget(
  ctx: Pick<CheckContext, 'note'>,
  env: NodeJS.ProcessEnv = process.env,
): { runs: number; seed: number } {
  const runs = Math.min(10_000, Math.max(1, Math.floor(Number(env.IDP_PROPERTY_RUNS) || 25)))
  const seed = Number.isInteger(Number(env.IDP_PROPERTY_SEED ?? 'x'))
    ? Number(env.IDP_PROPERTY_SEED)
    : Math.floor(Math.random() * 0x7fffffff)
  ctx.note(
    `${String(runs)} generated cases (IDP_PROPERTY_RUNS), seed ${String(seed)} (IDP_PROPERTY_SEED=${String(seed)} replays)`,
  )
  return { runs, seed }
}

/** Extra requests shrinking may make after a failure; then the smallest case so far is kept. */
const SHRINK_BUDGET = 40

/**
 * Runs a property against the target; fails with the shrunk counterexample and its seed. Past
 * `runs + SHRINK_BUDGET` cases the predicate stops sending (and holds), which ends shrinking.
 */
async function holds<T>(
  what: string,
  arb: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  runs: number,
  seed: number,
  show: (value: T) => string,
): Promise<void> {
  let sent = 0
  const details = await fc.check(
    fc.asyncProperty(arb, async (value) => {
      if (++sent > runs + SHRINK_BUDGET) return
      await predicate(value)
    }),
    { numRuns: runs, seed },
  )
  if (!details.failed) return
  const [example] = details.counterexample ?? []
  const error = details.errorInstance
  throw new CheckFailure(
    `${what}: ${error instanceof Error ? error.message : String(error)} — counterexample ` +
      `${example === undefined ? '?' : show(example)} (after ${String(details.numRuns)} cases, ` +
      `shrunk ${String(details.numShrinks)} times; seed ${String(details.seed)}, path ` +
      `${String(details.counterexamplePath)})`,
  )
}

// ---------------------------------------------------------------------------------------------
// ROBUST-01: malformed requests

/**
 * The status that goes with each registered code (RFC 6749 §5.2, RFC 6750 §3.1, RFC 7009
 * §2.2.1, RFC 6585 §4); invalid_request also as the transport-level refusals 404, 405, 413 and
 * 415 (ARCHITECTURE.md). Nothing in 5xx: bad input is never the server's error.
 */
const STATUSES: Readonly<Record<string, readonly number[]>> = {
  invalid_request: [400, 404, 405, 413, 415],
  invalid_client: [400, 401],
  invalid_grant: [400],
  unauthorized_client: [400],
  unsupported_grant_type: [400],
  invalid_scope: [400],
  unsupported_token_type: [400],
  invalid_token: [401],
  insufficient_scope: [403],
  access_denied: [403],
  temporarily_unavailable: [429],
}

type Endpoint =
  typeof TOKEN | typeof INTROSPECT | typeof REVOKE | typeof USER_INFO | typeof BRANDING

/** A generated request: a defect that makes it an error by itself, plus format noise. */
interface Malformed {
  readonly defect: string
  readonly method: string
  readonly params: readonly (readonly [string, string])[]
  readonly body: 'form' | 'json' | 'text' | 'multipart' | 'broken-escapes' | 'none'
  readonly query: readonly (readonly [string, string])[]
  readonly authorization: string | undefined
  readonly padding: number
}

type Pairs = readonly (readonly [string, string])[]

const JUNK_KEYS = ['foo', 'x', 'state', 'nonce', 'resource', 'audience', 'a[b]', '__proto__', '']
const visible = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
})
const junkValue = fc.oneof(visible, fc.string({ unit: 'binary', maxLength: 20 }))
const junk: fc.Arbitrary<Pairs> = fc.array(
  fc.tuple(fc.oneof(fc.constantFrom(...JUNK_KEYS), fc.stringMatching(/^[a-z_]{1,12}$/)), junkValue),
  { maxLength: 4 },
)
const randomSecret = fc.stringMatching(/^[A-Za-z0-9_-]{8,40}$/)

/** The defects that make a request to `endpoint` an error whatever else it carries. */
function defects(endpoint: Endpoint, main: TargetClient): fc.Arbitrary<[string, Pairs]> {
  const auth = credentials(main)
  const bad = (name: string, pairs: fc.Arbitrary<Pairs>) =>
    pairs.map((p): [string, Pairs] => [name, p])
  const clientDefects = (rest: Pairs) => [
    bad('no client authentication', fc.constant(rest)),
    bad(
      'a wrong client secret',
      randomSecret.map((s): Pairs => [...rest, ['client_id', main.id], ['client_secret', `${s}!`]]),
    ),
    bad(
      'an unknown client',
      fc
        .tuple(randomSecret, randomSecret)
        .map(([id, s]): Pairs => [...rest, ['client_id', `robust-${id}`], ['client_secret', s]]),
    ),
  ]
  const withAuth = (pairs: Pairs): Pairs => [...pairs, ...Object.entries(auth)]
  switch (endpoint) {
    case TOKEN:
      return fc.oneof(
        ...clientDefects([['grant_type', 'client_credentials']]),
        bad('no grant_type', fc.constant(withAuth([]))),
        bad(
          'an unsupported grant_type',
          fc
            .oneof(fc.constantFrom('password', 'implicit', 'urn:x', 'CLIENT_CREDENTIALS'), visible)
            .filter(
              (g) => !['authorization_code', 'refresh_token', 'client_credentials'].includes(g),
            )
            .map((g): Pairs => withAuth([['grant_type', g]])),
        ),
        bad(
          'an unknown authorization code',
          fc
            .tuple(randomSecret, fc.stringMatching(/^[A-Za-z0-9._~-]{43,64}$/))
            .map(([code, verifier]): Pairs =>
              withAuth([
                ['grant_type', 'authorization_code'],
                ['code', code],
                ['redirect_uri', main.redirectUri ?? 'https://client.example/callback'],
                ['code_verifier', verifier],
              ]),
            ),
        ),
        bad(
          'an unknown refresh token',
          randomSecret.map((t): Pairs =>
            withAuth([
              ['grant_type', 'refresh_token'],
              ['refresh_token', t],
            ]),
          ),
        ),
      )
    case INTROSPECT:
    case REVOKE:
      return fc.oneof(
        ...clientDefects([['token', 'robust-not-a-token']]),
        bad('no token', fc.constant(withAuth([]))),
      )
    case USER_INFO:
    case BRANDING:
      return bad(endpoint === BRANDING ? 'no client_id' : 'a garbage bearer token', fc.constant([]))
  }
}

const garbageToken = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9\-._~+/]{1,200}=*$/),
  fc.tuple(randomSecret, randomSecret, randomSecret).map(([a, b, c]) => `${a}.${b}.${c}`),
  visible.filter((s) => s.trim() !== ''),
)

const POST_METHODS = ['GET', 'PUT', 'PATCH', 'DELETE']
const GET_METHODS = ['POST', 'PUT', 'DELETE']

function malformed(endpoint: Endpoint, main: TargetClient): fc.Arbitrary<Malformed> {
  const get = endpoint === BRANDING || endpoint === USER_INFO
  return fc
    .record({
      defect: fc.constant(''),
      method: fc.oneof(
        { weight: 4, arbitrary: fc.constant(get ? 'GET' : 'POST') },
        { weight: 1, arbitrary: fc.constantFrom(...(get ? GET_METHODS : POST_METHODS)) },
      ),
      params: fc.constant([]),
      body: get
        ? fc.constant<Malformed['body']>('none')
        : fc.oneof(
            { weight: 4, arbitrary: fc.constant<Malformed['body']>('form') },
            {
              weight: 2,
              arbitrary: fc.constantFrom<Malformed['body']>(
                'json',
                'text',
                'multipart',
                'broken-escapes',
              ),
            },
          ),
      query: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: junk }),
      authorization:
        endpoint === USER_INFO ? garbageToken.map((t) => `Bearer ${t}`) : fc.constant(undefined),
      padding: fc.oneof(
        { weight: 4, arbitrary: fc.constant(0) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 15 * 1024 }) },
      ),
    })
    .chain((base) =>
      fc
        .tuple(defects(endpoint, main), junk, fc.option(fc.nat(), { nil: undefined }))
        .map(([[defect, pairs], noise, repeat]): Malformed => {
          let params: Pairs = [...pairs, ...noise]
          const again =
            repeat === undefined ? undefined : params[repeat % Math.max(1, params.length)]
          // RFC 6749 §3.2, §5.2: a repeated parameter is itself invalid_request
          if (again) params = [...params, again]
          const get = base.method === 'GET'
          return {
            ...base,
            defect: again ? `${defect}, ${again[0]} repeated` : defect,
            params,
            body: get ? 'none' : base.body,
            query: endpoint === BRANDING && get ? [...base.query, ...params] : base.query,
          }
        }),
    )
}

const form = (pairs: Pairs): string => new URLSearchParams(pairs.map(([k, v]) => [k, v])).toString()

/** The request as the harness sends it. */
function toRequest(m: Malformed): RequestOptions {
  const pad: Pairs = m.padding > 0 ? [['padding', 'x'.repeat(m.padding)]] : []
  const params = [...m.params, ...pad]
  const headers: Record<string, string> = {}
  if (m.authorization !== undefined) headers.authorization = m.authorization
  let body: string | undefined
  switch (m.body) {
    case 'none':
      break
    case 'form':
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = form(params)
      break
    case 'json':
      headers['content-type'] = 'application/json'
      body = JSON.stringify(Object.fromEntries(params))
      break
    case 'text':
      headers['content-type'] = 'text/plain'
      body = form(params)
      break
    case 'multipart': {
      const boundary = 'robust-boundary-7d3f'
      headers['content-type'] = `multipart/form-data; boundary=${boundary}`
      body = `${params
        .map(
          ([k, v]) =>
            `--${boundary}\r\nContent-Disposition: form-data; name="${k.replace(/["\r\n]/g, '_')}"\r\n\r\n${v}\r\n`,
        )
        .join('')}--${boundary}--\r\n`
      break
    }
    case 'broken-escapes':
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = `${form(params)}&%zz=%&bad%E0%A4=%ED%A0%80`
      break
  }
  return {
    method: m.method,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(m.query.length > 0 ? { query: Object.fromEntries(m.query) } : {}),
  }
}

const showMalformed = (path: string) => (m: Malformed) => {
  const r = toRequest(m)
  return `${String(r.method)} ${path} with ${m.defect} (body ${m.body}, ${String(r.body?.length ?? 0)} bytes${
    m.query.length > 0 ? `, query ${JSON.stringify(m.query).slice(0, 120)}` : ''
  }${m.authorization ? `, Authorization ${JSON.stringify(m.authorization.slice(0, 60))}` : ''})`
}

/** A refusal in the JSON error shape with a registered code and the status that goes with it. */
function expectRegisteredError(res: HttpResponse, path: Endpoint): void {
  // ARCHITECTURE.md: never a 5xx for bad input
  expectThat(res.status < 500, `HTTP ${String(res.status)}: a 5xx for a malformed request`)
  expectThat(res.status >= 400, `HTTP ${String(res.status)}: the malformed request was accepted`)
  // INTERFACE.md §7: {error, error_description} as JSON
  const body = expectJsonObject(res, 'error body')
  const code = typeof body.error === 'string' ? body.error : undefined
  const statuses = code === undefined ? undefined : STATUSES[code]
  expectThat(
    statuses !== undefined,
    `error ${JSON.stringify(body.error)} is not a registered code for these endpoints`,
  )
  expectOAuthError(res, statuses, code)
  // RFC 6749 App. A.7, A.8
  expectThat(
    ERROR_CHARS.test(String(code)) && ERROR_CHARS.test(String(body.error_description)),
    `error or error_description outside the RFC 6749 App. A characters: ${JSON.stringify(body).slice(0, 200)}`,
  )
  // RFC 6750 §3: every 401 of a protected resource carries the Bearer challenge
  if (path === USER_INFO && res.status === 401)
    expectBearerChallenge(res, 401, undefined, 'user-info refusal')
}

check('ROBUST-01', async (ctx) => {
  const { runs, seed } = propertyBudget(ctx)
  const endpoints: Endpoint[] = [TOKEN, INTROSPECT, REVOKE, USER_INFO, BRANDING]
  const each = Math.max(1, Math.ceil(runs / endpoints.length))
  for (const path of endpoints) {
    await holds(
      path,
      malformed(path, ctx.target.clients.main),
      async (m) => expectRegisteredError(await ctx.http.request(path, toRequest(m)), path),
      each,
      seed,
      showMalformed(path),
    )
  }
})

// ---------------------------------------------------------------------------------------------
// ROBUST-02: mutated access tokens

const b64 = (value: string | Uint8Array): string => Buffer.from(value).toString('base64url')
const object = (segment: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>

type Segment = 'header' | 'payload' | 'signature'
const SEGMENTS: readonly Segment[] = ['header', 'payload', 'signature']

type ForgedClaim =
  | 'exp-past'
  | 'iat-future'
  | 'nbf-future'
  | 'no-exp'
  | 'iss-trailing-slash'
  | 'iss-case'
  | 'iss-confusable'
  | 'iss-added-path'
  | 'aud-look-alike'
  | 'typ-jwt'
  | 'sub'
  | 'scope'

/** A black-box mutation: no key of the target is needed, only its public JWKS. */
type TokenMutation =
  | { readonly kind: 'alg-none'; readonly alg: string; readonly signature: 'empty' | 'kept' }
  | {
      readonly kind: 'hmac-with-public-key'
      readonly key: 'spki-pem' | 'pkcs1-pem' | 'spki-der' | 'jwk-json' | 'modulus'
    }
  | { readonly kind: 'alg-swap'; readonly alg: string }
  | { readonly kind: 'kid'; readonly kid: 'unknown' | 'case' | 'padded' | 'missing' | 'number' }
  | { readonly kind: 'embedded-key'; readonly header: 'jwk' | 'jku' | 'x5u' }
  | { readonly kind: 'bit-flip'; readonly segment: Segment; readonly bit: number }
  | { readonly kind: 'truncate'; readonly keep: number }
  | {
      readonly kind: 'shape'
      readonly shape:
        | 'no-signature'
        | 'two-segments'
        | 'four-segments'
        | 'empty-segment'
        | 'swapped-segments'
        | 'padding'
        | 'whitespace'
        | 'invalid-char'
      readonly segment: Segment
      readonly at: number
    }
  | { readonly kind: 'splice'; readonly segment: Segment; readonly from: number }
  | {
      readonly kind: 'forged-claims'
      readonly claim: ForgedClaim
      readonly kid: 'target-kid' | 'attacker-kid'
    }
  | { readonly kind: 'duplicate-member'; readonly member: 'alg' | 'iss' | 'aud' | 'exp' }
  | { readonly kind: 'segment-text'; readonly segment: 'header' | 'payload'; readonly text: string }
  | { readonly kind: 'oversized'; readonly length: number }

const mutationArb: fc.Arbitrary<TokenMutation> = fc.oneof(
  fc.record({
    kind: fc.constant('alg-none'),
    alg: fc.constantFrom('none', 'None', 'NONE'),
    signature: fc.constantFrom('empty', 'kept'),
  }),
  fc.record({
    kind: fc.constant('hmac-with-public-key'),
    key: fc.constantFrom('spki-pem', 'pkcs1-pem', 'spki-der', 'jwk-json', 'modulus'),
  }),
  fc.record({
    kind: fc.constant('alg-swap'),
    alg: fc.constantFrom('RS384', 'RS512', 'PS256', 'ES256', 'HS256', 'EdDSA', 'rs256'),
  }),
  fc.record({
    kind: fc.constant('kid'),
    kid: fc.constantFrom('unknown', 'case', 'padded', 'missing', 'number'),
  }),
  fc.record({ kind: fc.constant('embedded-key'), header: fc.constantFrom('jwk', 'jku', 'x5u') }),
  fc.record({
    kind: fc.constant('bit-flip'),
    segment: fc.constantFrom(...SEGMENTS),
    bit: fc.nat(),
  }),
  fc.record({ kind: fc.constant('truncate'), keep: fc.nat() }),
  fc.record({
    kind: fc.constant('shape'),
    shape: fc.constantFrom(
      'no-signature',
      'two-segments',
      'four-segments',
      'empty-segment',
      'swapped-segments',
      'padding',
      'whitespace',
      'invalid-char',
    ),
    segment: fc.constantFrom(...SEGMENTS),
    at: fc.nat(),
  }),
  fc.record({ kind: fc.constant('splice'), segment: fc.constantFrom(...SEGMENTS), from: fc.nat() }),
  fc.record({
    kind: fc.constant('forged-claims'),
    claim: fc.constantFrom<ForgedClaim>(
      'exp-past',
      'iat-future',
      'nbf-future',
      'no-exp',
      'iss-trailing-slash',
      'iss-case',
      'iss-confusable',
      'iss-added-path',
      'aud-look-alike',
      'typ-jwt',
      'sub',
      'scope',
    ),
    kid: fc.constantFrom('target-kid', 'attacker-kid'),
  }),
  fc.record({
    kind: fc.constant('duplicate-member'),
    member: fc.constantFrom('alg', 'iss', 'aud', 'exp'),
  }),
  fc.record({
    kind: fc.constant('segment-text'),
    segment: fc.constantFrom('header', 'payload'),
    text: fc.oneof(fc.constantFrom('', 'null', '[]', '"x"', '{', '42'), visible),
  }),
  fc.record({ kind: fc.constant('oversized'), length: fc.integer({ min: 8193, max: 12_000 }) }),
)

/** What a mutation may use: the attacker's own key, the target's JWKS, other real tokens. */
interface Forge {
  readonly attacker: { readonly privateKey: CryptoKey; readonly jwk: JWK }
  readonly published: readonly JsonWebKey[]
  readonly others: readonly string[]
}

async function rs256(privateKey: CryptoKey, input: string): Promise<string> {
  const data = new TextEncoder().encode(input)
  return b64(new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', privateKey, data)))
}

function publicKeyBytes(jwk: JsonWebKey, form: string): string | Buffer {
  const key = createPublicKey({ key: jwk, format: 'jwk' })
  if (form === 'spki-pem') return key.export({ type: 'spki', format: 'pem' })
  if (form === 'pkcs1-pem') return key.export({ type: 'pkcs1', format: 'pem' })
  if (form === 'spki-der') return key.export({ type: 'spki', format: 'der' })
  if (form === 'jwk-json') return JSON.stringify(jwk)
  return Buffer.from(jwk.n ?? '', 'base64url')
}

const NOW = (): number => Math.floor(Date.now() / 1000)

function forgedPayload(
  payload: Record<string, unknown>,
  claim: ForgedClaim,
): Record<string, unknown> {
  const iss = String(payload.iss)
  const aud = Array.isArray(payload.aud) ? String(payload.aud[0]) : String(payload.aud)
  const changed: Record<string, Record<string, unknown>> = {
    'exp-past': { exp: NOW() - 3600 },
    'iat-future': { iat: NOW() + 3600 },
    'nbf-future': { nbf: NOW() + 3600 },
    'no-exp': { exp: undefined },
    'iss-trailing-slash': { iss: `${iss}/` },
    'iss-case': { iss: iss.toUpperCase() === iss ? iss.toLowerCase() : iss.toUpperCase() },
    'iss-confusable': {
      iss: iss.replace(/[aeo]/, (c) => ({ a: '\u0430', e: '\u0435', o: '\u043e' })[c] ?? c),
    },
    'iss-added-path': { iss: `${iss}/tenant` },
    'aud-look-alike': { aud: `${aud} ` },
    'typ-jwt': {},
    sub: { sub: `${String(payload.sub)}-other` },
    scope: {
      scope: `${typeof payload.scope === 'string' ? payload.scope : ''} admin:users`.trim(),
    },
  }
  return { ...payload, ...changed[claim] }
}

/** Applies a mutation to a real token. Signatures, where any, are the attacker's. */
async function mutate(m: TokenMutation, token: string, forge: Forge): Promise<string> {
  const [h = '', p = '', s = ''] = token.split('.')
  const header = object(h)
  const payload = object(p)
  const segments = [h, p, s]
  const json = (v: unknown) => b64(JSON.stringify(v))
  const attackerSigned = async (hd: Record<string, unknown>, pl: Record<string, unknown>) => {
    const input = `${json({ ...hd, alg: 'RS256' })}.${json(pl)}`
    return `${input}.${await rs256(forge.attacker.privateKey, input)}`
  }
  switch (m.kind) {
    case 'alg-none':
      return `${json({ ...header, alg: m.alg })}.${p}.${m.signature === 'kept' ? s : ''}`
    case 'hmac-with-public-key': {
      const jwk = forge.published.find((k) => k.kid === header.kid) ?? forge.published[0]
      const input = `${json({ ...header, alg: 'HS256' })}.${p}`
      if (!jwk) return `${input}.`
      return `${input}.${createHmac('sha256', publicKeyBytes(jwk, m.key)).update(input).digest('base64url')}`
    }
    case 'alg-swap':
      return `${json({ ...header, alg: m.alg })}.${p}.${s}`
    case 'kid': {
      const kid = String(header.kid)
      const hd: Record<string, unknown> = { ...header }
      if (m.kid === 'missing') delete hd.kid
      else
        hd.kid = {
          unknown: `${kid}-unknown`,
          case: kid.toUpperCase() === kid ? kid.toLowerCase() : kid.toUpperCase(),
          padded: ` ${kid}`,
          number: 1,
        }[m.kid]
      return `${json(hd)}.${p}.${s}`
    }
    case 'embedded-key': {
      // RFC 8725 §3.10: key material the token brings along must not be trusted
      const hd = { ...header, kid: 'attacker' }
      const extra =
        m.header === 'jwk'
          ? { jwk: forge.attacker.jwk }
          : { [m.header]: 'https://attacker.example/jwks.json' }
      return attackerSigned({ ...hd, ...extra }, payload)
    }
    case 'bit-flip': {
      const i = SEGMENTS.indexOf(m.segment)
      const bytes = Buffer.from(segments[i] ?? '', 'base64url')
      if (bytes.length === 0) return `${token}A`
      const bit = m.bit % (bytes.length * 8)
      bytes[bit >> 3] = (bytes[bit >> 3] ?? 0) ^ (1 << (bit & 7))
      segments[i] = b64(bytes)
      return segments.join('.')
    }
    case 'truncate':
      return token.slice(0, 1 + (m.keep % (token.length - 1)))
    case 'shape': {
      const i = SEGMENTS.indexOf(m.segment)
      const seg = segments[i] ?? ''
      const inside = 1 + (m.at % Math.max(1, seg.length - 1))
      switch (m.shape) {
        case 'no-signature':
          return `${h}.${p}`
        case 'two-segments':
          return segments.filter((_, j) => j !== i).join('.')
        case 'four-segments':
          return `${token}.${i === 2 ? '' : seg}`
        case 'empty-segment':
          segments[i] = ''
          return segments.join('.')
        case 'swapped-segments':
          return i === 2 ? `${p}.${h}.${s}` : `${h}.${s}.${p}`
        case 'padding':
          segments[i] = `${seg}${m.at % 2 === 0 ? '=' : '=='}`
          return segments.join('.')
        case 'whitespace':
          segments[i] = `${seg.slice(0, inside)} ${seg.slice(inside)}`
          return segments.join('.')
        case 'invalid-char':
          segments[i] = `${seg.slice(0, inside)}${'!*$#@~'[m.at % 6] ?? '!'}${seg.slice(inside)}`
          return segments.join('.')
      }
    }
    // falls through: the inner switch returns for every shape
    case 'splice': {
      const other = forge.others[m.from % Math.max(1, forge.others.length)] ?? ''
      const i = SEGMENTS.indexOf(m.segment)
      segments[i] = other.split('.')[i] ?? ''
      return segments.join('.')
    }
    case 'forged-claims': {
      const hd = {
        ...header,
        ...(m.claim === 'typ-jwt' ? { typ: 'JWT' } : {}),
        ...(m.kid === 'attacker-kid' ? { kid: 'attacker' } : {}),
      }
      return attackerSigned(hd, forgedPayload(payload, m.claim))
    }
    case 'duplicate-member': {
      // RFC 7519 §4: a parser must use the last member; that one is wrong here
      const target = m.member === 'alg' ? header : payload
      const last = {
        alg: '"none"',
        iss: JSON.stringify(`${String(payload.iss)}/`),
        aud: '"attacker"',
        exp: String(NOW() - 3600),
      }[m.member]
      const text = JSON.stringify(target)
      const doubled = b64(`${text.slice(0, -1)},"${m.member}":${last}}`)
      return m.member === 'alg' ? `${doubled}.${p}.${s}` : `${h}.${doubled}.${s}`
    }
    case 'segment-text':
      return m.segment === 'header' ? `${b64(m.text)}.${p}.${s}` : `${h}.${b64(m.text)}.${s}`
    case 'oversized': {
      const pad = 'x'.repeat(Math.ceil((m.length - token.length) * 0.75) + 2)
      return `${h}.${json({ ...payload, pad })}.${s}`
    }
  }
}

/** RFC 6750 §2.1 b64token: what an Authorization header may carry as a bearer token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

/** The base tokens: a user's (user-info answers it) and, when configured, a service token. */
interface RealToken {
  readonly name: string
  readonly token: string
  readonly client: TargetClient
  readonly userInfoStatus: number
}

async function realTokens(ctx: CheckContext): Promise<{ tokens: RealToken[]; idToken: string }> {
  const set = await signIn(ctx, { scope: 'openid' })
  const tokens: RealToken[] = [
    {
      name: 'user token',
      token: set.accessToken,
      client: ctx.target.clients.main,
      userInfoStatus: 200,
    },
  ]
  const service = ctx.target.clients.service
  if (service) {
    const res = await clientCredentialsRaw(ctx, service)
    expectStatus(res, 200, 'client_credentials token for the check')
    const token = expectJsonObject(res, 'client_credentials token').access_token
    if (typeof token === 'string')
      tokens.push({ name: 'service token', token, client: service, userInfoStatus: 0 })
  }
  return { tokens, idToken: idTokenOf(set) }
}

/** The unmutated tokens must work, or refusing their mutations would prove nothing. */
async function expectAccepted(ctx: CheckContext, tokens: readonly RealToken[], when: string) {
  for (const t of tokens) {
    if (t.userInfoStatus > 0) {
      const res = await ctx.http.request(USER_INFO, {
        headers: { authorization: `Bearer ${t.token}` },
      })
      expectStatus(res, t.userInfoStatus, `user-info with the unmutated ${t.name} ${when}`)
    }
    const res = await ctx.http.postForm(INTROSPECT, { token: t.token, ...credentials(t.client) })
    about(`the unmutated ${t.name} ${when}`, () => expectActive(res, t.name))
  }
}

async function userInfoRefuses(ctx: CheckContext, token: string): Promise<void> {
  const header = B64TOKEN.test(token) && token.length <= 7000
  // a token the header cannot carry goes in the form body (RFC 6750 §2.2)
  const res = header
    ? await ctx.http.request(USER_INFO, { headers: { authorization: `Bearer ${token}` } })
    : await ctx.http.request(USER_INFO, { method: 'POST', form: { access_token: token } })
  expectThat(res.status < 500, `user-info answered HTTP ${String(res.status)} (never a 5xx)`)
  // RFC 6750 §3.1: invalid_token is 401; a token outside the b64token syntax may be invalid_request
  expectBearerChallenge(res, header ? 401 : [400, 401], undefined, 'user-info')
}

check('ROBUST-02', async (ctx) => {
  const { runs, seed } = propertyBudget(ctx)
  const { tokens, idToken } = await realTokens(ctx)
  await expectAccepted(ctx, tokens, 'before the mutations')
  const jwks = (await ctx.http.get('/.well-known/jwks.json')).json as { keys?: JsonWebKey[] }
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  const forge: Forge = {
    attacker: { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'attacker' } },
    published: jwks.keys ?? [],
    others: [idToken, ...tokens.map((t) => t.token)],
  }
  const arb = fc.record({ base: fc.nat(tokens.length - 1), m: mutationArb })
  await holds(
    'a mutated access token',
    arb,
    async ({ base, m }) => {
      const real = tokens[base] ?? tokens[0]
      if (!real) return
      const token = await mutate(m, real.token, forge)
      if (token === real.token) return
      await userInfoRefuses(ctx, token)
      // RFC 7662 §2.2: as the client it was issued to, still exactly {"active":false}
      const res = await ctx.http.postForm(INTROSPECT, { token, ...credentials(real.client) })
      expectInactive(res, 'the mutated token')
    },
    runs,
    seed,
    ({ base, m }) => `${tokens[base]?.name ?? '?'} with ${JSON.stringify(m)}`,
  )
  await expectAccepted(ctx, tokens, 'after the mutations')
})
