import { randomBytes } from 'node:crypto'
import type { ResponseObject, ResponseToolkit } from '@hapi/hapi'
import type { SafeHtml } from './html.ts'

export const newNonce = (): string => randomBytes(16).toString('base64url')

/**
 * Sends a hosted page with the headers of ARCHITECTURE.md's login-page decision: CSP with
 * frame-ancestors 'none' (RFC 9700 §4.16), X-Frame-Options DENY, Referrer-Policy no-referrer,
 * no-store. `formTargets` are the redirect URIs a form post may end at (CSP form-action also
 * governs the redirect that follows a submission).
 */
export function page(
  h: ResponseToolkit,
  body: SafeHtml,
  options: {
    nonce: string
    status?: number
    formTargets?: readonly string[]
  },
): ResponseObject {
  const formAction = ["'self'", ...(options.formTargets ?? []).map((u) => cspSource(u))].join(' ')
  const csp = [
    "default-src 'none'",
    `style-src 'self' 'nonce-${options.nonce}'`,
    "img-src 'self' https:",
    `form-action ${formAction}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')
  return h
    .response(body.value)
    .code(options.status ?? 200)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
}

/** A URL as a CSP source expression: the URL without query or fragment, quotes and semicolons escaped. */
function cspSource(url: string): string {
  try {
    const u = new URL(url)
    return `${u.origin}${u.pathname}`.replace(/[;,'\s]/g, encodeURIComponent)
  } catch {
    return ''
  }
}
