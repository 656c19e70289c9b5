import { exchangeOf, type HttpResponse } from './http.ts'
import type { Aside, Exchange } from './types.ts'

/**
 * A failed expectation: its message is the check's failure message. `exchange` is the answer
 * the expectation judged, when it judged one: the failure's cause in the reports (check.ts).
 */
export class CheckFailure extends Error {
  override readonly name = 'CheckFailure'
  readonly exchange: Exchange | undefined
  /** Set by `aside`: the failure is not about the check's subject (CheckResult.aside). */
  readonly aside: Aside | undefined
  /** Set by `on`: the part of the check's subject the failed expectation is about. */
  readonly subject: string | undefined
  /** Set by `atShould`: a SHOULD of a MUST check's source, so its failure alone only warns. */
  readonly should: boolean
  constructor(
    message: string,
    exchange?: Exchange,
    aside?: Aside,
    subject?: string,
    should = false,
  ) {
    super(message)
    this.exchange = exchange
    this.aside = aside
    this.subject = subject
    this.should = should
  }
}

/**
 * Runs expectations its source states at SHOULD inside a MUST check (UI-06's 401 beside its
 * MUST challenge): a check whose every failure is one of these warns instead of failing.
 */
export function atShould<T>(expectations: () => T): T {
  try {
    return expectations()
  } catch (err) {
    if (err instanceof CheckFailure)
      throw new CheckFailure(err.message, err.exchange, err.aside, err.subject, true)
    throw err
  }
}

/**
 * Runs expectations about one part of the check's subject, named `subject` (a check that
 * judges a refusal and the answer's shape, say): a failure among them carries the name, which
 * the threat table reads (CheckResult.subjects, threats.ts `parts`) to count a failure only
 * against the threats that part is about. An inner `on` keeps its own name.
 */
export function on<T>(subject: string, expectations: () => T): T {
  const tagged = (err: unknown): unknown =>
    err instanceof CheckFailure && err.subject === undefined
      ? new CheckFailure(err.message, err.exchange, err.aside, subject, err.should)
      : err
  let value: T
  try {
    value = expectations()
  } catch (err) {
    throw tagged(err)
  }
  if (value instanceof Promise)
    return value.catch((err: unknown) => {
      throw tagged(err)
    }) as T
  return value
}

/**
 * Runs expectations that are not the check's subject, so that their failure, a failure still,
 * is not read as the threat the check is about being open: 'precondition' for a step the check
 * needs before its subject (the genuine request that must work first), 'refused' for how a
 * refusal is shaped once the refusal itself was shown (its status, its error code, its page).
 */
export function aside<T>(kind: Aside, expectations: () => T): T {
  try {
    return expectations()
  } catch (err) {
    if (err instanceof CheckFailure && !err.aside)
      throw new CheckFailure(err.message, err.exchange, kind, err.subject, err.should)
    throw err
  }
}

/**
 * Runs expectations about one response: a failure among them that names no exchange yet names
 * the one `res` was recorded as.
 */
export function judging<T>(res: HttpResponse, expectations: () => T): T {
  try {
    return expectations()
  } catch (err) {
    if (err instanceof CheckFailure && !err.exchange)
      throw new CheckFailure(err.message, exchangeOf(res), err.aside, err.subject, err.should)
    throw err
  }
}

/**
 * A positive control that did not hold: the check's negative cases would prove nothing, so
 * its verdict is ERROR (inconclusive), never a conformance failure. The requirement the
 * control exercises has its own check, which fails on its own.
 */
export class ControlFailure extends Error {
  override readonly name = 'ControlFailure'
}

/** Ends the check as inconclusive unless its positive control holds. */
export function expectControl(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ControlFailure(message)
}

/**
 * A revocation a check needs done before it can look at its effect: refused, the effect cannot
 * be shown (inconclusive). Its answer's form is REV-01/02/04's subject, so here it is noted.
 */
export function revokedForTheCheck(
  ctx: { note(message: string): void },
  res: HttpResponse,
  what: string,
): void {
  expectControl(
    res.status === 200,
    `the revocation of ${what} was answered HTTP ${res.status}, not 200, so its effect cannot be shown`,
  )
  const body = res.json as { message?: unknown } | undefined
  if (typeof body?.message !== 'string')
    ctx.note(
      `the revocation of ${what} answered 200 without a JSON message (INTERFACE.md §4.5; judged by REV-01, REV-02 and REV-04)`,
    )
}

/** Whether an introspection answer says the token is active: HTTP 200 with active true. */
export const introspectsActive = (res: HttpResponse): boolean =>
  res.status === 200 && (res.json as { active?: unknown } | undefined)?.active === true

/**
 * A token introspected active before a check shows what happens to it: the positive control of
 * a check whose subject is a token made inactive or a request refused (INTRO-01 judges a genuine
 * token called inactive). `res` is the answer taken before the check's cases; a check may settle
 * it after them, so that a deviation they found stands (a failure before the inconclusive end).
 */
export function activeForTheCheck(res: HttpResponse, what: string, why: string): void {
  expectControl(
    introspectsActive(res),
    `introspection of ${what}: expected active true, got HTTP ${res.status} ${show(res.json ?? res.text.slice(0, 100))}, so ${why}`,
  )
}

/**
 * The same user-info answers a genuine token with 200: the positive control of a check whose
 * subject is a token user-info must refuse (UI-01 judges a genuine token refused).
 */
export function servedForTheCheck(res: HttpResponse, what: string, why: string): void {
  expectControl(
    res.status === 200,
    `user-info with ${what}: expected HTTP 200, got ${res.status}, so ${why}`,
  )
}

/** A value for a failure message: JSON, cut after 300 characters. */
export const show = (v: unknown): string => {
  // JSON.stringify(undefined) is undefined: show it as such rather than crash
  const s = (JSON.stringify(v) as string | undefined) ?? String(v)
  return s.length > 300 ? `${s.slice(0, 300)}…` : s
}

/** Fails with `message` unless `condition` holds. */
export function expectThat(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailure(message)
}

export function expectEqual<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected)
    throw new CheckFailure(`${what}: expected ${show(expected)}, got ${show(actual)}`)
}

/** Compares two string arrays as sets. */
export function expectSameSet(actual: unknown, expected: readonly string[], what: string): void {
  expectThat(Array.isArray(actual), `${what}: expected an array, got ${show(actual)}`)
  const a = new Set(actual as unknown[])
  const same =
    a.size === expected.length &&
    expected.every((x) => a.has(x)) &&
    (actual as unknown[]).length === expected.length
  expectThat(same, `${what}: expected exactly ${show(expected)}, got ${show(actual)}`)
}

export function expectStatus(
  res: HttpResponse,
  expected: number | readonly number[],
  what = 'status',
): void {
  const list = typeof expected === 'number' ? [expected] : expected
  judging(res, () =>
    expectThat(
      list.includes(res.status),
      `${what}: expected HTTP ${list.join(' or ')}, got ${res.status} from ${res.url}`,
    ),
  )
}

/** The body must be a JSON object served as application/json (or +json). */
export function expectJsonObject(res: HttpResponse, what = 'body'): Record<string, unknown> {
  return judging(res, () => jsonObject(res, what))
}

function jsonObject(res: HttpResponse, what: string): Record<string, unknown> {
  const type = res.headers.get('content-type') ?? ''
  expectThat(
    /^application\/([\w.-]+\+)?json\b/i.test(type),
    `${what}: expected Content-Type application/json, got ${show(type)}`,
  )
  expectThat(
    res.json !== null && typeof res.json === 'object' && !Array.isArray(res.json),
    `${what}: expected a JSON object, got ${show(res.text.slice(0, 200))}`,
  )
  return res.json as Record<string, unknown>
}

/**
 * A request with a method the endpoint does not take is refused in the JSON error shape:
 * 400, 404 or 405 (RFC 9110 §15.5.5/§15.5.6 let a server answer 404), noted when not 405.
 * The GET carries the client's credentials in its query, the only place a GET has for them;
 * RFC 6749 §2.3.1 says they MUST NOT be in the request URI, so a 401 invalid_client refuses the
 * request for them: also a refusal, noted, since it does not show how the method alone fares.
 */
export function wrongMethod(
  ctx: { note(message: string): void },
  res: HttpResponse,
  what: string,
): void {
  judging(res, () => {
    if (res.status === 401) {
      about(what, () => expectOAuthError(res, 401, 'invalid_client'))
      ctx.note(
        `${what} was refused 401 invalid_client for the credentials in its query (RFC 6749 §2.3.1: the body only), so how the method alone is treated was not shown`,
      )
      return
    }
    about(what, () => expectOAuthError(res, [400, 404, 405]))
    if (res.status !== 405) ctx.note(`${what} was answered ${res.status}, not 405 (SHOULD)`)
  })
}

/** Runs expectations with `what` in front of their failure message. */
export function about<T>(what: string, expectations: () => T): T {
  try {
    return expectations()
  } catch (err) {
    if (err instanceof CheckFailure)
      throw new CheckFailure(
        `${what}: ${err.message}`,
        err.exchange,
        err.aside,
        err.subject,
        err.should,
      )
    throw err
  }
}

/** RFC 6749 App. A.7 / A.8: the characters allowed in error and error_description. */
export const ERROR_CHARS = /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/

/** The JSON error shape of INTERFACE.md §7, with the given status and (when given) code. */
export function expectOAuthError(
  res: HttpResponse,
  status: number | readonly number[],
  code?: string | readonly string[],
): Record<string, unknown> {
  return judging(res, () => {
    expectStatus(res, status)
    const body = expectJsonObject(res, 'error body')
    expectThat(
      typeof body.error === 'string' && body.error.length > 0,
      `error body: expected an "error" string, got ${show(body)}`,
    )
    // INTERFACE.md §7: the body carries both error and a human-readable error_description
    expectThat(
      typeof body.error_description === 'string' && body.error_description.length > 0,
      `error body: expected an error_description string, got ${show(body.error_description)}`,
    )
    if (code !== undefined) {
      const codes = typeof code === 'string' ? [code] : code
      expectThat(
        codes.includes(body.error),
        `error: expected ${codes.join(' or ')}, got ${show(body.error)}`,
      )
    }
    return body
  })
}

/** The space-separated tokens of a scope value (RFC 6749 §3.3), or undefined if not a string. */
export const scopeTokens = (scope: unknown): string[] | undefined =>
  typeof scope === 'string' ? scope.split(' ').filter(Boolean) : undefined

/** The scope string as a sorted list of distinct values. */
export const scopeList = (scope: unknown): string[] =>
  typeof scope === 'string' ? [...new Set(scope.split(' ').filter(Boolean))].sort() : []

/** The scope must be a space-separated string holding exactly `expected` (any order). */
export function expectScope(actual: unknown, expected: string, what: string): void {
  expectThat(typeof actual === 'string', `${what}: expected a scope string, got ${show(actual)}`)
  expectEqual(scopeList(actual).join(' '), scopeList(expected).join(' '), what)
}

/** RFC 6749 §5.1: token responses MUST NOT be cached. */
export function expectNoStore(res: HttpResponse, what: string): void {
  judging(res, () => {
    const cacheControl = res.headers.get('cache-control') ?? ''
    expectThat(
      /(^|[\s,])no-store($|[\s,])/i.test(cacheControl),
      `${what}: expected Cache-Control: no-store, got ${show(cacheControl)}`,
    )
    expectThat(
      /no-cache/i.test(res.headers.get('pragma') ?? ''),
      `${what}: expected Pragma: no-cache, got ${show(res.headers.get('pragma'))}`,
    )
  })
}

/** INTERFACE.md §2.5: an inactive token is exactly `{"active":false}`, with status 200. */
export function expectInactive(res: HttpResponse, what: string): void {
  judging(res, () => {
    expectStatus(res, 200, `introspection of ${what}`)
    const body = expectJsonObject(res, `introspection of ${what}`)
    expectThat(
      body.active === false,
      `introspection of ${what}: expected active false, got ${show(body)}`,
    )
    expectThat(
      Object.keys(body).length === 1,
      `introspection of ${what}: an inactive answer holds only "active" (INTERFACE.md §2.5), got ${show(body)}`,
    )
  })
}

/** RFC 7662 §2.2: an active token is 200 with active true; returns the body. */
export function expectActive(res: HttpResponse, what: string): Record<string, unknown> {
  return judging(res, () => {
    expectStatus(res, 200, `introspection of ${what}`)
    const body = expectJsonObject(res, `introspection of ${what}`)
    expectThat(
      body.active === true,
      `introspection of ${what}: expected active true, got ${show(body)}`,
    )
    return body
  })
}

/** INTERFACE.md §3, §4.5: every revocation with valid credentials is 200 with a message. */
export function expectRevoked(res: HttpResponse, what: string): void {
  judging(res, () => {
    expectStatus(res, 200, `revocation of ${what}`)
    const body = expectJsonObject(res, `revocation of ${what}`)
    expectThat(
      typeof body.message === 'string' && body.message !== '',
      `revocation of ${what}: expected a "message" string, got ${show(body)}`,
    )
  })
}

/** The scheme and auth-params of a WWW-Authenticate challenge (RFC 9110 §11.6.1). */
export function parseChallenge(
  header: string | null,
): { scheme: string; params: Record<string, string> } | undefined {
  if (!header) return undefined
  const m = /^\s*([A-Za-z][\w!#$%&'*+.^`|~-]*)(.*)$/s.exec(header)
  if (!m?.[1]) return undefined
  const params: Record<string, string> = {}
  const re = /(?:^|,)\s*([\w!#$%&'*+.^`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g
  for (const p of (m[2] ?? '').matchAll(re)) {
    if (p[1]) params[p[1].toLowerCase()] = (p[2] ?? p[3] ?? '').replace(/\\(.)/g, '$1')
  }
  return { scheme: m[1], params }
}

/**
 * RFC 6750 §3: a user-info refusal with `status` carries a Bearer challenge; with `error`
 * given, the challenge names it (and the JSON body, when there is one, agrees).
 */
export function expectBearerChallenge(
  res: HttpResponse,
  status: number | readonly number[],
  error: string | undefined,
  what: string,
): Record<string, string> {
  return judging(res, () => {
    expectStatus(res, status, what)
    const header = res.headers.get('www-authenticate')
    const challenge = parseChallenge(header)
    expectThat(
      challenge?.scheme.toLowerCase() === 'bearer',
      `${what}: expected WWW-Authenticate: Bearer …, got ${show(header)}`,
    )
    if (error !== undefined) {
      expectThat(
        challenge.params.error === error,
        `${what}: expected WWW-Authenticate with error="${error}", got ${show(header)}`,
      )
    }
    return challenge.params
  })
}

/**
 * A failed client authentication: invalid_client (RFC 6749 §5.2), with `status` (401 unless
 * the check's source allows more), and nothing about the token.
 */
export function expectNoTokenData(
  res: HttpResponse,
  what: string,
  status: number | readonly number[] = 401,
): void {
  judging(res, () => {
    about(what, () => {
      // the error code first, so a refusal under another code is named as what deviates
      const error = (res.json as { error?: unknown } | undefined)?.error
      if (res.status >= 400 && res.status < 500 && typeof error === 'string')
        expectThat(
          error === 'invalid_client',
          `error=${error} (HTTP ${res.status}) where RFC 6749 §5.2 says invalid_client ("Client authentication failed (e.g., unknown client, no client authentication included, or unsupported authentication method)")`,
        )
      expectOAuthError(res, status, 'invalid_client')
    })
    const body = res.json as Record<string, unknown>
    for (const field of ['active', 'sub', 'scope', 'client_id', 'exp'])
      expectThat(!(field in body), `${what}: the error body carries "${field}"`)
  })
}

/** Harness rule: time comparisons allow ±5 min of clock skew (REQUIREMENTS.md). */
export const SKEW = 300

/**
 * RFC 6749 §5.1: a Bearer token_type (case-insensitive) and an expires_in that is a positive
 * whole number of seconds, as a grant's token response must carry them (INTERFACE.md §4.2).
 */
export function expectBearerLifetime(tokens: { token_type: string; expires_in?: unknown }): void {
  expectEqual(tokens.token_type.toLowerCase(), 'bearer', 'token_type (case-insensitive)')
  expectThat(
    typeof tokens.expires_in === 'number' &&
      Number.isInteger(tokens.expires_in) &&
      tokens.expires_in > 0,
    `expires_in: expected a positive integer, got ${JSON.stringify(tokens.expires_in)}`,
  )
}
