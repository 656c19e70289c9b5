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
