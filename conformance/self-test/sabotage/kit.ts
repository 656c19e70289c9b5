import { bypass, http, HttpResponse, type HttpHandler } from 'msw'
import type { Level } from '../../catalogue/requirement.ts'
import type { Extend } from '../broken-server.ts'
import type { AppOptions } from '../../../server/app.ts'
import type { Config } from '../../../server/config.ts'
import type { Store } from '../../../server/store/store.ts'
import {
  CompactSign,
  compactVerify,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type JSONWebKeySet,
  type JWK,
  type ProtectedHeaderParameters,
} from 'jose'
import { halfHash } from '../../harness/jwt.ts'
import { JWKS, TOKEN } from '../../harness/requests.ts'
export { DISCOVERY_ENDPOINTS } from '../../harness/requests.ts'
import { fetchVia, type Target, type TargetClient } from '../../harness/target.ts'

// What the sabotages share from the harness: the endpoint paths, the target's types, and the
// helpers a sabotage must agree with (a redirect URI's near variants, the at_hash).
export { fetchVia, type Target, type TargetClient } from '../../harness/target.ts'
export {
  AUTHORIZE,
  BRANDING,
  DISCOVERY,
  ERROR_PROBES,
  INTROSPECT,
  JWKS,
  REVOKE,
  TOKEN,
  USER_INFO,
} from '../../harness/requests.ts'
export { halfHash } from '../../harness/jwt.ts'
export { redirectVariants } from '../../harness/pages.ts'
// broken reference servers built from outside the server's code (hapi extensions)
export * from '../broken-server.ts'
// codes, PKCE and the token endpoint, broken from outside the server's code
export * from '../broken-codes.ts'
// and broken stores: the server's store, wrapped
export * from '../broken-store.ts'
// sign-in and the session cookie, broken from outside the server's code
export * from '../broken-sign-in.ts'

/**
 * How to break the target so that one check must fail: msw handlers that corrupt the real
 * server's answers (seen by the harness's fetch), or, for what msw cannot reach (TLS, the plain
 * listener, the browser, server-side state), a reference server broken from outside its code:
 * its configuration, its store wrapped, hapi extensions on the built server.
 */
export type BrokenTarget =
  | { readonly handlers: (target: Target) => HttpHandler[] }
  | {
      readonly config?: Partial<Config>
      /**
       * 'foreign': the server presents a certificate that a CA of its own signed, not the CA
       * the target names (default: the shared target's certificate, which the browser pins).
       */
      readonly certificate?: 'foreign'
      /**
       * Wraps the reference server's store: a server broken from outside its code (the store
       * given to createServer misbehaves), instead of by a named fault.
       */
      readonly store?: (store: Store) => Store
      /**
       * Adds to the built reference server before it starts, through hapi's composition points
       * (request lifecycle extensions such as onPreHandler and onPreResponse): a server broken
       * from outside its code.
       */
      readonly extend?: Extend
      /** How the reference server checks a password against its stored hash. */
      readonly verifyPassword?: AppOptions['verifyPassword']
      /**
       * Drives the broken server as a deployment: no clock or rate-limit controls and not
       * `embedded`, as a run with --base-url sees a server it does not host (the target
       * configuration's lifetimes are still given, as a deployment's target file gives them).
       */
      readonly asDeployment?: true
    }

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
  /**
   * The level the broken part is stated at, when below the check's (a SHOULD of a MUST check's
   * source, expect.ts atShould): the verdict it must reach is that level's (a warning).
   */
  readonly level?: Level
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

export const firstKey = (b: Json): Json => (b.keys as Json[])[0] as Json

// ---------------------------------------------------------------------------------------------
// Forged tokens: re-signed with a saboteur key the corrupted JWKS publishes

/** An RSA key of the saboteur's; the "published" one is slipped into the JWKS. */
interface Forger {
  readonly kid: string
  readonly privateKey: CryptoKey
  readonly jwk: JWK
}

async function makeForger(kid: string): Promise<Forger> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  return {
    kid,
    privateKey,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' },
  }
}

let publishedForger: Promise<Forger> | undefined

let unpublishedForger: Promise<Forger> | undefined

const published = (): Promise<Forger> => (publishedForger ??= makeForger('sabotage-published'))

const unpublished = (): Promise<Forger> =>
  (unpublishedForger ??= makeForger('sabotage-unpublished'))

/**
 * How a forged token is signed:
 * - published: a saboteur key whose public half the (corrupted) JWKS publishes, so only the
 *   edited claims are wrong and the signature still verifies;
 * - unpublished: a saboteur key under a kid the JWKS does not have;
 * - same-kid: a saboteur key under the server's own kid (the signature does not verify);
 * - hmac: HS256 keyed with the given secret, under the server's kid.
 */
export type Signing = 'published' | 'unpublished' | 'same-kid' | { readonly hmac: string }

export interface ForgedJwt {
  header: Json
  payload: Json
  sign: Signing
  /** Set to leave this token exactly as the server made it. */
  keep: boolean
}

/** What a forgery sees of the exchange: the token request form and the response body. */
export interface TokenExchange {
  readonly form: URLSearchParams
  readonly body: Json
  readonly target: Target
}

/** Edits a decoded token in place. */
export type JwtEdit = (jwt: ForgedJwt, exchange: TokenExchange) => void

const decode = (segment: string): Json =>
  JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Json

async function resign(token: string, edit: JwtEdit, exchange: TokenExchange): Promise<string> {
  const [h = '', p = ''] = token.split('.')
  const original = decode(h)
  const jwt: ForgedJwt = {
    header: { ...original },
    payload: decode(p),
    sign: 'published',
    keep: false,
  }
  edit(jwt, exchange)
  if (jwt.keep) return token
  const { sign } = jwt
  let key: CryptoKey | Uint8Array
  if (typeof sign === 'object') {
    jwt.header.alg = 'HS256'
    key = new TextEncoder().encode(sign.hmac)
  } else {
    const forger = await (sign === 'published' ? published() : unpublished())
    jwt.header.alg = 'RS256'
    jwt.header.kid = sign === 'same-kid' ? original.kid : forger.kid
    key = forger.privateKey
  }
  return new CompactSign(new TextEncoder().encode(JSON.stringify(jwt.payload)))
    .setProtectedHeader(jwt.header as { alg: string })
    .sign(key)
}

export interface Forgery {
  /** Edits every access token the token endpoint returns. */
  readonly access?: JwtEdit
  /** Edits every ID token the token endpoint returns. */
  readonly id?: JwtEdit
  /** Edits the token response body (after the tokens). */
  readonly body?: (body: Json, exchange: TokenExchange) => void
}

/**
 * Corrupts the token endpoint's successful answers by re-signing the tokens after `edits`, and
 * publishes the saboteur's key in the JWKS, so a forged token is as convincing as msw can make
 * it. A re-signed access token gets a matching at_hash, as a careful forger would give it.
 */
export function forgeTokens(edits: Forgery): (target: Target) => HttpHandler[] {
  return (target) => [
    http.post(target.baseUrl + TOKEN, async ({ request }) => {
      const form = new URLSearchParams(await request.clone().text())
      const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
      const headers = headerPairs(real.headers)
      const text = await real.text()
      if (real.status !== 200) return new HttpResponse(text, { status: real.status, headers })
      const body = JSON.parse(text) as Json
      const exchange: TokenExchange = { form, body, target }
      const original = body.access_token
      if (edits.access && typeof original === 'string')
        body.access_token = await resign(original, edits.access, exchange)
      const changed = body.access_token !== original
      const { id } = edits
      if (typeof body.id_token === 'string' && (id || changed)) {
        body.id_token = await resign(
          body.id_token,
          (jwt, ex) => {
            if (changed && jwt.payload.at_hash === halfHash(String(original)))
              jwt.payload.at_hash = halfHash(String(body.access_token))
            id?.(jwt, ex)
          },
          exchange,
        )
      }
      edits.body?.(body, exchange)
      return HttpResponse.json(body, { status: 200, headers })
    }),
    http.get(target.baseUrl + JWKS, async ({ request }) => {
      const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
      const headers = headerPairs(real.headers)
      const body = (await real.json()) as Json
      body.keys = [...(body.keys as unknown[]), (await published()).jwk]
      return HttpResponse.json(body, { status: real.status, headers })
    }),
  ]
}

// ---------------------------------------------------------------------------------------------
// Raw authorization requests

export interface AuthorizeChange {
  /** Returns the URL to forward instead of the harness's own (the server misreads it). */
  readonly request?: (url: URL, target: Target) => URL | undefined
  /** Changes the real answer's headers (name/value pairs, lower-case names). */
  readonly headers?: (headers: [string, string][], sent: URL) => [string, string][]
  /** Returns an answer instead of the real one (the server misbehaves). */
  readonly respond?: (real: Response, sent: URL, target: Target) => Response | undefined
}

/**
 * Intercepts the raw GET /auth/authorize requests of the harness (never the browser's). The
 * real headers are copied as name/value pairs: a Headers object made here is not the class
 * msw's Response knows, and would be dropped whole.
 */
export function onAuthorize(change: AuthorizeChange) {
  return (target: Target): HttpHandler[] => [
    http.get(`${target.baseUrl}/auth/authorize`, async ({ request }) => {
      const sent = new URL(request.url)
      const forwarded = change.request?.(new URL(sent), target) ?? sent
      const real = await fetchVia(target.dispatcher, bypass(new Request(forwarded, request)), {
        redirect: 'manual',
      })
      // the body is already decoded, so its length and encoding no longer apply; and msw would
      // replay a Set-Cookie on every later request of the run, which the harness never does
      const headers = headerPairs(real.headers)
      const copy = new HttpResponse(await real.text(), {
        status: real.status,
        headers: change.headers?.(headers, sent) ?? headers,
      })
      return change.respond?.(copy, sent, target) ?? copy
    }),
  ]
}

// ---------------------------------------------------------------------------------------------
// Client authentication, bypassed

/** Ways a request can fail to authenticate its client, as INTRO-04 and REV-05 send them. */
export type AuthFailure =
  | 'no client credentials'
  | 'a client_id without a secret'
  | 'a wrong client secret'
  | 'an unknown client'

/** Which of the ways a form is (none when it carries the right secret of a known client). */
export function authFailureOf(form: URLSearchParams, target: Target): AuthFailure | undefined {
  const id = form.get('client_id')
  const secret = form.get('client_secret')
  if (id === null) return secret === null ? 'no client credentials' : undefined
  const client = knownClients(target).find((c) => c.id === id)
  if (!client) return 'an unknown client'
  if (secret === null) return 'a client_id without a secret'
  return secret === client.secret ? undefined : 'a wrong client secret'
}

const knownClients = (target: Target): TargetClient[] => {
  const { main, other, third, service } = target.clients
  return [main, other, third, service].filter((c): c is TargetClient => c !== undefined)
}

/**
 * The client a request that fails to authenticate is taken for: the one its client_id names,
 * else the service client (the owner of the token the checks use when there is one).
 */
export function assumedClient(form: URLSearchParams, target: Target): TargetClient {
  const named = knownClients(target).find((c) => c.id === form.get('client_id'))
  return named ?? target.clients.service ?? target.clients.main
}

/**
 * The endpoint lets exactly one way of failing to authenticate through: such a request is
 * sent on with the right credentials (the rest are checked as they should be).
 */
export const letsThrough = (path: string, way: AuthFailure) =>
  onForm(path, async ({ form, forward, target }) => {
    if (authFailureOf(form, target) !== way) return undefined
    const client = assumedClient(form, target)
    return forward(replaced(form, { client_id: client.id, client_secret: client.secret }))
  })

/** A request with an Authorization header is refused 401 without a WWW-Authenticate challenge. */
export const basicWithoutChallenge = (path: string) =>
  onForm(path, async ({ request }) =>
    Promise.resolve(
      request.headers.has('authorization')
        ? HttpResponse.json(
            { error: 'invalid_client', error_description: 'client authentication failed' },
            { status: 401 },
          )
        : undefined,
    ),
  )

export const isJwt = (token: string | null): token is string => token?.split('.').length === 3

/** Requests of the `other` client sent on as the main client's. */
export const asMainClient = (path: string) =>
  onForm(path, async ({ form, forward, target }) => {
    if (form.get('client_id') !== target.clients.other?.id) return undefined
    const main = target.clients.main
    return forward(replaced(form, { client_id: main.id, client_secret: main.secret }))
  })

// ---------------------------------------------------------------------------------------------
// The real answer, relayed

/**
 * The real answer to `request`, rebuilt so msw can hand it on: headers copied entry by entry
 * (msw drops a Headers object copied from a fetched response), and without the length and
 * encoding of the body fetch has already decoded. `edit` may change the headers.
 */
export async function relay(
  target: Target,
  request: Request,
  edit: (headers: Headers, status: number) => void = () => undefined,
  body?: string,
): Promise<Response> {
  const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
  const headers = new Headers(headerPairs(real.headers))
  edit(headers, real.status)
  return new HttpResponse(body ?? (await real.arrayBuffer()), { status: real.status, headers })
}

// ---------------------------------------------------------------------------------------------
// Form posts of the token lifecycle endpoints

/** What a form-posting sabotage sees: the request's form, and the real server behind it. */
export interface FormExchange {
  readonly form: URLSearchParams
  readonly request: Request
  readonly target: Target
  /** Sends the request (with `form` instead of the original body) to the real server. */
  readonly forward: (form?: URLSearchParams) => Promise<Response>
}

/**
 * An msw handler for the form POSTs of the token lifecycle endpoints (token, introspect,
 * revoke, user-info). `fn` returns the answer, or undefined to let the request through.
 */
export function onForm(
  path: string,
  fn: (x: FormExchange) => Promise<Response | undefined>,
): (target: Target) => HttpHandler[] {
  return (target) => [
    http.post(target.baseUrl + path, async ({ request }) => {
      const form = new URLSearchParams(await request.clone().text())
      const forward = (body: URLSearchParams = form): Promise<Response> => {
        const headers = new Headers(request.headers)
        headers.delete('content-length')
        const real = new Request(request.url, {
          method: 'POST',
          headers,
          body: body.toString(),
        })
        return fetchVia(target.dispatcher, bypass(real), { redirect: 'manual' }).then(decoded)
      }
      return fn({ form, request, target, forward })
    }),
  ]
}

/** GET requests of `path` served as the POST their query would be (the method not checked). */
export const getServedAsPost =
  (path: string) =>
  (target: Target): HttpHandler[] => [
    http.get(target.baseUrl + path, ({ request }) => {
      const url = new URL(request.url)
      const post = new Request(`${url.origin}${url.pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: url.searchParams.toString(),
      })
      return fetchVia(target.dispatcher, bypass(post), { redirect: 'manual' }).then(decoded)
    }),
  ]

/**
 * The real answer's headers for a replacement answer. fetch has already decoded the body, so
 * the headers that described the encoded one go, or the harness would decode it again. Built
 * entry by entry: a `new Headers(real.headers)` copy reaches the harness empty through msw.
 */
export function plainHeaders(real: Response): Headers {
  return new Headers(headerPairs(real.headers))
}

async function decoded(real: Response): Promise<Response> {
  return new Response(await real.arrayBuffer(), {
    status: real.status,
    headers: plainHeaders(real),
  })
}

/** The real answer with its JSON body changed in place. */
export function withJson(real: Response, mutate: (body: Json) => void) {
  return replaceJson(real, (body) => {
    mutate(body)
    return body
  })
}

/** The real answer with its JSON body replaced. */
export async function replaceJson(real: Response, replace: (body: Json) => Json) {
  const body = replace((await real.json()) as Json)
  return HttpResponse.json(body, { status: real.status, headers: plainHeaders(real) })
}

/** A form with some parameters replaced. */
export function replaced(form: URLSearchParams, values: Record<string, string>): URLSearchParams {
  const copy = new URLSearchParams(form)
  for (const [k, v] of Object.entries(values)) copy.set(k, v)
  return copy
}

// ---------------------------------------------------------------------------------------------
// Token requests, forwarded or rewritten

/**
 * Sends `request` on to the real server, never following a redirect, optionally with another
 * URL or body (the handler has already read the original body).
 */
export function forward(
  target: Target,
  request: Request,
  change: { url?: string; body?: string | undefined } = {},
): Promise<Response> {
  const headers = new Headers(request.headers)
  headers.delete('content-length')
  return fetchVia(
    target.dispatcher,
    bypass(change.url ?? request.url, { method: request.method, headers, body: change.body }),
    { redirect: 'manual' },
  )
}

/** The real server's answer as an msw response, with another body or status if given. */
export async function answerFrom(
  real: Response,
  change: { body?: string; status?: number } = {},
): Promise<HttpResponse<string>> {
  return new HttpResponse(change.body ?? (await real.text()), {
    status: change.status ?? real.status,
    headers: headerPairs(real.headers),
  })
}

const isForm = (request: Request): boolean =>
  (request.headers.get('content-type') ?? '').includes('application/x-www-form-urlencoded')

/**
 * Rewrites the form of every token request before the real server sees it: the server then
 * behaves as one that ignores or normalises what the form says.
 */
export function rewriteTokenForm(mutate: (form: URLSearchParams, target: Target) => void) {
  return (target: Target): HttpHandler[] => [
    http.post(target.baseUrl + TOKEN, async ({ request }) => {
      const text = await request.text()
      if (!isForm(request)) return answerFrom(await forward(target, request, { body: text }))
      const form = new URLSearchParams(text)
      mutate(form, target)
      return answerFrom(await forward(target, request, { body: form.toString() }))
    }),
  ]
}

/**
 * Changes the JSON answers of the token endpoint; `mutate` also sees the request form and may
 * change the status.
 */
export function corruptTokenJson(
  mutate: (body: Json, answer: { status: number; readonly form: URLSearchParams }) => void,
) {
  return (target: Target): HttpHandler[] => [
    http.post(target.baseUrl + TOKEN, async ({ request }) => {
      const text = await request.text()
      const real = await forward(target, request, { body: text })
      const answer = await real.text()
      let body: Json
      try {
        body = JSON.parse(answer) as Json
      } catch {
        return answerFrom(real, { body: answer })
      }
      const changed = { status: real.status, form: new URLSearchParams(text) }
      mutate(body, changed)
      return answerFrom(real, { body: JSON.stringify(body), status: changed.status })
    }),
  ]
}

// ---------------------------------------------------------------------------------------------
// Multi-part sabotages and the forgeries the checks present

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

/** A real answer, kept to be served again. */
export interface Answer {
  readonly status: number
  readonly headers: [string, string][]
  readonly body: string
}

/**
 * An endpoint that answers a token as it did the first time once the real server has revoked
 * it (`revoked` judges the real answer): a cache in front of the revocation state.
 */
export function keepsFirstAnswer(path: string, revoked: (res: Response, body: Json) => boolean) {
  return (target: Target): HttpHandler[] => {
    const first = new Map<string, Answer>()
    return [
      http.all(target.baseUrl + path, async ({ request }) => {
        const text = await request.text()
        const token =
          /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '')?.[1] ??
          new URLSearchParams(text).get('token')
        const real = await forward(target, request, {
          body: request.method === 'GET' ? undefined : text,
        })
        const answer: Answer = {
          status: real.status,
          headers: headerPairs(real.headers),
          body: await real.text(),
        }
        if (token === null) return new HttpResponse(answer.body, answer)
        const earlier = first.get(token)
        let body: Json = {}
        try {
          body = JSON.parse(answer.body) as Json
        } catch {
          // not JSON: judged by its status
        }
        if (earlier && revoked(new Response(null, { status: answer.status }), body))
          return new HttpResponse(earlier.body, earlier)
        if (!earlier) first.set(token, answer)
        return new HttpResponse(answer.body, answer)
      }),
    ]
  }
}

/**
 * A store whose sessions ignore the server's clock (they are looked up, and purged, at the
 * wall-clock time): moving the server's clock past SESSION_TTL never ends one.
 */
export const sessionsOnWallClock = (store: Store): Store => {
  const wall = (): number => Math.floor(Date.now() / 1000)
  return {
    ...store,
    sessions: { ...store.sessions, get: (digest) => store.sessions.get(digest, wall()) },
    purge: (_now, policy) => store.purge(wall(), policy),
  }
}
