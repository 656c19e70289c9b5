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
