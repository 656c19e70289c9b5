import fc from 'fast-check'
import { CookieJar } from 'tough-cookie'
import type { CheckContext } from '../check.ts'
import { ERROR_CHARS, expectThat } from '../expect.ts'
import { followWithJar, readLoginForm, type LoginFormFields } from '../form-sign-in.ts'
import type { Http, HttpResponse, RequestOptions } from '../http.ts'
import { idpOrigins, originsNamed, unknownOrigin } from '../idp-origins.ts'
import { AUTHORIZATION_ERRORS, NEEDS_UI_ERRORS } from '../pages.ts'
import { AUTHORIZE, LOGOUT } from '../requests.ts'
import { visible } from './property.ts'
import { refusableFor } from './refusable.ts'
import { JUNK_KEYS } from './requests.ts'

/**
 * Generated malformed requests to the browser-facing endpoints (ROBUST-03): authorize (GET and
 * POST, OIDC Core §3.1.2.1), the login form's post (with and without a real interaction) and
 * logout (GET and POST, RP-Initiated Logout §2). Each request starts from a valid one and
 * spoils some of its parameters: over-long, repeated, empty, dropped, malformed (control and
 * non-ASCII characters) or oddly encoded (escapes that decode to nothing valid). Every value
 * stays under 5 KiB, so a GET's request line stays within common header limits.
 */

export type Pairs = readonly (readonly [string, string])[]

/** What happens to one parameter. */
export type Spoil =
  | { readonly kind: 'long'; readonly length: number }
  | { readonly kind: 'repeated'; readonly value: string }
  | { readonly kind: 'empty' }
  | { readonly kind: 'dropped' }
  | { readonly kind: 'malformed'; readonly value: string }
  /** Sent as is, unescaped: broken or overlong percent escapes, NUL, a lone surrogate. */
  | { readonly kind: 'odd-encoded'; readonly raw: string }

/** A spoilt request to one browser-facing endpoint. */
export interface PageRequest {
  readonly method: string
  /** The spoilt parameters, by name. */
  readonly spoils: readonly (readonly [string, Spoil])[]
  /** Extra parameters of no meaning. */
  readonly noise: Pairs
  /** POST bodies only: a form, or a form with broken escapes appended. */
  readonly body: 'form' | 'broken-escapes'
}

/** The longest over-long value: past 2048 (a common limit) and well past what anyone sends. */
export const LONG_MIN = 2049
const LONG_MAX = 4500

const ODD_ESCAPES = [
  '%zz',
  '%',
  '%0',
  '%00',
  '%C0%AF',
  '%ED%A0%80',
  '%FF%FE',
  '%E0%A4',
  '%25%32%35',
  '+%2B+',
  '%u0041',
  '%0D%0ASet-Cookie:%20x=1',
]

const spoil: fc.Arbitrary<Spoil> = fc.oneof(
  fc.integer({ min: LONG_MIN, max: LONG_MAX }).map((length): Spoil => ({ kind: 'long', length })),
  visible.map((value): Spoil => ({ kind: 'repeated', value })),
  fc.constant<Spoil>({ kind: 'empty' }),
  fc.constant<Spoil>({ kind: 'dropped' }),
  fc
    .oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }),
      fc.constantFrom('\u0000', '\r\n', '<script>', '"\'><', '\u202e', '../../', '%'),
    )
    .map((value): Spoil => ({ kind: 'malformed', value })),
  fc
    .tuple(fc.constantFrom(...ODD_ESCAPES), visible)
    .map(([escape, rest]): Spoil => ({ kind: 'odd-encoded', raw: `${escape}${rest}` })),
)

const noise: fc.Arbitrary<Pairs> = fc.array(
  fc.tuple(
    fc.oneof(fc.constantFrom(...JUNK_KEYS), fc.stringMatching(/^[a-z_]{1,12}$/)),
    fc.oneof(visible, fc.string({ unit: 'binary', maxLength: 20 })),
  ),
  { maxLength: 3 },
)

/** Requests to an endpoint with `names` as its parameters: some of them spoilt, by `methods`. */
export function pageRequests(
  names: readonly string[],
  methods: readonly string[],
): fc.Arbitrary<PageRequest> {
  return fc.record({
    method: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...methods) },
      { weight: 1, arbitrary: fc.constantFrom('PUT', 'DELETE', 'PATCH') },
    ),
    spoils: fc.uniqueArray(fc.tuple(fc.constantFrom(...names), spoil), {
      minLength: 1,
      maxLength: Math.min(3, names.length),
      selector: ([name]) => name,
    }),
    noise: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: noise }),
    body: fc.oneof(
      { weight: 4, arbitrary: fc.constant<PageRequest['body']>('form') },
      { weight: 1, arbitrary: fc.constant<PageRequest['body']>('broken-escapes') },
    ),
  })
}

/**
 * The over-long lengths each parameter is sent at, whatever the seed: one past a VARCHAR(255)
 * column, 1,000, and past 2048 (a common limit). A server that refuses a value past its own
 * limit may still fail below it, where a narrower column or buffer ends; the generated values
 * are all past 2048.
 */
export const OVER_LONG_LENGTHS = [256, 1_000, LONG_MIN + 2048] as const

/** The over-long values of each parameter, by `method`: run first, whatever the seed. */
export const overLongEach = (names: readonly string[], method: string): [PageRequest][] =>
  names.flatMap((name) =>
    OVER_LONG_LENGTHS.map((length): [PageRequest] => [
      { method, spoils: [[name, { kind: 'long', length }]], noise: [], body: 'form' },
    ]),
  )

const enc = encodeURIComponent

/** The long value: visible characters that need no escaping, so its length is what is sent. */
const longValue = (name: string, length: number): string =>
  `${name}-`.padEnd(length, 'abcdefghijklmnopqrstuvwxyz0123456789-._~'.charAt(length % 40))

/** The raw query or form string of `valid` with the request's spoils and noise. */
export function encoded(valid: Pairs, r: PageRequest): string {
  const spoils = new Map(r.spoils)
  const parts: string[] = []
  for (const [name, value] of valid) {
    const s = spoils.get(name)
    if (!s) parts.push(`${enc(name)}=${enc(value)}`)
    else if (s.kind === 'long') parts.push(`${enc(name)}=${enc(longValue(name, s.length))}`)
    else if (s.kind === 'repeated')
      parts.push(`${enc(name)}=${enc(value)}`, `${enc(name)}=${enc(s.value)}`)
    else if (s.kind === 'empty') parts.push(`${enc(name)}=`)
    else if (s.kind === 'malformed') parts.push(`${enc(name)}=${enc(s.value)}`)
    else if (s.kind === 'odd-encoded') parts.push(`${enc(name)}=${s.raw.replace(/[#&\s]/g, '')}`)
  }
  for (const [k, v] of r.noise) parts.push(`${enc(k)}=${enc(v)}`)
  return parts.join('&')
}

/** Whether the request carries `name` once with exactly `value` (the spoils left it alone). */
export const untouched = (r: PageRequest, name: string): boolean =>
  !r.spoils.some(([n]) => n === name) && !r.noise.some(([k]) => k === name)

/** Whether the request leaves `name` out altogether (dropped, and not sent again as noise). */
export const dropped = (r: PageRequest, name: string): boolean =>
  r.spoils.some(([n, s]) => n === name && s.kind === 'dropped') &&
  !r.noise.some(([k]) => k === name)

/** The request as the harness sends it: the query for GET (and odd methods), else a form. */
export function pageRequest(
  path: string,
  valid: Pairs,
  r: PageRequest,
  cookie?: string,
): { url: string; options: RequestOptions } {
  const raw = encoded(valid, r)
  const headers: Record<string, string> = { accept: 'text/html', ...(cookie ? { cookie } : {}) }
  if (r.method !== 'POST') return { url: `${path}?${raw}`, options: { method: r.method, headers } }
  return {
    url: path,
    options: {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: r.body === 'form' ? raw : `${raw}&%zz=%&bad%E0%A4=%ED%A0%80`,
    },
  }
}

export const showPageRequest = (path: string) => (r: PageRequest) =>
  `${r.method} ${path} with ${r.spoils
    .map(([name, s]) =>
      s.kind === 'long'
        ? `${name} of ${String(s.length)} characters`
        : s.kind === 'odd-encoded'
          ? `${name} odd-encoded ${JSON.stringify(s.raw.slice(0, 40))}`
          : s.kind === 'repeated' || s.kind === 'malformed'
            ? `${name} ${s.kind} ${JSON.stringify(s.value.slice(0, 40))}`
            : `${name} ${s.kind}`,
    )
    .join(', ')}${r.noise.length > 0 ? `, noise ${JSON.stringify(r.noise).slice(0, 120)}` : ''}${
    r.method === 'POST' && r.body !== 'form' ? ', broken escapes in the body' : ''
  }`

/**
 * An answer that refused the request unread because of load, not because of what was sent:
 * throttled (RFC 6585 §4: 429 "indicates that the user has sent too many requests in a given
 * amount of time") or unavailable for a while (RFC 9110 §15.6.4: 503 with Retry-After, "the
 * server is currently unable to handle the request due to a temporary overload"). Neither says
 * anything about how the request was judged: the case is not judged (never a pass). Returns
 * why, or undefined for an answer that judges the request.
 */
export function refusedUnread(res: { status: number; headers: Headers }): string | undefined {
  if (res.status === 429) return 'HTTP 429 (throttled, RFC 6585 §4)'
  if (res.status === 503 && res.headers.has('retry-after'))
    return 'HTTP 503 with Retry-After (overloaded, RFC 9110 §15.6.4)'
  return undefined
}

/**
 * The statuses that answer what `r` sent before the application reads it (refusable.ts),
 * accepted whatever their body, but only where they answer that request: 405 for a method the
 * endpoint does not take (never GET or POST at authorize and logout, which must take both, OIDC
 * Core §3.1.2.1, RP-Initiated Logout §2, nor POST at the login form); for an over-long value,
 * 414 and 431 when it is in the URI, 413 when it is in a POSTed body. Never 415 (RFC 9110
 * §15.5.16): every body sent is application/x-www-form-urlencoded, the type OIDC Core §3.1.2.1
 * names for a POSTed authorization request. Never 429: see `refusedUnread`.
 */
export function refusable(r: PageRequest, methods: readonly string[]): number[] {
  const long = r.spoils.some(([, s]) => s.kind === 'long')
  return refusableFor({
    method: r.method,
    serves: methods,
    large: long ? (r.method === 'POST' ? 'body' : 'uri') : undefined,
  })
}

/** Where an answer may send the browser, besides the IdP's own pages. */
export interface AllowedRedirect {
  /** The verified client URI (origin and path) the request may be answered at. */
  readonly uri: string
  /** The `error` values such a redirect must carry (none: any, or none at all). */
  readonly errors?: readonly string[]
  /** Why it is allowed, for the message when it is not. */
  readonly why: string
}

/**
 * The error codes of an authorization error response (RFC 6749 §4.1.2.1; OIDC Core §3.1.2.6),
 * but server_error: for a malformed request that is the 5xx of a redirect.
 */
export const AUTHORIZE_ERRORS = [...AUTHORIZATION_ERRORS, ...NEEDS_UI_ERRORS].filter(
  (e) => e !== 'server_error',
)

/**
 * Judges one answer of a browser-facing endpoint to a malformed request: never a 5xx; a page
 * the user is shown is HTML; a redirect stays at the IdP or goes to a verified client URI
 * (`allowed`) with an error. Same-origin redirects are followed (at most `hops`), each answer
 * judged alike. The first answer may be one of `refused` (`refusable`: what answers the request
 * as sent). Returns why the request was not judged (throttled or overloaded, `refusedUnread`),
 * or undefined once it was: a caller counts a case not judged as inconclusive, never as a pass.
 */
export async function expectPageAnswer(
  http: Http,
  first: HttpResponse,
  /** The IdP's origin, or all of them (idp-origins.ts: a login app on an origin of its own). */
  idp: string | ReadonlySet<string>,
  allowed: AllowedRedirect | undefined,
  /** Whether a page is owed (GET and POST, what a browser sends). */
  html: boolean,
  /** Statuses that answer the first request as it was sent (`refusable`). */
  refused: readonly number[] = [],
  options: {
    /** How many of the IdP's own redirects are followed (2). */
    readonly hops?: number
    /**
     * The request as sent (its raw query or form): a redirect off the IdP to an origin no URI
     * of it named is then not judged, not failed (see below). Without it, every redirect off
     * the IdP but to `allowed` fails.
     */
    readonly sent?: string
    /** The clients' origins: a redirect there is judged (never the IdP's), `sent` or not. */
    readonly clients?: readonly string[]
    /** Whether the target configuration declares `idpOrigins` (for the message). */
    readonly declared?: boolean
  } = {},
): Promise<string | undefined> {
  const hops = options.hops ?? 2
  const jar = new CookieJar()
  let res = first
  for (let hop = 0; ; hop++) {
    // ARCHITECTURE.md, RFC 9110 §15.6: bad input is never the server's error
    // a throttle or an overload says nothing of the request: not judged (before the 5xx test:
    // a 503 with Retry-After is the server's load, not its error about the request)
    const unread = refusedUnread(res)
    if (unread !== undefined) return unread
    expectThat(res.status < 500, `HTTP ${String(res.status)}: a 5xx for a malformed request`)
    if (hop === 0 && refused.includes(res.status)) return undefined
    if (res.status >= 300 && res.status < 400) {
      const raw = res.headers.get('location')
      expectThat(raw, `HTTP ${String(res.status)} without a Location header`)
      let to: URL | undefined
      try {
        to = new URL(raw, res.url)
      } catch {
        to = undefined
      }
      expectThat(
        to,
        `HTTP ${String(res.status)} with a Location that is no URL: ${raw.slice(0, 80)}`,
      )
      if (typeof idp === 'string' ? to.origin !== idp : !idp.has(to.origin)) {
        // RFC 6749 §4.1.2.1, §3.1.2.4: the server "MUST NOT automatically redirect the
        // user-agent to the invalid redirection URI"; RP-Initiated Logout §3: only to a
        // registered post-logout URI. What the MUST forbids is a destination the request chose
        // (or a client's, which is never the IdP's): an origin none of the request's URIs named
        // (a login app or error site of the provider's own the suite does not know) is neither
        // that nor known to be the IdP's, so it is not judged
        if (
          options.sent !== undefined &&
          !(allowed && `${to.origin}${to.pathname}` === allowed.uri) &&
          !originsNamed(options.sent).has(to.origin) &&
          !(options.clients ?? []).includes(to.origin)
        )
          return `HTTP ${String(res.status)} sent the browser to ${unknownOrigin(to, options.declared)}`
        expectThat(
          allowed && `${to.origin}${to.pathname}` === allowed.uri,
          `HTTP ${String(res.status)} redirected the browser to ${to.origin}${to.pathname}, which the request did not verify${allowed ? ` (only ${allowed.uri} could be: ${allowed.why})` : ''}`,
        )
        const params = new URLSearchParams(to.search.slice(1) || to.hash.slice(1))
        // RFC 6749 §4.1.2.1: the error answer carries a registered code and never a code
        expectThat(
          !params.has('code') && !params.has('access_token'),
          `the malformed request was answered with a code or token at ${allowed.uri}`,
        )
        if (allowed.errors)
          expectThat(
            allowed.errors.includes(params.get('error') ?? ''),
            `the error redirect carries error=${JSON.stringify(params.get('error'))}, not one of ${allowed.errors.join(', ')} (RFC 6749 §4.1.2.1)`,
          )
        return undefined
      }
      if (hop >= hops) return undefined
      for (const set of res.headers.getSetCookie())
        await jar.setCookie(set, res.url, { ignoreError: true }).catch(() => undefined)
      const cookie = await jar.getCookieString(to.toString())
      res = await http.request(to.toString(), {
        headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) },
      })
      continue
    }
    // a browser never sends other methods here: no page is owed to them
    if (!html) return undefined
    // RFC 6749 §4.1.2.1: the user is informed of the error (a page, SHOULD); INTERFACE.md §7:
    // an error body is {error, error_description} as JSON. Either shape; nothing else
    const type = res.headers.get('content-type') ?? ''
    if (/^text\/html\b/i.test(type)) return undefined
    const body: unknown = res.json
    expectThat(
      res.status >= 400 &&
        typeof body === 'object' &&
        body !== null &&
        'error' in body &&
        'error_description' in body &&
        typeof body.error === 'string' &&
        ERROR_CHARS.test(body.error) &&
        typeof body.error_description === 'string',
      `HTTP ${String(res.status)} answered with ${type || 'no content type'} (${JSON.stringify(res.text.slice(0, 80))}): neither an HTML page for the user nor an error in the JSON shape of INTERFACE.md §7`,
    )
    return undefined
  }
}

/**
 * A real login page's form, reached from a valid authorization request; undefined if none.
 * `left` hears where the IdP's redirects left its origins (`clientUris` said so), if they did.
 */
export async function loginFormOf(
  ctx: Pick<CheckContext, 'http' | 'target'>,
  authorizeUrl: string,
  clientUris: (url: URL) => boolean,
  left?: (url: URL) => void,
): Promise<{ form: LoginFormFields; jar: CookieJar } | undefined> {
  const jar = new CookieJar()
  const first = await ctx.http.request(authorizeUrl, { headers: { accept: 'text/html' } })
  const end = await followWithJar(ctx.http, jar, first, idpOrigins(ctx.target), clientUris)
  if ('client' in end) left?.(end.client)
  if ('client' in end || end.stopped.status !== 200) return undefined
  const form = readLoginForm(end.stopped.text, end.stopped.url)
  return form ? { form, jar } : undefined
}

export { AUTHORIZE, LOGOUT }
