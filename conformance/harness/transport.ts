/**
 * What a failed connection says about the setting to fix (issue 32): a certificate the suite
 * does not trust is a TLS verification failure, with `--ca` as the remedy, never "unreachable";
 * a host that refuses, does not resolve or cannot be routed to is unreachable. Read from the
 * error codes Node (OpenSSL, the resolver, the socket), undici and Chromium give, along the
 * error's cause chain; anything else is no transport problem this module can name.
 */

/** A failed connection, in words a user acts on. */
export interface TransportProblem {
  /** `tls`: the TLS handshake or its certificate verification failed; `unreachable`: no connection. */
  readonly kind: 'tls' | 'unreachable'
  /** The code that says so (UNABLE_TO_VERIFY_LEAF_SIGNATURE, ECONNREFUSED, net::ERR_…). */
  readonly code: string
  /** One line: what happened, with the code and, where a setting is the remedy, which. */
  readonly message: string
}

/** Verification failures a CA given with --ca cures: the chain does not end at a trusted root. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
])

/** Other verification failures: the certificate itself is wrong for this connection. */
const CERT_WRONG: Record<string, string> = {
  CERT_HAS_EXPIRED: 'the target presented an expired certificate',
  CERT_NOT_YET_VALID: 'the target presented a certificate that is not valid yet',
  CERT_REVOKED: 'the target presented a revoked certificate',
  ERR_TLS_CERT_ALTNAME_INVALID:
    "the target's certificate does not name this host (check the host of --base-url)",
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
])

/** Chromium's network error names for the same cases (a navigation that failed). */
const BROWSER_UNTRUSTED =
  /net::ERR_CERT_(AUTHORITY_INVALID|INVALID|COMMON_NAME_INVALID|DATE_INVALID|[A-Z_]+)/
const BROWSER_UNREACHABLE =
  /net::ERR_(CONNECTION_REFUSED|NAME_NOT_RESOLVED|ADDRESS_UNREACHABLE|CONNECTION_TIMED_OUT|INTERNET_DISCONNECTED|NAME_RESOLUTION_FAILED)/

const TRUST_HINT =
  'give the certificate authority that issued it as a PEM file with --ca FILE (or IDP_CA, or "ca" in the configuration)'

/** The errors along `err`'s cause chain (and an AggregateError's members), outermost first. */
function chain(err: unknown): (Error & { code?: unknown })[] {
  const seen: (Error & { code?: unknown })[] = []
  const walk = (e: unknown, depth: number): void => {
    if (!(e instanceof Error) || depth > 6 || seen.includes(e)) return
    seen.push(e)
    walk((e as Error & { cause?: unknown }).cause, depth + 1)
    if (e instanceof AggregateError) for (const inner of e.errors) walk(inner, depth + 1)
  }
  walk(err, 0)
  return seen
}

/** The transport problem `err` is, or undefined when it is none this module names. */
export function transportProblem(err: unknown): TransportProblem | undefined {
  for (const e of chain(err)) {
    const code = typeof e.code === 'string' ? e.code : ''
    const said = `${code}: ${e.message}`
    if (UNTRUSTED.has(code))
      return {
        kind: 'tls',
        code,
        message: `TLS verification failed (${said}): the target's certificate does not chain to a certificate authority the suite trusts; ${TRUST_HINT}`,
      }
    const wrong = CERT_WRONG[code]
    if (wrong) return { kind: 'tls', code, message: `TLS verification failed (${said}): ${wrong}` }
    if (code === 'EPROTO' || code.startsWith('ERR_SSL_'))
      return {
        kind: 'tls',
        code,
        message: `the TLS handshake failed (${said}): is the address an https one?`,
      }
    if (UNREACHABLE.has(code))
      return { kind: 'unreachable', code, message: `the target is unreachable (${said})` }
    const browserTls = BROWSER_UNTRUSTED.exec(e.message)
    if (browserTls)
      return {
        kind: 'tls',
        code: browserTls[0],
        message: `TLS verification failed in the browser (${browserTls[0]}): ${TRUST_HINT}`,
      }
    const browserDown = BROWSER_UNREACHABLE.exec(e.message)
    if (browserDown)
      return {
        kind: 'unreachable',
        code: browserDown[0],
        message: `the target is unreachable from the browser (${browserDown[0]})`,
      }
  }
  return undefined
}
