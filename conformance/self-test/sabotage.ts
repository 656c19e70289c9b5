import { bypass, http, HttpResponse, type HttpHandler } from 'msw'
import type { Config } from '../../server/config.ts'
import type { Fault } from '../../server/deps.ts'
import { fetchVia, type Target } from '../harness/target.ts'
import type { RequirementId } from '../requirements.ts'

/**
 * How to break the target so that one check must fail: msw handlers that corrupt the real
 * server's answers (seen by the harness's fetch), or faults of the reference server for what
 * msw cannot reach (TLS, the plain listener, the browser, server-side state).
 */
export type Sabotage =
  | { readonly how: string; readonly handlers: (target: Target) => HttpHandler[] }
  | { readonly how: string; readonly faults: readonly Fault[]; readonly config?: Partial<Config> }

type Json = Record<string, unknown>

/** Fetches the real answer and returns it after `mutate` has changed its JSON body. */
function corruptJson(url: string, mutate: (body: Json) => void, method: 'get' | 'all' = 'get') {
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
function corruptHeaders(
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

const DISCOVERY = '/.well-known/openid-configuration'
const JWKS = '/.well-known/jwks.json'
const firstKey = (b: Json): Json => (b.keys as Json[])[0] as Json

/** Every check's proof that it can fail. Typed as a full Record: a check without one does not compile. */
export const sabotage: Record<RequirementId, Sabotage> = {
  'DISC-01': {
    how: 'discovery served as text/html',
    handlers: corruptHeaders(DISCOVERY, (h) => h.set('content-type', 'text/html')),
  },
  'DISC-02': {
    how: 'issuer with a trailing slash',
    handlers: corruptJson(DISCOVERY, (b) => (b.issuer = `${String(b.issuer)}/`)),
  },
  'DISC-03': {
    how: 'token_endpoint moved to another path',
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.token_endpoint = String(b.token_endpoint).replace('/auth/token', '/oauth/token')),
    ),
  },
  'DISC-04': {
    how: 'response_types_supported lists token',
    handlers: corruptJson(DISCOVERY, (b) => (b.response_types_supported = ['code', 'token'])),
  },
  'DISC-05': {
    how: 'grant_types_supported lists implicit',
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.grant_types_supported = [...(b.grant_types_supported as string[]), 'implicit']),
    ),
  },
  'DISC-06': {
    how: 'scopes_supported without offline_access',
    handlers: corruptJson(DISCOVERY, (b) => (b.scopes_supported = ['openid', 'profile', 'email'])),
  },
  'DISC-07': {
    how: 'token_endpoint_auth_methods_supported omitted (defaults to client_secret_basic)',
    handlers: corruptJson(DISCOVERY, (b) => delete b.token_endpoint_auth_methods_supported),
  },
  'DISC-08': {
    how: 'code_challenge_methods_supported lists plain',
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.code_challenge_methods_supported = ['plain', 'S256']),
    ),
  },
  'DISC-09': {
    how: 'request_uri_parameter_supported omitted (defaults to true)',
    handlers: corruptJson(DISCOVERY, (b) => delete b.request_uri_parameter_supported),
  },
  'DISC-10': {
    how: 'revocation_endpoint_auth_methods_supported omitted',
    handlers: corruptJson(DISCOVERY, (b) => delete b.revocation_endpoint_auth_methods_supported),
  },
  'DISC-11': {
    how: 'RFC 8414 document with another issuer',
    handlers: corruptJson(
      '/.well-known/oauth-authorization-server',
      (b) => (b.issuer = 'https://elsewhere.example'),
    ),
  },
  'JWKS-01': { how: 'empty keys array', handlers: corruptJson(JWKS, (b) => (b.keys = [])) },
  'JWKS-02': {
    how: 'the key published twice under one kid',
    handlers: corruptJson(JWKS, (b) => (b.keys = [firstKey(b), { ...firstKey(b) }])),
  },
  'JWKS-03': {
    how: 'a private exponent published',
    handlers: corruptJson(JWKS, (b) => (b.keys = [{ ...firstKey(b), d: 'AQAB' }])),
  },
  'TLS-01': { how: 'the plain listener serves documents', faults: ['plain-http-serves-documents'] },
  'TLS-02': { how: 'the listener accepts TLS 1.0 and 1.1', faults: ['weak-tls'] },
  'TLS-03': {
    how: 'no Strict-Transport-Security header',
    handlers: corruptHeaders(DISCOVERY, (h) => h.delete('strict-transport-security')),
  },
  'ERR-01': {
    how: '405 without Allow',
    handlers: corruptHeaders(JWKS, (h) => h.delete('allow'), 'all'),
  },
  'ERR-02': {
    how: 'an error_description with a double quote',
    handlers: corruptJson(
      '/auth/no-such-endpoint',
      (b) => (b.error_description = 'no "such" endpoint'),
    ),
  },
}
