import fc from 'fast-check'
import {
  ERROR_CHARS,
  expectBearerChallenge,
  expectJsonObject,
  expectOAuthError,
  expectThat,
} from '../expect.ts'
import type { HttpResponse, RequestOptions } from '../http.ts'
import { BRANDING, credentials, INTROSPECT, REVOKE, TOKEN, USER_INFO } from '../requests.ts'
import type { TargetClient } from '../target.ts'
import { visible } from './property.ts'
import { refusableFor } from './refusable.ts'

/** Generated malformed requests to the endpoints a client calls directly (ROBUST-01). */

export type Endpoint =
  typeof TOKEN | typeof INTROSPECT | typeof REVOKE | typeof USER_INFO | typeof BRANDING

/** A generated request: a defect that makes it an error by itself, plus format noise. */
export interface Malformed {
  readonly defect: string
  readonly method: string
  readonly params: readonly (readonly [string, string])[]
  readonly body: 'form' | 'json' | 'text' | 'multipart' | 'broken-escapes' | 'none'
  readonly query: readonly (readonly [string, string])[]
  readonly authorization: string | undefined
  readonly padding: number
}

export type Pairs = readonly (readonly [string, string])[]

export const JUNK_KEYS = [
  'foo',
  'x',
  'state',
  'nonce',
  'resource',
  'audience',
  'a[b]',
  '__proto__',
  '',
]

export const junkValue = fc.oneof(visible, fc.string({ unit: 'binary', maxLength: 20 }))

export const junk: fc.Arbitrary<Pairs> = fc.array(
  fc.tuple(fc.oneof(fc.constantFrom(...JUNK_KEYS), fc.stringMatching(/^[a-z_]{1,12}$/)), junkValue),
  { maxLength: 4 },
)

export const randomSecret = fc.stringMatching(/^[A-Za-z0-9_-]{8,40}$/)

/** The defects that make a request to `endpoint` an error whatever else it carries. */
export function defects(endpoint: Endpoint, main: TargetClient): fc.Arbitrary<[string, Pairs]> {
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

export const garbageToken = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9\-._~+/]{1,200}=*$/),
  fc.tuple(randomSecret, randomSecret, randomSecret).map(([a, b, c]) => `${a}.${b}.${c}`),
  visible.filter((s) => s.trim() !== ''),
)

export const POST_METHODS = ['GET', 'PUT', 'PATCH', 'DELETE']

export const GET_METHODS = ['POST', 'PUT', 'DELETE']

/**
 * The methods each endpoint serves: POST at token, introspection and revocation (RFC 6749 §3.2,
 * RFC 7662 §2.1, RFC 7009 §2.1), GET and POST at user-info (OIDC Core §5.3.1), GET at branding
 * (INTERFACE.md §4.7).
 */
const SERVES: Readonly<Record<Endpoint, readonly string[]>> = {
  [TOKEN]: ['POST'],
  [INTROSPECT]: ['POST'],
  [REVOKE]: ['POST'],
  [USER_INFO]: ['GET', 'POST'],
  [BRANDING]: ['GET'],
}

/**
 * The least padding a padded body carries (at most 15 KiB), so that a padded request is a large
 * one, 1 KiB at least past what it would be: RFC 9110 §15.5.14 lets a large request be refused
 * 413, and ROBUST-01 accepts a 413 for a padded request only.
 */
export const PADDING_MIN = 1024

/**
 * The bodies of a media type these endpoints do not take: each takes a form
 * (application/x-www-form-urlencoded: RFC 6749 §3.2, §4.1.3; RFC 7662 §2.1; RFC 7009 §2.1), so
 * a 415 answers these (RFC 9110 §15.5.16) and no other.
 */
const UNSUPPORTED_BODIES: readonly Malformed['body'][] = ['json', 'text', 'multipart']

export function malformed(endpoint: Endpoint, main: TargetClient): fc.Arbitrary<Malformed> {
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
        { weight: 1, arbitrary: fc.integer({ min: PADDING_MIN, max: 15 * 1024 }) },
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

export const form = (pairs: Pairs): string =>
  new URLSearchParams(pairs.map(([k, v]) => [k, v])).toString()

/** The request as the harness sends it. */
export function toRequest(m: Malformed): RequestOptions {
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

export const showMalformed = (path: string) => (m: Malformed) => {
  const r = toRequest(m)
  return `${String(r.method)} ${path} with ${m.defect} (body ${m.body}, ${String(r.body?.length ?? 0)} bytes${
    m.query.length > 0 ? `, query ${JSON.stringify(m.query).slice(0, 120)}` : ''
  }${m.authorization ? `, Authorization ${JSON.stringify(m.authorization.slice(0, 60))}` : ''})`
}

/**
 * The status that goes with each registered code (RFC 6749 §5.2, RFC 6750 §3.1, RFC 7009
 * §2.2.1, RFC 6585 §4); invalid_request also as the transport-level refusals 404, 405, 413 and
 * 415 (ARCHITECTURE.md), the last three only where they answer what was sent (`refusableFor`).
 * Nothing in 5xx: bad input is never the server's error.
 */
export const STATUSES: Readonly<Record<string, readonly number[]>> = {
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

/** What a refusal before reading of each status says the request had (RFC 9110 §15.5). */
const REFUSED_FOR: Readonly<Record<number, string>> = {
  405: 'a method the endpoint serves (RFC 9110 §15.5.6: 405 is for a method "not supported by the target resource")',
  413: 'a request that was not large (RFC 9110 §15.5.14: 413 is for "request content [...] larger than the server is willing or able to process")',
  415: 'a form, the media type the endpoint takes, or no body (RFC 9110 §15.5.16: 415 is for "content [...] in a format not supported by this method on the target resource")',
}

/** The refusals before reading that answer `m` at `path` (refusable.ts). */
export const refusableMalformed = (path: Endpoint, m: Malformed): number[] =>
  refusableFor({
    method: m.method,
    serves: SERVES[path],
    // the padding goes in the body: a request without one sends none
    large: m.body !== 'none' && m.padding > 0 ? 'body' : undefined,
    unsupportedType: UNSUPPORTED_BODIES.includes(m.body),
  })

/**
 * A refusal of `m` in the JSON error shape with a registered code and the status that goes with
 * it; a 405, 413 or 415 only where it answers what `m` sent.
 */
export function expectRegisteredError(res: HttpResponse, path: Endpoint, m: Malformed): void {
  // ARCHITECTURE.md: never a 5xx for bad input
  expectThat(res.status < 500, `HTTP ${String(res.status)}: a 5xx for a malformed request`)
  expectThat(res.status >= 400, `HTTP ${String(res.status)}: the malformed request was accepted`)
  const refusedFor = REFUSED_FOR[res.status]
  expectThat(
    refusedFor === undefined || refusableMalformed(path, m).includes(res.status),
    `HTTP ${String(res.status)} for ${String(refusedFor)}`,
  )
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
