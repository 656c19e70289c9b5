import { invalidRequest } from '../errors.ts'

/** A parsed form or query: repeated parameters arrive as arrays. */
export type RawParams = Readonly<Record<string, string | readonly string[] | undefined>>

/**
 * RFC 6749 §3.1, §3.2: request and response parameters MUST NOT be included more than once.
 * Returns the parameters as single strings, or throws invalid_request naming the repeated one.
 * Parameters the endpoint does not know are ignored, as the RFC requires.
 */
export function singleParams(raw: unknown): Record<string, string> {
  if (raw === null || raw === undefined) return {}
  if (typeof raw !== 'object' || Array.isArray(raw) || Buffer.isBuffer(raw)) {
    throw invalidRequest('the request body must be form-encoded parameters')
  }
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (Array.isArray(value)) throw invalidRequest(`parameter ${safeName(name)} is repeated`)
    if (typeof value !== 'string') throw invalidRequest(`parameter ${safeName(name)} is malformed`)
    out[name] = value
  }
  return out
}

/** A parameter name fit to echo in an error_description (RFC 6749 App. A.8 characters). */
export const safeName = (name: string): string =>
  name.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, '?').slice(0, 64)

/** The value of a required parameter, or invalid_request. */
export function required(params: Record<string, string>, name: string): string {
  const value = params[name]
  if (value === undefined || value === '')
    throw invalidRequest(`missing required parameter ${name}`)
  return value
}

/** The parameters of a parsed query or form (hapi's: repeated ones as arrays); {} when none. */
export function rawParams(source: unknown): Record<string, unknown> {
  return source !== null && typeof source === 'object' && !Buffer.isBuffer(source)
    ? (source as Record<string, unknown>)
    : {}
}

/**
 * One parameter of a request that must not repeat it (RFC 6749 §3.1): its value, undefined when
 * absent or empty, invalid_request when repeated.
 */
export function single(raw: Record<string, unknown>, name: string): string | undefined {
  const value = raw[name]
  if (Array.isArray(value)) throw invalidRequest(`parameter ${safeName(name)} is repeated`)
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * A field of one of the server's own HTML forms (login, logout confirmation): its value when
 * sent once, else undefined, so a tampered form (a repeated field) reads as incomplete and gets
 * the form's own error page rather than a JSON error.
 */
export function formField(raw: Record<string, unknown>, name: string): string | undefined {
  const value = raw[name]
  return typeof value === 'string' ? value : undefined
}

/** Whether the parameter was sent at all, empty or repeated included. */
export const isPresent = (raw: Record<string, unknown>, name: string): boolean =>
  Object.hasOwn(raw, name)
