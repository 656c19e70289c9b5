import { createHmac, createPublicKey, type JsonWebKey } from 'node:crypto'
import fc from 'fast-check'
import type { JWK } from 'jose'
import { visible } from './property.ts'

/**
 * Black-box mutations of a real JWT (ROBUST-02): nothing but the target's public JWKS, other
 * real tokens and an attacker's own key. The verifier's property test in
 * server/resource-server/ builds its white-box mutations (re-signed with the server's key) on
 * these.
 */

export const b64 = (value: string | Uint8Array): string => Buffer.from(value).toString('base64url')

export const object = (segment: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>

export type Segment = 'header' | 'payload' | 'signature'

export const SEGMENTS: readonly Segment[] = ['header', 'payload', 'signature']

export type ForgedClaim =
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
export type TokenMutation =
  | { readonly kind: 'alg-none'; readonly alg: string; readonly signature: 'empty' | 'kept' }
  | {
      readonly kind: 'hmac-with-public-key'
      readonly alg: 'HS256' | 'HS384' | 'HS512'
      readonly key: 'spki-pem' | 'pkcs1-pem' | 'spki-der' | 'jwk-json' | 'modulus'
    }
  | { readonly kind: 'alg-swap'; readonly alg: string }
  | {
      readonly kind: 'kid'
      readonly kid: 'unknown' | 'other-published' | 'case' | 'padded' | 'missing' | 'number'
    }
  | { readonly kind: 'embedded-key'; readonly header: 'jwk' | 'jku' | 'x5u' | 'x5c' }
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

/** Algorithms an RS256 token's header is switched to: each must be refused (RFC 8725 §3.1). */
export const SWAPPED_ALGS = [
  'RS384',
  'RS512',
  'PS256',
  'ES256',
  'HS256',
  'EdDSA',
  'rs256',
  'RS256 ',
  '',
] as const

export const mutationArb: fc.Arbitrary<TokenMutation> = fc.oneof(
  fc.record({
    kind: fc.constant('alg-none'),
    alg: fc.constantFrom('none', 'None', 'NONE', 'nOnE'),
    signature: fc.constantFrom('empty', 'kept'),
  }),
  fc.record({
    kind: fc.constant('hmac-with-public-key'),
    alg: fc.constantFrom('HS256', 'HS384', 'HS512'),
    key: fc.constantFrom('spki-pem', 'pkcs1-pem', 'spki-der', 'jwk-json', 'modulus'),
  }),
  fc.record({ kind: fc.constant('alg-swap'), alg: fc.constantFrom(...SWAPPED_ALGS) }),
  fc.record({
    kind: fc.constant('kid'),
    kid: fc.constantFrom('unknown', 'other-published', 'case', 'padded', 'missing', 'number'),
  }),
  fc.record({
    kind: fc.constant('embedded-key'),
    header: fc.constantFrom('jwk', 'jku', 'x5u', 'x5c'),
  }),
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
export interface Forge {
  readonly attacker: { readonly privateKey: CryptoKey; readonly jwk: JWK }
  readonly published: readonly JsonWebKey[]
  readonly others: readonly string[]
}

export async function rs256(privateKey: CryptoKey, input: string): Promise<string> {
  const data = new TextEncoder().encode(input)
  return b64(new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', privateKey, data)))
}

export function publicKeyBytes(jwk: JsonWebKey, form: string): string | Buffer {
  const key = createPublicKey({ key: jwk, format: 'jwk' })
  if (form === 'spki-pem') return key.export({ type: 'spki', format: 'pem' })
  if (form === 'pkcs1-pem') return key.export({ type: 'pkcs1', format: 'pem' })
  if (form === 'spki-der') return key.export({ type: 'spki', format: 'der' })
  if (form === 'jwk-json') return JSON.stringify(jwk)
  return Buffer.from(jwk.n ?? '', 'base64url')
}

export const NOW = (): number => Math.floor(Date.now() / 1000)

export function forgedPayload(
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
export async function mutate(m: TokenMutation, token: string, forge: Forge): Promise<string> {
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
      const input = `${json({ ...header, alg: m.alg })}.${p}`
      if (!jwk) return `${input}.`
      const hash = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[m.alg]
      return `${input}.${createHmac(hash, publicKeyBytes(jwk, m.key)).update(input).digest('base64url')}`
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
          'other-published':
            forge.published.map((k) => k.kid).find((k) => k && k !== kid) ?? `${kid}x`,
          case: kid.toUpperCase() === kid ? kid.toLowerCase() : kid.toUpperCase(),
          padded: ` ${kid}`,
          number: 1,
        }[m.kid]
      return `${json(hd)}.${p}.${s}`
    }
    case 'embedded-key': {
      // RFC 8725 §3.10: key material the token brings along must not be trusted
      const hd = { ...header, kid: 'attacker' }
      const extra = {
        jwk: { jwk: forge.attacker.jwk },
        jku: { jku: 'https://attacker.example/jwks.json' },
        x5u: { x5u: 'https://attacker.example/cert.pem' },
        x5c: { x5c: ['MIIBattacker'] },
      }[m.header]
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
        // padding, whitespace and a stray character leave a lenient base64url decoder (Node's
        // Buffer, most base64 libraries) with the same octets, in the signature segment the same
        // signature over the same signing input. Refusing them is still demanded at MUST:
        // RFC 7519 §7.2 "If any of the listed steps fail, then the JWT MUST be rejected", whose
        // step 7 is RFC 7515 §5.2's validation, and RFC 7515 §5.2 step 7 decodes the signature
        // "following the restriction that no line breaks, whitespace, or other additional
        // characters have been used" (step 2 alike for the header; RFC 7515 §2: base64url is
        // "with all trailing '=' characters omitted ... and without the inclusion of any line
        // breaks, whitespace, or other additional characters"); "If any of the listed steps
        // fails, then the signature or MAC cannot be validated" (§5.2). So they stay in the
        // MUST of ROBUST-02 (RFC 9068 §4 validates the access token by RFC 7519's rules).
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
