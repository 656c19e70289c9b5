import type { HttpResponse } from './http.ts'

/** A failed expectation: its message is the check's failure message. */
export class CheckFailure extends Error {
  override readonly name = 'CheckFailure'
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

const show = (v: unknown): string => {
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
  expectThat(
    list.includes(res.status),
    `${what}: expected HTTP ${list.join(' or ')}, got ${res.status} from ${res.url}`,
  )
}

/** The body must be a JSON object served as application/json (or +json). */
export function expectJsonObject(res: HttpResponse, what = 'body'): Record<string, unknown> {
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
 */
export function wrongMethod(
  ctx: { note(message: string): void },
  res: HttpResponse,
  what: string,
): void {
  about(what, () => expectOAuthError(res, [400, 404, 405]))
  if (res.status !== 405) ctx.note(`${what} was answered ${res.status}, not 405 (SHOULD)`)
}

/** Runs `fn`, prefixing the message of the CheckFailure it throws with `what`. */
function about(what: string, fn: () => void): void {
  try {
    fn()
  } catch (err) {
    if (err instanceof CheckFailure) throw new CheckFailure(`${what}: ${err.message}`)
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
}
