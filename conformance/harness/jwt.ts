import { createHash, createHmac, createPublicKey, type JsonWebKey } from 'node:crypto'
import {
  compactVerify,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTPayload,
} from 'jose'
import type { CheckContext } from './check.ts'
import { expectEqual, expectJsonObject, expectStatus, expectThat, show } from './expect.ts'
import { JWKS } from './requests.ts'
import { FORMAT_JUDGED_BY, isCompactJws } from './access-token.ts'
import { mutateOpaque } from './fuzz/opaque.ts'

/**
 * JWTs as the checks see them: decoding without trust, the target's published keys, signature
 * verification with the algorithm pinned (INTERFACE.md §5.6), and forgeries of a real token.
 */

type Json = Record<string, unknown>

/** A decoded compact JWS. */
export interface Jws {
  readonly header: Json
  readonly payload: Json
}

const B64URL = /^[A-Za-z0-9_-]+$/

function decodeSegment(segment: string, what: string): Json {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
  } catch {
    value = undefined
  }
  expectThat(
    value !== null && typeof value === 'object' && !Array.isArray(value),
    `${what} is not a base64url-encoded JSON object`,
  )
  return value as Json
}

/** Splits and decodes a compact JWS (RFC 7515 §7.1) without verifying it. */
export function decodeJws(token: unknown, what: string): Jws {
  expectThat(
    typeof token === 'string' && token.length > 0,
    `${what}: expected a JWT string, got ${show(token)}`,
  )
  const parts = token.split('.')
  // an empty third segment is an unsigned JWT (alg none)
  expectThat(
    parts.length === 3 && parts.every((p) => B64URL.test(p)),
    `${what}: expected a signed JWS of three non-empty base64url segments, got ${parts.length} segment(s)${parts[2] === '' ? ' with an empty signature' : ''}`,
  )
  const [header, payload] = parts as [string, string, string]
  return {
    header: decodeSegment(header, `${what} header`),
    payload: decodeSegment(payload, `${what} payload`),
  }
}

const jwksCache = new WeakMap<object, Promise<Json[]>>()

/** The target's published keys, fetched once per check (through the recorder). */
export function publishedKeys(ctx: Pick<CheckContext, 'http'>): Promise<Json[]> {
  let keys = jwksCache.get(ctx.http)
  if (!keys) {
    keys = (async () => {
      const res = await ctx.http.get(JWKS)
      expectStatus(res, 200, 'JWKS')
      const body = expectJsonObject(res, 'JWKS')
      expectThat(Array.isArray(body.keys), `JWKS: expected a keys array, got ${show(body.keys)}`)
      return (body.keys as unknown[]).filter(
        (k): k is Json => k !== null && typeof k === 'object' && !Array.isArray(k),
      )
    })()
    jwksCache.set(ctx.http, keys)
  }
  return keys
}

/**
 * Verifies a token the way INTERFACE.md §5.6 tells a resource server to, independently of
 * openid-client: alg RS256, a kid that names exactly one published key, and a signature that
 * verifies with that key with the algorithm pinned. Claims are left to the caller.
 */
export async function verifySignature(
  ctx: Pick<CheckContext, 'http'>,
  token: unknown,
  what: string,
): Promise<Jws> {
  const jws = decodeJws(token, what)
  const { alg, kid } = jws.header
  // RFC 8725 §3.1: the algorithm is pinned, never taken from the token
  expectEqual(alg, 'RS256', `${what} header alg`)
  expectThat(
    typeof kid === 'string' && kid.length > 0,
    `${what}: the header has no kid (got ${show(kid)})`,
  )
  const matches = (await publishedKeys(ctx)).filter((k) => k.kid === kid)
  // OIDC Core §10.1: the kid must identify one key, or verifiers cannot choose
  expectThat(
    matches.length === 1,
    `${what}: kid ${show(kid)} matches ${matches.length} JWKS keys; expected exactly one`,
  )
  let key: Awaited<ReturnType<typeof importJWK>>
  try {
    key = await importJWK(matches[0] as JWK, 'RS256')
  } catch (err) {
    throw new Error(`${what}: JWKS key ${show(kid)} is not a usable RS256 key`, { cause: err })
  }
  try {
    await compactVerify(token as string, key, { algorithms: ['RS256'] })
  } catch (err) {
    expectThat(
      false,
      `${what}: the signature does not verify with JWKS key ${show(kid)} and RS256 (${(err as Error).message})`,
    )
  }
  return jws
}

/** Fetches the JWKS and verifies a JWT with RS256 only, independently of openid-client. */
export async function verifyJwt(
  ctx: Pick<CheckContext, 'http' | 'target'>,
  token: string,
  options: { audience?: string; typ?: string } = {},
): Promise<{ payload: JWTPayload; header: ReturnType<typeof decodeProtectedHeader> }> {
  const res = await ctx.http.get(JWKS)
  const jwks = createLocalJWKSet(res.json as Parameters<typeof createLocalJWKSet>[0])
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    algorithms: ['RS256'],
    issuer: ctx.target.baseUrl,
    ...(options.audience ? { audience: options.audience } : {}),
    ...(options.typ ? { typ: options.typ } : {}),
    clockTolerance: 300,
  })
  return { payload, header: protectedHeader }
}

/** Seconds since the epoch on the harness clock. */
export const nowSeconds = (): number => Date.now() / 1000

/** OIDC Core §3.1.3.6: base64url of the left half of SHA-256 (the hash of RS256). */
export const halfHash = (value: string): string =>
  createHash('sha256').update(value, 'ascii').digest().subarray(0, 16).toString('base64url')

/** Claims of a JWT without verifying it (the checks verify separately where it matters). */
export function claimsOf(token: string): JWTPayload {
  try {
    return decodeJwt(token)
  } catch {
    // no part of the token is shown: a prefix is a secret's start (reports are CI artifacts)
    throw new Error(`a token of ${token.length} characters is not a JWT (${FORMAT_JUDGED_BY})`)
  }
}

const b64Json = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/** The same claims with alg none and no signature (RFC 8725 §2.1). */
export function forgeAlgNone(token: string): string {
  const header = { ...decodeProtectedHeader(token), alg: 'none' }
  return `${b64Json(header)}.${b64Json(claimsOf(token))}.`
}

/** One claim changed, header and signature kept. */
export function forgeTampered(token: string): string {
  const [header, , signature] = token.split('.')
  const claims = { ...claimsOf(token), sub: 'attacker' }
  return `${header ?? ''}.${b64Json(claims)}.${signature ?? ''}`
}

/**
 * HS256 keyed with the target's own RSA public key (PEM), the algorithm-confusion attack of
 * RFC 8725 §2.1: a verifier that lets the token choose the algorithm accepts it.
 */
export async function forgeHs256WithPublicKey(
  ctx: Pick<CheckContext, 'http'>,
  token: string,
): Promise<string> {
  const header = decodeProtectedHeader(token)
  const res = await ctx.http.get(JWKS)
  const keys = ((res.json as { keys?: JsonWebKey[] } | undefined)?.keys ?? []) as (JsonWebKey & {
    kid?: string
  })[]
  const jwk = keys.find((k) => k.kid === header.kid) ?? keys[0]
  expectThat(jwk, 'the JWKS has no key to build the HS256 forgery from')
  const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' })
  const input = `${b64Json({ ...header, alg: 'HS256' })}.${b64Json(claimsOf(token))}`
  const mac = createHmac('sha256', pem).update(input).digest('base64url')
  return `${input}.${mac}`
}

/** The same claims and kid, validly signed with a key the target never published. */
export async function forgeForeign(token: string): Promise<string> {
  const header = decodeProtectedHeader(token)
  const { privateKey } = await generateKeyPair('RS256')
  return new SignJWT(claimsOf(token))
    .setProtectedHeader({ ...header, alg: 'RS256' })
    .sign(privateKey)
}

/** Every forgery of a real access token, by name. */
export async function forgeries(
  ctx: Pick<CheckContext, 'http'>,
  token: string,
): Promise<[string, string][]> {
  const garbage: [string, string][] = [
    ['garbage', 'not-a-token-0123456789'],
    ['a truncated token', token.slice(0, -12)],
  ]
  // a token that is not a JWS (AT-01 and JWKS-04 judge that) has no header or claims to forge:
  // it is altered by its characters instead
  if (!isCompactJws(token))
    return [
      ...garbage,
      [
        'the token with one character changed',
        mutateOpaque({ kind: 'char-flip', at: token.length >> 1, bit: 0 }, token),
      ],
      ['the token with a character appended', `${token}A`],
    ]
  return [
    ...garbage,
    ['the token with alg none', forgeAlgNone(token)],
    ['the token re-signed HS256 with the public key', await forgeHs256WithPublicKey(ctx, token)],
    ['the token signed by another key', await forgeForeign(token)],
    ['the token with a changed sub (signature kept)', forgeTampered(token)],
  ]
}

/** An unsigned request object (OIDC Core §6.1, alg none). */
export function unsignedRequestObject(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  return `${part({ alg: 'none', typ: 'oauth-authz-req+jwt' })}.${part(claims)}.`
}

/** The main client's verified ID token's auth_time (OIDC Core §2: REQUIRED with max_age). */
export async function verifiedAuthTime(
  ctx: Pick<CheckContext, 'http' | 'target'>,
  body: Record<string, unknown>,
  what: string,
): Promise<number> {
  const idToken = body.id_token
  expectThat(typeof idToken === 'string', `${what}: the token response has no id_token`)
  const { payload } = await verifyJwt(ctx, idToken, { audience: ctx.target.clients.main.id })
  expectThat(
    typeof payload.auth_time === 'number',
    `${what}: the ID token has no numeric auth_time (${String(payload.auth_time)})`,
  )
  return payload.auth_time
}
