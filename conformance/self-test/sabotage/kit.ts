import { bypass, http, HttpResponse, type HttpHandler } from 'msw'
import type { Config } from '../../../server/config.ts'
import type { Fault } from '../../../server/deps.ts'
import { fetchVia, type Target } from '../../harness/target.ts'

/**
 * How to break the target so that one check must fail: msw handlers that corrupt the real
 * server's answers (seen by the harness's fetch), or faults of the reference server for what
 * msw cannot reach (TLS, the plain listener, the browser, server-side state).
 */
export type Sabotage =
  | { readonly how: string; readonly handlers: (target: Target) => HttpHandler[] }
  | { readonly how: string; readonly faults: readonly Fault[]; readonly config?: Partial<Config> }

export type Json = Record<string, unknown>

/** Fetches the real answer and returns it after `mutate` has changed its JSON body. */
export function corruptJson(
  url: string,
  mutate: (body: Json) => void,
  method: 'get' | 'all' = 'get',
) {
  return (target: Target): HttpHandler[] => [
    http[method](target.baseUrl + url, async ({ request }) => {
      const real = await fetchVia(target.dispatcher, bypass(request))
      const body = (await real.json()) as Json
      mutate(body)
      const headers = new Headers(real.headers)
      headers.delete('content-length')
      return HttpResponse.json(body, { status: real.status, headers })
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
      const real = await fetchVia(target.dispatcher, bypass(request))
      const headers = new Headers(real.headers)
      headers.delete('content-length')
      mutate(headers, real.status)
      return new HttpResponse(await real.text(), { status: real.status, headers })
    }),
  ]
}

export const DISCOVERY = '/.well-known/openid-configuration'
export const JWKS = '/.well-known/jwks.json'
export const firstKey = (b: Json): Json => (b.keys as Json[])[0] as Json
