import {
  compactVerify,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type ProtectedHeaderParameters,
} from 'jose'
import { bypass, http, HttpResponse, type HttpHandler } from 'msw'
import type { Config } from '../../../server/config.ts'
import type { Fault } from '../../../server/deps.ts'
import { fetchVia, type Target } from '../../harness/target.ts'

/**
 * How to break the target so that one check must fail: msw handlers that corrupt the real
 * server's answers (seen by the harness's fetch), or faults of the reference server for what
 * msw cannot reach (TLS, the plain listener, the browser, server-side state).
 */
export type BrokenTarget =
  | { readonly handlers: (target: Target) => HttpHandler[] }
  | { readonly faults: readonly Fault[]; readonly config?: Partial<Config> }

/**
 * One proof that a check can fail: how the target is broken, and the assertion the check must
 * fail by (a pattern its failure message matches). A failure with any other message (a
 * TypeError, a timeout, a browser that did not start, another assertion of the same check)
 * proves nothing, and the self-test rejects it.
 */
export type Sabotage = BrokenTarget & {
  /** What is broken, in a few words (the self-test's test name). */
  readonly how: string
  /** The failure message the check must give: its own assertion for this breakage. */
  readonly expect: RegExp
}

/**
 * A check's proofs: one sabotage, or one per part of a check that asserts several things (each
 * part broken on its own, each failing by its own assertion).
 */
export type Sabotages = Sabotage | readonly [Sabotage, Sabotage, ...Sabotage[]]

/** The sabotages of one check as a list. */
export const partsOf = (s: Sabotages): readonly Sabotage[] => ('how' in s ? [s] : s)

export type Json = Record<string, unknown>

/**
 * Headers of a real answer that must not be copied into the forged one: the body is already
 * decoded (length and encoding no longer apply), and msw would replay a Set-Cookie on every
 * later request of the run.
 */
export const DROPPED_HEADERS = new Set([
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'set-cookie',
])

/**
 * The headers as name/value pairs: a Headers object built inside an msw handler is not the
 * class msw's Response recognises and would be dropped whole.
 */
export const headerPairs = (headers: Headers): [string, string][] =>
  [...headers].filter(([name]) => !DROPPED_HEADERS.has(name.toLowerCase()))

/** Fetches the real answer and returns it after `mutate` has changed its JSON body. */
export function corruptJson(
  url: string,
  mutate: (body: Json) => void,
  method: 'get' | 'all' = 'get',
) {
  return (target: Target): HttpHandler[] => [
    http[method](target.baseUrl + url, async ({ request }) => {
      const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
      const body = (await real.json()) as Json
      mutate(body)
      return HttpResponse.json(body, { status: real.status, headers: headerPairs(real.headers) })
    }),
  ]
}

/** Replaces the real answer's headers (the body is kept). */
export function corruptHeaders(
  url: string,
  mutate: (headers: Headers, status: number) => void,
  method: 'get' | 'all' = 'get',
) {
  return (target: Target): HttpHandler[] => [
    http[method](target.baseUrl + url, async ({ request }) => {
      const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
      const headers = new Headers(headerPairs(real.headers))
      mutate(headers, real.status)
      return new HttpResponse(await real.text(), {
        status: real.status,
        headers: headerPairs(headers),
      })
    }),
  ]
}

export const DISCOVERY = '/.well-known/openid-configuration'
export const JWKS = '/.well-known/jwks.json'
export const firstKey = (b: Json): Json => (b.keys as Json[])[0] as Json

/**
 * Sabotages built one per part (a map over a check's cases) as a check's proofs: a list of
 * fewer than two is a mistake of the sabotage file, reported when it loads.
 */
export function perPart(parts: readonly Sabotage[]): Sabotages {
  const [first, second, ...rest] = parts
  if (!first || !second) throw new Error('a multi-part sabotage needs at least two parts')
  return [first, second, ...rest]
}

/** The forgeries of a real access token that the checks present (harness/tokens.ts `forgeries`). */
export const FORGERIES = {
  garbage: 'garbage',
  truncated: 'a truncated token',
  'alg none': 'the token with alg none',
  HS256: 'the token re-signed HS256 with the public key',
  'foreign key': 'the token signed by another key',
  tampered: 'the token with a changed sub (signature kept)',
} as const

export type ForgeryKind = keyof typeof FORGERIES

/**
 * Which forgery a presented token is, judged the way a server that skipped one verification
 * step would see it; undefined for a token the target's published keys verify.
 */
export async function forgeryKind(token: string, target: Target): Promise<ForgeryKind | undefined> {
  const [, , signature] = token.split('.')
  if (signature === undefined) return 'garbage'
  let header: ProtectedHeaderParameters
  try {
    header = decodeProtectedHeader(token)
  } catch {
    return 'garbage'
  }
  if (header.alg === 'none') return 'alg none'
  if (header.alg === 'HS256') return 'HS256'
  if (decodeJwt(token).sub === 'attacker') return 'tampered'
  const res = await fetchVia(target.dispatcher, bypass(target.baseUrl + JWKS))
  const keys = createLocalJWKSet((await res.json()) as JSONWebKeySet)
  try {
    await compactVerify(token, keys)
    return undefined
  } catch {
    // an RSA-2048 signature is 256 bytes: a shorter one was cut off
    return Buffer.from(signature, 'base64url').length < 256 ? 'truncated' : 'foreign key'
  }
}

/** A string as a pattern that matches it literally (for an `expect` built from a case name). */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
