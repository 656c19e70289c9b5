import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import {
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type JSONWebKeySet,
  type JWK,
} from 'jose'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { App } from '../app.ts'
import { RATE_LIMIT_GROUPS, type Config } from '../config.ts'
import { signInAndRedeem, testApp } from '../test-helpers.ts'
// The deliberate exception to "server/ imports nothing from conformance/" (eslint.config.js):
// the JWT primitives of the suite's black-box mutations (ROBUST-02) are shared, so the two
// property tests cannot drift apart on how a segment is encoded, signed or keyed by HMAC; the
// mutations themselves are ROBUST-02's (every one must be refused by any verifier), and only
// those that need the token's own signing key (re-signed claims and headers) are kept here.
import {
  b64,
  mutate as blackBoxMutate,
  mutationArb as blackBoxArb,
  object,
  publicKeyBytes,
  rs256,
  SEGMENTS,
  SWAPPED_ALGS,
  type Forge,
  type Segment,
  type TokenMutation,
} from '../../conformance/harness/fuzz/jwt.ts'
import {
  createVerifier,
  VerifyError,
  type AccessTokenClaims,
  type Verifier,
  type VerifierOptions,
} from './verifier.ts'
import { params, RUNS, sabotageParams, SEED } from '../property-runs.ts'

// Property-based tests of access-token verification (RFC 9068 §4, RFC 8725 §3.1): generated
// mutations of valid tokens are refused by createVerifier, by /auth/user-info and by
// /auth/introspect; valid tokens with arbitrary claims under rotating keys are accepted.
// PROPERTY_RUNS sets the number of generated cases (npm run test:deep: 10,000), PROPERTY_SEED
// replays a run; a failure prints the shrunk counterexample with its seed and path.

const timeout = 30_000 + RUNS * 25

/** The server's clock and the verifiers' `now`: fixed, so time mutations are exact. */
const NOW = Math.floor(Date.now() / 1000)
/** createVerifier's default clock tolerance; time mutations go beyond it. */
const TOLERANCE = 5
const YEAR = 365 * 24 * 3600
const ISSUER = 'https://idp.test'
const LOCAL_ISSUER = 'https://issuer.example'
const LOCAL_AUDIENCE = 'resource-api'

const GENEROUS: Config['rateLimits'] = Object.fromEntries(
  RATE_LIMIT_GROUPS.map((g) => [g, { limit: 1e9, window: 60 }]),
) as Config['rateLimits']

/** An RS256 signing key and its published half. */
interface Signer {
  readonly kid: string
  readonly jwk: JWK
  readonly privateKey: CryptoKey
  sign(input: string): Promise<string>
}

function rs256Signer(kid: string, privateKey: CryptoKey, jwk: JWK): Signer {
  return {
    kid,
    jwk,
    privateKey,
    sign: (input) => rs256(privateKey, input),
  }
}

async function localSigner(kid: string): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  return rs256Signer(kid, privateKey, {
    ...(await exportJWK(publicKey)),
    kid,
    alg: 'RS256',
    use: 'sig',
  })
}

/** A valid token to mutate, the key that signed it and the verifier that accepts it. */
interface Base {
  readonly token: string
  readonly signer: Signer
  readonly options: VerifierOptions
  /** Other valid tokens, for splices. */
  readonly others: readonly string[]
  /** Kids of the other published keys. */
  readonly otherKids: readonly string[]
  /** The form credentials of the client the token was issued to (server bases). */
  readonly client?: { readonly client_id: string; readonly client_secret: string }
}

// ---------------------------------------------------------------------------------------------
// Mutations

const CONFUSABLES: Readonly<Record<string, string>> = {
  a: '\u0430',
  c: '\u0441',
  d: '\u0501',
  e: '\u0435',
  h: '\u04bb',
  i: '\u0456',
  l: '\u04cf',
  o: '\u043e',
  p: '\u0440',
  s: '\u0455',
  x: '\u0445',
  y: '\u0443',
  '-': '\u2010',
  '.': '\u2024',
  '/': '\u2215',
  ':': '\u2236',
}

type LookAlikeHow =
  | 'trailing-slash'
  | 'case'
  | 'added-path'
  | 'confusable'
  | 'whitespace'
  | 'scheme'
  | 'port'
  | 'userinfo'
  | 'suffix'
  | 'truncated'
  | 'percent'
  | 'fullwidth'

interface LookAlike {
  readonly how: LookAlikeHow
  readonly at: number
  readonly extra: string
}

const indexesWhere = (s: string, keep: (c: string) => boolean): number[] =>
  Array.from(s).flatMap((c, i) => (keep(c) ? [i] : []))

function replaceAt(s: string, keep: (c: string) => boolean, at: number, by: (c: string) => string) {
  const chars = Array.from(s)
  const where = indexesWhere(s, keep)
  const i = where[at % Math.max(1, where.length)]
  if (i === undefined) return s
  chars[i] = by(chars[i] ?? '')
  return chars.join('')
}

/** A string that looks like `s` and is not `s` (iss and aud look-alikes). */
function lookAlike(s: string, { how, at, extra }: LookAlike): string {
  const url = /^https?:\/\/[^/]+/.exec(s)?.[0]
  const out = ((): string => {
    switch (how) {
      case 'trailing-slash':
        return `${s}/`
      case 'case':
        return replaceAt(
          s,
          (c) => /[a-z]/i.test(c),
          at,
          (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()),
        )
      case 'added-path':
        return `${s}/${extra || 'api'}`
      case 'confusable':
        return replaceAt(
          s,
          (c) => c in CONFUSABLES,
          at,
          (c) => CONFUSABLES[c] ?? c,
        )
      case 'whitespace': {
        const ws = [' ', '\t', '\u200b', '\u00a0', '\n'][at % 5] ?? ' '
        return at % 2 === 0 ? `${ws}${s}` : `${s}${ws}`
      }
      case 'scheme':
        return url ? s.replace(/^https:/, 'http:') : `urn:${s}`
      case 'port':
        return url ? s.replace(url, `${url}:443`) : `${s}:443`
      case 'userinfo':
        return url ? s.replace(url, `${url}@attacker.example`) : `${s}@attacker.example`
      case 'suffix':
        return `${s}${extra || '.attacker.example'}`
      case 'truncated':
        return s.slice(0, -1 - (at % Math.min(3, Math.max(1, s.length - 1))))
      case 'percent':
        return replaceAt(
          s,
          (c) => /[a-z.]/i.test(c),
          at,
          (c) =>
            encodeURIComponent(c) === c ? `%${c.charCodeAt(0).toString(16).toUpperCase()}` : c,
        )
      case 'fullwidth':
        return replaceAt(
          s,
          (c) => /[!-~]/.test(c),
          at,
          (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0),
        )
    }
  })()
  return out === s ? `${s}/` : out
}

type Retype = 'flipped-scalar' | 'nested-array' | 'null' | 'object' | 'boolean'
type JsonSegment = 'header' | 'payload'

/**
 * How a valid token is broken; every variant must be refused. The black-box mutations are the
 * suite's (harness/fuzz/jwt.ts: no key of the target needed); the rest are white-box: they
 * re-sign with the token's own key, so only the claims or header they change can refuse them.
 */
type Mutation =
  | { readonly kind: 'black-box'; readonly m: TokenMutation }
  | { readonly kind: 'alg-swap'; readonly alg: string }
  | {
      readonly kind: 'kid'
      readonly kid: 'unknown' | 'other-published' | 'case' | 'padded' | 'number'
      readonly value: string
    }
  | { readonly kind: 'std-alphabet'; readonly segment: Segment; readonly at: number }
  | { readonly kind: 'time'; readonly claim: 'exp' | 'iat' | 'nbf'; readonly beyond: number }
  | { readonly kind: 'drop-claim'; readonly claim: 'exp' | 'iat' | 'iss' | 'aud' | 'sub' }
  | {
      readonly kind: 'claim-type'
      readonly claim: 'exp' | 'iat' | 'nbf' | 'sub' | 'iss' | 'aud'
      readonly as: Retype
    }
  | { readonly kind: 'look-alike'; readonly claim: 'iss' | 'aud'; readonly like: LookAlike }
  | { readonly kind: 'typ'; readonly typ: string | number | null | readonly string[] }
  | { readonly kind: 'duplicate'; readonly which: number; readonly resign: boolean }
  | {
      readonly kind: 'segment-text'
      readonly segment: JsonSegment
      readonly content: string
      readonly resign: boolean
    }
  | { readonly kind: 'oversized'; readonly length: number; readonly resign: boolean }

/** Duplicate members whose last (RFC 7519 §4: the one a parser must use) value is refused. */
const DUPLICATES: readonly {
  readonly segment: JsonSegment
  readonly member: string
  readonly value: (original: unknown) => unknown
}[] = [
  { segment: 'header', member: 'alg', value: () => 'none' },
  { segment: 'header', member: 'alg', value: () => 'HS256' },
  { segment: 'header', member: 'typ', value: () => 'JWT' },
  { segment: 'header', member: 'kid', value: () => 'unknown-kid' },
  { segment: 'payload', member: 'iss', value: (v) => `${String(v)}/` },
  { segment: 'payload', member: 'aud', value: () => 'attacker-client' },
  { segment: 'payload', member: 'exp', value: () => NOW - 3600 },
  { segment: 'payload', member: 'nbf', value: () => NOW + 3600 },
  { segment: 'payload', member: 'sub', value: () => 42 },
]

const lookAlikeArb: fc.Arbitrary<LookAlike> = fc.record({
  how: fc.constantFrom<LookAlikeHow>(
    'trailing-slash',
    'case',
    'added-path',
    'confusable',
    'whitespace',
    'scheme',
    'port',
    'userinfo',
    'suffix',
    'truncated',
    'percent',
    'fullwidth',
  ),
  at: fc.nat(64),
  extra: fc.stringMatching(/^[a-z0-9._~-]{0,12}$/),
})

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  blackBoxArb.map((m) => ({ kind: 'black-box' as const, m })),
  fc.record({ kind: fc.constant('alg-swap'), alg: fc.constantFrom(...SWAPPED_ALGS) }),
  fc.record({
    kind: fc.constant('kid'),
    kid: fc.constantFrom('unknown', 'other-published', 'case', 'padded', 'number'),
    value: fc.string({ minLength: 1, maxLength: 40 }),
  }),
  fc.record({
    kind: fc.constant('std-alphabet'),
    segment: fc.constantFrom<Segment>('header', 'payload', 'signature'),
    at: fc.nat(),
  }),
  fc.record({
    kind: fc.constant('time'),
    claim: fc.constantFrom('exp', 'iat', 'nbf'),
    beyond: fc.oneof(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 1, max: 20 * YEAR })),
  }),
  fc.record({
    kind: fc.constant('drop-claim'),
    claim: fc.constantFrom('exp', 'iat', 'iss', 'aud', 'sub'),
  }),
  fc.record({
    kind: fc.constant('claim-type'),
    claim: fc.constantFrom('exp', 'iat', 'nbf', 'sub', 'iss', 'aud'),
    as: fc.constantFrom<Retype>('flipped-scalar', 'nested-array', 'null', 'object', 'boolean'),
  }),
  fc.record({
    kind: fc.constant('look-alike'),
    claim: fc.constantFrom('iss', 'aud'),
    like: lookAlikeArb,
  }),
  fc.record({
    kind: fc.constant('typ'),
    typ: fc.constantFrom<string | number | null | readonly string[]>(
      'JWT',
      'jwt',
      'id_token',
      'at+jwt ',
      'at-jwt',
      'application/jwt',
      'at+jws',
      'dpop+jwt',
      '',
      null,
      1,
      ['at+jwt'],
    ),
  }),
  fc.record({
    kind: fc.constant('duplicate'),
    which: fc.nat(DUPLICATES.length - 1),
    resign: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('segment-text'),
    segment: fc.constantFrom<JsonSegment>('header', 'payload'),
    content: fc.oneof(
      fc.constantFrom('', 'null', '[]', '[{}]', '"at+jwt"', '42', 'true', '{', '{"alg":"RS256"}}'),
      fc.string({ unit: 'binary', maxLength: 64 }),
    ),
    resign: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('oversized'),
    length: fc.oneof(
      fc.integer({ min: 8193, max: 9000 }),
      fc.integer({ min: 8193, max: 64 * 1024 }),
    ),
    resign: fc.boolean(),
  }),
)

const timeClaim = (claim: 'exp' | 'iat' | 'nbf', beyond: number): number =>
  claim === 'exp' ? NOW - TOLERANCE - beyond : NOW + TOLERANCE + beyond

/** A value of the wrong JSON type for the claim (numbers for dates, strings for names). */
function retyped(value: unknown, as: Retype): unknown {
  switch (as) {
    case 'flipped-scalar':
      return typeof value === 'number' ? String(value) : 42
    case 'nested-array':
      return [[value]]
    case 'null':
      return null
    case 'object':
      return { value }
    case 'boolean':
      return true
  }
}

const B64_TO_STD: Readonly<Record<string, string>> = { '-': '+', _: '/' }

/** What the black-box mutations may use: the attacker's key, the published keys, other tokens. */
function forgeOf(base: Base): Forge {
  const published = [base.signer.jwk, ...base.otherKids.map((kid) => signers.get(kid)?.jwk)]
  return {
    attacker: { privateKey: attacker.privateKey, jwk: attacker.jwk },
    published: published.filter((k): k is JWK => k !== undefined),
    others: base.others,
  }
}

/** Applies a mutation to a valid token. Re-signing mutations sign with the token's own key. */
async function mutate(m: Mutation, base: Base): Promise<string> {
  const [h = '', p = '', s = ''] = base.token.split('.')
  const header = object(h)
  const payload = object(p)
  const sign = async (headerText: string, payloadText: string): Promise<string> => {
    const input = `${b64(headerText)}.${b64(payloadText)}`
    return `${input}.${await base.signer.sign(input)}`
  }
  const resigned = (hd: object, pl: object) => sign(JSON.stringify(hd), JSON.stringify(pl))
  const kept = (hd: object, pl: object) =>
    `${b64(JSON.stringify(hd))}.${b64(JSON.stringify(pl))}.${s}`
  switch (m.kind) {
    case 'black-box':
      return blackBoxMutate(m.m, base.token, forgeOf(base))
    case 'alg-swap':
      return resigned({ ...header, alg: m.alg }, payload)
    case 'kid': {
      const kid = String(header.kid)
      const swapped: Record<string, unknown> = { ...header }
      swapped.kid = {
        unknown: m.value === kid ? `${m.value}x` : m.value,
        'other-published':
          base.otherKids[m.value.length % Math.max(1, base.otherKids.length)] ?? `${kid}x`,
        case: kid === kid.toUpperCase() ? kid.toLowerCase() : kid.toUpperCase(),
        padded: ` ${kid}`,
        number: 1,
      }[m.kid]
      return resigned(swapped, payload)
    }
    case 'std-alphabet': {
      // RFC 7515 §2: base64url, never the standard alphabet, even over the right key's signature
      const segments = [h, p, s]
      const i = SEGMENTS.indexOf(m.segment)
      const seg = segments[i] ?? ''
      const at = m.at % (seg.length + 1)
      const std = seg.replace(/[-_]/g, (c) => B64_TO_STD[c] ?? c)
      segments[i] = std === seg ? `${seg.slice(0, at)}+${seg.slice(at)}` : std
      return segments.join('.')
    }
    case 'time':
      return resigned(header, { ...payload, [m.claim]: timeClaim(m.claim, m.beyond) })
    case 'drop-claim': {
      const dropped = Object.entries(payload).filter(([name]) => name !== m.claim)
      return resigned(header, Object.fromEntries(dropped))
    }
    case 'claim-type':
      return resigned(header, { ...payload, [m.claim]: retyped(payload[m.claim] ?? NOW, m.as) })
    case 'look-alike': {
      const value = payload[m.claim]
      const like = typeof value === 'string' ? lookAlike(value, m.like) : `${String(value)}/`
      return resigned(header, { ...payload, [m.claim]: like })
    }
    case 'typ': {
      const typed: Record<string, unknown> = { ...header, typ: m.typ }
      return resigned(typed, payload)
    }
    case 'duplicate': {
      const dup = DUPLICATES[m.which] ?? DUPLICATES[0]
      if (!dup) return `${base.token}x`
      const target = dup.segment === 'header' ? header : payload
      const json = JSON.stringify(target)
      const value = JSON.stringify(dup.value(target[dup.member]))
      const doubled = `${json.slice(0, -1)},${JSON.stringify(dup.member)}:${value}}`
      const hd = dup.segment === 'header' ? doubled : JSON.stringify(header)
      const pl = dup.segment === 'payload' ? doubled : JSON.stringify(payload)
      return m.resign ? sign(hd, pl) : `${b64(hd)}.${b64(pl)}.${s}`
    }
    case 'segment-text': {
      const hd = m.segment === 'header' ? m.content : JSON.stringify(header)
      const pl = m.segment === 'payload' ? m.content : JSON.stringify(payload)
      return m.resign ? sign(hd, pl) : `${b64(hd)}.${b64(pl)}.${s}`
    }
    case 'oversized': {
      const pad = 'x'.repeat(Math.ceil((m.length - base.token.length) * 0.75) + 2)
      return (m.resign ? resigned : kept)(header, { ...payload, pad })
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Valid claim sets

const RESERVED = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'scope',
  'roles',
  'permissions',
  'org_id',
  'client_id',
])

const scopeToken = fc.stringMatching(/^[\x21\x23-\x5b\x5d-\x7e]{1,16}$/)
const near = (min: number, max: number) =>
  fc.oneof(
    fc.integer({ min, max }),
    fc.integer({ min: -TOLERANCE - 1, max: TOLERANCE + 1 }).filter((x) => x >= min && x <= max),
  )

/** Arbitrary valid access-token claims for LOCAL_ISSUER / LOCAL_AUDIENCE at NOW. */
const claimsArb = fc
  .record(
    {
      sub: fc.string({ minLength: 1, unit: 'grapheme', maxLength: 40 }),
      aud: fc.oneof(
        fc.constant<string | string[]>(LOCAL_AUDIENCE),
        fc
          .tuple(fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }), fc.nat())
          .map(([others, at]) => others.toSpliced(at % (others.length + 1), 0, LOCAL_AUDIENCE)),
      ),
      exp: near(-TOLERANCE + 1, 10 * YEAR).map((d) => NOW + d),
      iat: near(-10 * YEAR, TOLERANCE).map((d) => NOW + d),
      nbf: near(-10 * YEAR, TOLERANCE).map((d) => NOW + d),
      jti: fc.string({ maxLength: 40 }),
      scope: fc.array(scopeToken, { maxLength: 6 }).map((a) => a.join(' ')),
      roles: fc.array(fc.string({ maxLength: 20 }), { maxLength: 4 }),
      permissions: fc.array(fc.string({ maxLength: 20 }), { maxLength: 4 }),
      org_id: fc.string({ maxLength: 20 }),
      client_id: fc.string({ maxLength: 40 }),
    },
    { requiredKeys: ['sub', 'aud', 'exp', 'iat'] },
  )
  .chain((claims) =>
    fc
      .dictionary(
        fc.string({ maxLength: 12 }).filter((k) => !RESERVED.has(k)),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 4 },
      )
      .map((extra) => ({ ...extra, ...claims, iss: LOCAL_ISSUER })),
  )

const HEADER_RESERVED = new Set(['alg', 'kid', 'typ', 'crit', 'b64', 'jku', 'jwk', 'x5u', 'x5c'])
/** RFC 9068 §2.1 typ spellings that mean at+jwt (media types are case-insensitive). */
const headerArb = fc.record({
  typ: fc.constantFrom('at+jwt', 'application/at+jwt', 'AT+JWT', 'Application/At+Jwt'),
  extra: fc.dictionary(
    fc.string({ maxLength: 8 }).filter((k) => !HEADER_RESERVED.has(k)),
    fc.jsonValue({ maxDepth: 1 }),
    { maxKeys: 3 },
  ),
})

/** A rotation: the published keys (a shuffled subset of the pool) and the one that signs. */
const rotationArb = fc
  .shuffledSubarray([0, 1, 2, 3], { minLength: 1 })
  .chain((published) =>
    fc.record({ published: fc.constant(published), signer: fc.constantFrom(...published) }),
  )

async function mint(
  signer: Signer,
  claims: Record<string, unknown>,
  header: { typ: string; extra: Record<string, unknown> },
): Promise<string> {
  const hd = { ...header.extra, alg: 'RS256', kid: signer.kid, typ: header.typ }
  const input = `${b64(JSON.stringify(hd))}.${b64(JSON.stringify(claims))}`
  return `${input}.${await signer.sign(input)}`
}

// ---------------------------------------------------------------------------------------------
// Properties

type VerifierFactory = (options: VerifierOptions) => Verifier

/** The verifier must refuse with a typed error that does not echo the token. */
async function expectRefused(verifier: Verifier, token: string): Promise<void> {
  let claims: AccessTokenClaims
  try {
    claims = await verifier.verify(token)
  } catch (err) {
    if (!(err instanceof VerifyError)) throw new Error(`untyped refusal: ${String(err)}`)
    // the key set is local: "could not be fetched" would misreport a crafted token
    if (err.code === 'jwks_unavailable') throw new Error(`mis-typed refusal: ${err.message}`)
    const [, payload = ''] = token.split('.')
    if (payload.length >= 12 && err.message.includes(payload))
      throw new Error('the error message echoes the token')
    return
  }
  throw new Error(`a mutated token was accepted (sub ${JSON.stringify(claims.sub)})`)
}

let idp: App
let serverJwks: JSONWebKeySet
let serverSigner: Signer
const pool: Signer[] = []
/** A key no verifier trusts: the one that embedded-key forgeries are signed with. */
let attacker: Signer
let localJwks: JSONWebKeySet
const real: Record<'alice' | 'bob' | 'service', Base> = {} as never
let localOthers: string[] = []
/** The signers of every key the tests know: weakened verifiers re-sign with them. */
const signers = new Map<string, Signer>()

const MAIN = { client_id: 'conformance-client', client_secret: 'conformance-secret' }
const SERVICE = { client_id: 'service-client', client_secret: 'service-secret' }

async function serverTokens(app: App): Promise<Record<'alice' | 'bob' | 'service' | 'id', string>> {
  const alice = await signInAndRedeem(app, {
    username: 'alice',
    password: 'wonderland',
    scope: 'openid profile email read:documents',
  })
  const bob = await signInAndRedeem(app, {
    username: 'bob',
    password: 'builder',
    scope: 'openid read:documents',
  })
  const res = await app.server.inject({
    method: 'POST',
    url: '/auth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'client_credentials', ...SERVICE }).toString(),
  })
  const service = (JSON.parse(res.payload) as { access_token: string }).access_token
  return {
    alice: alice.access_token ?? '',
    bob: bob.access_token ?? '',
    service,
    id: alice.id_token ?? '',
  }
}

async function signerOf(app: App): Promise<Signer> {
  const { kid, key } = await app.deps.keys.signingKey(NOW)
  const { keys } = await app.deps.keys.jwks(NOW)
  const jwk = keys.find((k) => k.kid === kid)
  if (!jwk) throw new Error('the signing key is not published')
  return rs256Signer(kid, key, { ...jwk })
}

function realBases(
  tokens: Record<'alice' | 'bob' | 'service' | 'id', string>,
  signer: Signer,
  jwks: JSONWebKeySet,
): Record<'alice' | 'bob' | 'service', Base> {
  const options: VerifierOptions = {
    issuer: ISSUER,
    audience: [MAIN.client_id, SERVICE.client_id],
    jwks,
    now: () => NOW,
  }
  const others = [tokens.alice, tokens.bob, tokens.service, tokens.id]
  const base = (token: string, client: typeof MAIN): Base => ({
    token,
    signer,
    options,
    others,
    otherKids: [],
    client,
  })
  return {
    alice: base(tokens.alice, MAIN),
    bob: base(tokens.bob, MAIN),
    service: base(tokens.service, SERVICE),
  }
}

const generous = { rateLimits: GENEROUS }

beforeAll(async () => {
  console.info(
    `verifier properties: ${String(RUNS)} runs, seed ${String(SEED)} (PROPERTY_SEED replays)`,
  )
  idp = await testApp(generous, { clock: () => NOW })
  serverJwks = JSON.parse(
    (await idp.server.inject('/.well-known/jwks.json')).payload,
  ) as JSONWebKeySet
  serverSigner = await signerOf(idp)
  Object.assign(real, realBases(await serverTokens(idp), serverSigner, serverJwks))
  pool.push(...(await Promise.all([0, 1, 2, 3].map((i) => localSigner(`rotation-${String(i)}`)))))
  localJwks = { keys: pool.map((k) => k.jwk) }
  attacker = await localSigner('attacker')
  for (const s of [serverSigner, ...pool]) signers.set(s.kid, s)
  localOthers = await Promise.all(
    pool.map((k, i) =>
      mint(
        k,
        {
          iss: LOCAL_ISSUER,
          aud: LOCAL_AUDIENCE,
          sub: `other-${String(i)}`,
          exp: NOW + 60,
          iat: NOW,
        },
        { typ: 'at+jwt', extra: {} },
      ),
    ),
  )
}, 60_000)
afterAll(async () => {
  await idp.stop()
})

type Who = 'alice' | 'bob' | 'service'
type BaseSpec =
  { readonly real: Who } | { readonly claims: Record<string, unknown>; readonly key: number }

/** A valid token to start from: one of the server's, or one minted with arbitrary claims. */
const baseArb: fc.Arbitrary<BaseSpec> = fc.oneof(
  fc.record({ real: fc.constantFrom<Who>('alice', 'bob', 'service') }),
  fc.record({ claims: claimsArb, key: fc.nat(3) }),
)

async function materialize(spec: BaseSpec): Promise<Base> {
  if ('real' in spec) return real[spec.real]
  const signer = pool[spec.key] ?? serverSigner
  return {
    token: await mint(signer, spec.claims, { typ: 'at+jwt', extra: {} }),
    signer,
    options: { issuer: LOCAL_ISSUER, audience: LOCAL_AUDIENCE, jwks: localJwks, now: () => NOW },
    others: localOthers,
    otherKids: pool.filter((k) => k !== signer).map((k) => k.kid),
  }
}

/** Property: every generated mutation of a valid token is refused by the verifier. */
const mutationsRefused =
  (factory: VerifierFactory) =>
  async ({ spec, m }: MutationCase) => {
    const base = await materialize(spec)
    const token = await mutate(m, base)
    fc.pre(token !== base.token)
    await expectRefused(factory(base.options), token)
  }
interface MutationCase {
  readonly spec: BaseSpec
  readonly m: Mutation
}
const mutationCase: fc.Arbitrary<MutationCase> = fc.record({ spec: baseArb, m: mutationArb })

/** Property: valid tokens with arbitrary claims, signed by any key of a rotation, are accepted. */
const validAccepted =
  (factory: VerifierFactory) =>
  async ({ rotation, claims, header }: ValidCase) => {
    const signer = pool[rotation.signer]
    if (!signer) throw new Error('no such key')
    const jwks = { keys: rotation.published.map((i) => pool[i]?.jwk ?? {}) }
    const token = await mint(signer, claims, header)
    const verified = await factory({
      issuer: LOCAL_ISSUER,
      audience: LOCAL_AUDIENCE,
      jwks,
      now: () => NOW,
    }).verify(token)
    expect(verified.raw).toEqual(JSON.parse(JSON.stringify(claims)))
    expect(verified.sub).toBe(claims.sub)
    expect(verified.scopes).toEqual(
      (typeof claims.scope === 'string' ? claims.scope : '').split(' ').filter(Boolean),
    )
    expect(verified.roles).toEqual(claims.roles ?? [])
    expect(verified.org_id).toBe(claims.org_id)
  }
interface ValidCase {
  readonly rotation: { readonly published: number[]; readonly signer: number }
  readonly claims: Record<string, unknown>
  readonly header: { readonly typ: string; readonly extra: Record<string, unknown> }
}
const validCase: fc.Arbitrary<ValidCase> = fc.record({
  rotation: rotationArb,
  claims: claimsArb,
  header: headerArb,
})

// ---------------------------------------------------------------------------------------------
// Weakened verifiers: each must make the property fail

/** Re-signs header and payload as they are with the key the kid names (a verifier that skips the signature). */
async function resignAsIs(
  token: string,
  edit?: (header: Record<string, unknown>) => void,
): Promise<string> {
  const [h = '', p = ''] = token.split('.')
  let header: Record<string, unknown>
  try {
    header = object(h)
  } catch {
    return token
  }
  const signer = signers.get(String(header.kid))
  if (!signer || token.split('.').length !== 3) return token
  const hd = edit ? b64(JSON.stringify((edit(header), header))) : h
  return `${hd}.${p}.${await signer.sign(`${hd}.${p}`)}`
}

const claimOf = (token: string, claim: string): unknown => {
  try {
    return decodeJwt(token)[claim]
  } catch {
    return undefined
  }
}

const weakened: Record<string, VerifierFactory> = {
  'skips the signature check': (o) => ({
    verify: async (t) => createVerifier(o).verify(t === undefined ? t : await resignAsIs(t)),
  }),
  'skips the typ check': (o) => ({
    verify: async (t) =>
      createVerifier(o).verify(
        t === undefined ? t : await resignAsIs(t, (hd) => (hd.typ = 'at+jwt')),
      ),
  }),
  'trusts any issuer': (o) => ({
    verify: (t) => {
      const iss = t === undefined ? undefined : claimOf(t, 'iss')
      return createVerifier({ ...o, issuer: typeof iss === 'string' ? iss : o.issuer }).verify(t)
    },
  }),
  'trusts any audience': (o) => ({
    verify: (t) => {
      const aud = t === undefined ? undefined : claimOf(t, 'aud')
      return createVerifier({ ...o, audience: typeof aud === 'string' ? aud : o.audience }).verify(
        t,
      )
    },
  }),
  'ignores the clock': (o) => createVerifier({ ...o, clockTolerance: 40 * YEAR }),
  'tolerates padding and whitespace': (o) => ({
    verify: (t) => createVerifier(o).verify(t?.replace(/[\s=]/g, '')),
  }),
  // the algorithm-confusion hole (RFC 8725 §2.1): any HMAC algorithm, keyed with the bytes of
  // whichever form of the published public key the library would hand it; one form and one
  // algorithm only made the counterexample so rare that some seeds drew none in 3000 runs
  'lets HMAC keyed with the public key through': (o) => ({
    async verify(t) {
      const [h = '', p = '', s = ''] = (t ?? '').split('.')
      try {
        const { alg, kid } = decodeProtectedHeader(t ?? '')
        const jwk = o.jwks?.keys.find((k) => k.kid === kid)
        const hash = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[alg ?? '']
        if (hash && jwk)
          for (const form of ['spki-pem', 'pkcs1-pem', 'spki-der', 'jwk-json', 'modulus']) {
            const mac = createHmac(hash, publicKeyBytes(jwk, form)).update(`${h}.${p}`)
            if (mac.digest('base64url') === s)
              return { raw: decodeJwt(t ?? '') } as AccessTokenClaims
          }
      } catch {
        // not even a JWS: let the real verifier refuse it
      }
      return createVerifier(o).verify(t)
    },
  }),
}

/**
 * A sabotage proof: the property must find a counterexample against the weakened target, and
 * that counterexample must hold against the healthy one (so it is the weakening that was found).
 */
async function expectCaught<T>(
  arb: fc.Arbitrary<T>,
  weak: (value: T) => Promise<void>,
  healthy: (value: T) => Promise<void>,
): Promise<void> {
  const details = await fc.check(fc.asyncProperty(arb, weak), sabotageParams)
  expect(details.failed, `no counterexample in ${String(details.numRuns)} runs`).toBe(true)
  const [example] = details.counterexample ?? []
  if (example === undefined) throw new Error('no counterexample recorded')
  await healthy(example)
}

describe('createVerifier (property-based)', () => {
  test(
    'refuses every generated mutation of a valid token',
    async () => {
      await fc.assert(fc.asyncProperty(mutationCase, mutationsRefused(createVerifier)), params)
    },
    timeout,
  )

  test(
    'accepts valid tokens with arbitrary claims under rotating keys',
    async () => {
      await fc.assert(fc.asyncProperty(validCase, validAccepted(createVerifier)), params)
    },
    timeout,
  )

  for (const [how, factory] of Object.entries(weakened)) {
    test(
      `the mutation property fails against a verifier that ${how}`,
      async () => {
        await expectCaught(
          mutationCase,
          mutationsRefused(factory),
          mutationsRefused(createVerifier),
        )
      },
      timeout,
    )
  }

  test(
    'the acceptance property fails against a verifier that knows only the first key',
    async () => {
      const firstKeyOnly: VerifierFactory = (o) =>
        createVerifier({ ...o, jwks: { keys: (o.jwks?.keys ?? []).slice(0, 1) } })
      await expectCaught(validCase, validAccepted(firstKeyOnly), validAccepted(createVerifier))
    },
    timeout,
  )

  test(
    'the acceptance property fails against a verifier without clock tolerance',
    async () => {
      const strict: VerifierFactory = (o) => createVerifier({ ...o, clockTolerance: 0 })
      await expectCaught(validCase, validAccepted(strict), validAccepted(createVerifier))
    },
    timeout,
  )
})

// ---------------------------------------------------------------------------------------------
// The same mutations at the reference server's user-info and introspection endpoints

interface Idp {
  readonly app: App
  readonly bases: Record<'alice' | 'bob' | 'service', Base>
}

/**
 * Breaks a server from outside its code so that it accepts unsigned access tokens (RFC 8725
 * §2.1's alg none): before user-info's or introspection's handler runs, an unsigned token is
 * signed with the server's own key, so the server's verifier takes it as one it issued.
 */
function acceptUnsignedTokens(app: App): void {
  const unsigned = /^[\w-]+\.[\w-]*\.$/
  const signed = async (token: string): Promise<string | undefined> => {
    if (!unsigned.test(token)) return undefined
    const [header, payload] = token.split('.') as [string, string]
    let claims: Record<string, unknown>
    try {
      claims = object(header)
    } catch {
      return undefined
    }
    if (claims.alg !== 'none') return undefined
    const signer = await signerOf(app)
    const input = `${b64(JSON.stringify({ ...claims, alg: 'RS256', kid: claims.kid ?? signer.kid }))}.${payload}`
    return `${input}.${await signer.sign(input)}`
  }
  app.server.ext('onPreHandler', async (request, h) => {
    if (request.path !== '/auth/user-info' && request.path !== '/auth/introspect') return h.continue
    const headers = request.headers as Record<string, string | undefined>
    const bearer = /^Bearer (\S+)$/i.exec(headers.authorization ?? '')?.[1]
    const fromHeader = bearer === undefined ? undefined : await signed(bearer)
    if (fromHeader !== undefined) headers.authorization = `Bearer ${fromHeader}`
    const form = request.payload as Record<string, unknown> | null
    for (const name of ['access_token', 'token'] as const) {
      const value = form?.[name]
      const resigned = typeof value === 'string' ? await signed(value) : undefined
      if (form && resigned !== undefined) form[name] = resigned
    }
    return h.continue
  })
}

async function idpWith(extend: (app: App) => void): Promise<Idp> {
  const app = await testApp(generous, { clock: () => NOW })
  extend(app)
  const jwks = JSON.parse(
    (await app.server.inject('/.well-known/jwks.json')).payload,
  ) as JSONWebKeySet
  return { app, bases: realBases(await serverTokens(app), await signerOf(app), jwks) }
}

/** The form limit of the POST endpoints: a bigger body is refused before any token is read. */
const FORM_LIMIT = 16 * 1024

const form = (values: Record<string, string>): string => new URLSearchParams(values).toString()

function userInfo(app: App, token: string, method: 'GET' | 'POST') {
  if (method === 'GET')
    return app.server.inject({
      method,
      url: '/auth/user-info',
      headers: { authorization: `Bearer ${token}` },
    })
  const payload = form({ access_token: token })
  return app.server.inject({
    method,
    url: '/auth/user-info',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload,
  })
}

const introspectForm = (token: string, client: typeof MAIN, hint: string | undefined) =>
  form({ token, ...client, ...(hint === undefined ? {} : { token_type_hint: hint }) })

const introspect = (app: App, payload: string) =>
  app.server.inject({
    method: 'POST',
    url: '/auth/introspect',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload,
  })

/** A body over the form limit is 413 invalid_request (ARCHITECTURE.md), whatever it holds. */
function expectTooLarge(res: { statusCode: number; payload: string }): void {
  expect(res.statusCode, res.payload).toBe(413)
  expect(JSON.parse(res.payload)).toMatchObject({ error: 'invalid_request' })
}

/** Property: user-info answers 401 invalid_token with a challenge, introspection {"active":false}. */
const serverRefuses =
  (target: Idp) =>
  async ({ who, m, method, hint }: ServerCase) => {
    const { app, bases } = target
    const base = bases[who]
    const token = await mutate(m, base)
    fc.pre(token !== base.token)
    const ui = await userInfo(app, token, method)
    if (method === 'POST' && form({ access_token: token }).length > FORM_LIMIT) expectTooLarge(ui)
    else {
      // RFC 6750 §3.1: an invalid token is 401 invalid_token, with the challenge
      expect(ui.statusCode, ui.payload).toBe(401)
      expect(JSON.parse(ui.payload)).toMatchObject({ error: 'invalid_token' })
      expect(ui.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/)
    }
    const body = introspectForm(token, base.client ?? MAIN, hint)
    const res = await introspect(app, body)
    if (body.length > FORM_LIMIT) expectTooLarge(res)
    else {
      // RFC 7662 §2.2: anything not active is exactly {"active":false}
      expect(res.statusCode, res.payload).toBe(200)
      expect(JSON.parse(res.payload)).toStrictEqual({ active: false })
    }
  }
interface ServerCase {
  readonly who: Who
  readonly m: Mutation
  readonly method: 'GET' | 'POST'
  readonly hint: string | undefined
}
const serverCase: fc.Arbitrary<ServerCase> = fc.record({
  who: fc.constantFrom<Who>('alice', 'bob', 'service'),
  m: mutationArb,
  method: fc.constantFrom<'GET' | 'POST'>('GET', 'POST'),
  hint: fc.constantFrom(undefined, 'access_token', 'refresh_token'),
})

async function expectBasesAccepted({ app, bases }: Idp): Promise<void> {
  for (const who of ['alice', 'bob', 'service'] as const) {
    const base = bases[who]
    const ui = await userInfo(app, base.token, 'GET')
    // the service token has no openid scope: a valid token that is not allowed (RFC 6750 §3.1)
    expect(ui.statusCode, `${who}: ${ui.payload}`).toBe(who === 'service' ? 403 : 200)
    const res = await introspect(app, introspectForm(base.token, base.client ?? MAIN, undefined))
    expect(JSON.parse(res.payload)).toMatchObject({ active: true })
  }
}

describe('user-info and introspection (property-based)', () => {
  test(
    'refuse every generated mutation of a real access token',
    async () => {
      const target: Idp = { app: idp, bases: real }
      await expectBasesAccepted(target)
      await fc.assert(fc.asyncProperty(serverCase, serverRefuses(target)), params)
      // nothing above may have revoked or spoiled the originals
      await expectBasesAccepted(target)
    },
    timeout,
  )

  test(
    'the property fails against a server that accepts unsigned access tokens',
    async () => {
      const broken = await idpWith(acceptUnsignedTokens)
      try {
        await expectBasesAccepted(broken)
        await expectCaught(
          serverCase,
          serverRefuses(broken),
          serverRefuses({ app: idp, bases: real }),
        )
      } finally {
        await broken.app.stop()
      }
    },
    timeout,
  )
})
