const SECRET_FIELDS = new Set([
  'client_secret',
  'password',
  'code_verifier',
  'refresh_token',
  'access_token',
  'id_token',
  'id_token_hint',
  'token',
  'code',
  'csrf',
])

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/**
 * Redacts one secret value. JWTs keep header and payload (the report decodes them) and lose
 * their signature; anything else keeps four characters.
 */
export function redactValue(value: string): string {
  if (JWT.test(value)) return value.replace(/\.[A-Za-z0-9_-]*$/, '.[signature redacted]')
  if (value.length <= 4) return '[redacted]'
  return `${value.slice(0, 4)}…[redacted]`
}

/** Redacts the secret fields of a form-encoded body or a URL query. */
export function redactForm(body: string): string {
  const params = new URLSearchParams(body)
  const out = new URLSearchParams()
  for (const [k, v] of params) out.append(k, SECRET_FIELDS.has(k) ? redactValue(v) : v)
  return out.toString()
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.search) u.search = redactForm(u.search.slice(1))
    return u.toString()
  } catch {
    return url
  }
}

/** Redacts secret members of a JSON document (any depth); non-JSON text is returned as is. */
export function redactJson(text: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return text
  }
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk)
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [
          k,
          SECRET_FIELDS.has(k) && typeof x === 'string' ? redactValue(x) : walk(x),
        ]),
      )
    }
    return v
  }
  return JSON.stringify(walk(parsed))
}

export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase()
    if (name === 'authorization')
      out[k] = v.replace(
        /^(\S+)\s+(.+)$/,
        (_m, scheme: string, cred: string) => `${scheme} ${redactValue(cred)}`,
      )
    else if (name === 'cookie' || name === 'set-cookie')
      out[k] = v.replace(/=([^;,\s]{4})[^;,\s]*/g, '=$1…[redacted]')
    else if (name === 'location') out[k] = redactUrl(v)
    else out[k] = v
  }
  return out
}
