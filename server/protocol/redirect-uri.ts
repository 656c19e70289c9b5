/**
 * Redirect URI rules: what may be registered, and when a requested redirect_uri matches a
 * registered one. Exact string comparison (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3), with the one
 * exception RFC 8252 §7.3 requires for native apps: a loopback IP redirect URI registered over
 * plain HTTP matches a request for any port.
 */

const LOOPBACK_IPS = new Set(['127.0.0.1', '[::1]'])

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri)
  } catch {
    return undefined
  }
}

/** True when `uri` is an http URI on a loopback IP literal (RFC 8252 §7.3). */
export function isLoopbackHttp(uri: string): boolean {
  const url = parse(uri)
  return url?.protocol === 'http:' && LOOPBACK_IPS.has(url.hostname)
}

/** Whether `requested` is allowed by the registered redirect URI `registered`. */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true
  if (!isLoopbackHttp(registered) || !isLoopbackHttp(requested)) return false
  const a = new URL(registered)
  const b = new URL(requested)
  // RFC 8252 §7.3: the port is chosen by the app at run time; everything else must match
  return (
    a.hostname === b.hostname &&
    a.pathname === b.pathname &&
    a.search === b.search &&
    !requested.includes('#') &&
    b.username === '' &&
    b.password === '' &&
    requested === `http://${b.hostname}${b.port ? `:${b.port}` : ''}${b.pathname}${b.search}`
  )
}

export function isRegisteredRedirectUri(registered: readonly string[], requested: string): boolean {
  return registered.some((r) => redirectUriMatches(r, requested))
}

export interface RedirectUriVerdict {
  /** Why the URI cannot be registered. */
  readonly error?: string
  /** Registrable, but not what the RFCs recommend. */
  readonly warning?: string
}

/**
 * Whether `uri` may be registered as a redirect (or post-logout redirect) URI: absolute,
 * without fragment (RFC 6749 §3.1.2), and https, http on a loopback IP (RFC 8252 §7.3), or a
 * private-use scheme in reverse-domain form (RFC 8252 §7.1).
 */
export function checkRegistrableRedirectUri(uri: string): RedirectUriVerdict {
  const url = parse(uri)
  if (!url) return { error: 'is not an absolute URI' }
  if (uri.includes('#')) return { error: 'must not contain a fragment (RFC 6749 §3.1.2)' }
  if (url.username || url.password) return { error: 'must not contain user information' }
  if (url.protocol === 'https:') return {}
  if (url.protocol === 'http:') {
    if (LOOPBACK_IPS.has(url.hostname)) return {}
    if (url.hostname === 'localhost')
      return {
        warning:
          'uses "localhost"; RFC 8252 §8.3 recommends the loopback IP literal http://127.0.0.1 instead, which also matches any port (§7.3)',
      }
    return {
      error:
        'must use https; plain http is allowed only on the loopback IP literals 127.0.0.1 and [::1] (RFC 8252 §7.3)',
    }
  }
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/i.test(url.protocol)) return {}
  return {
    error: `uses the scheme "${url.protocol.slice(0, -1)}"; use https, http on 127.0.0.1, or a reverse-domain private-use scheme such as com.example.app:/callback (RFC 8252 §7.1)`,
  }
}
