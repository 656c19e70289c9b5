import type { CheckResult, Exchange } from './types.ts'

/**
 * Redaction of everything the suite records: transcripts, failure messages, notes, screenshot
 * names. Reports are uploaded as CI artifacts, so no secret, password, authorization code or
 * token the run knows may survive into them, whatever the shape of the text it sits in.
 *
 * Two layers, both applied before anything is truncated:
 * - by field: the values of secret fields in form bodies, URL queries and fragments, JSON, HTML
 *   inputs, multipart parts, headers and cookies are replaced whole (no prefix kept);
 * - by value: every secret the run knows (the configuration's client secrets and passwords, and
 *   each code or token a response handed out) is replaced wherever it appears, in any text.
 * JWTs keep their header and payload (the report decodes them) and lose their signature, which
 * makes them unusable.
 */

/** Names whose values are secrets wherever they appear (form, query, fragment, JSON, HTML). */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'client_secret',
  'client_assertion',
  'password',
  'code_verifier',
  'refresh_token',
  'access_token',
  'id_token',
  'id_token_hint',
  'token',
  'code',
  'device_code',
  'csrf',
  'session_state',
])

/**
 * A response's secret fields are handed-out credentials the run remembers, when they are at least
 * this long (shorter ones are echoes of the suite's own probes, like `token=x`).
 */
const MIN_ISSUED = 8

export const REDACTED = '[redacted]'
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/
/** A signed JWT inside any text: header and payload start with `eyJ` (base64url of `{"`). */
const JWT_IN_TEXT = /\beyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+/g

/** Replaces one secret value whole. JWTs keep header and payload and lose their signature. */
export function redactValue(value: string): string {
  if (JWT.test(value)) return value.replace(/\.[A-Za-z0-9_-]*$/, '.[signature redacted]')
  return REDACTED
}

// ---------------------------------------------------------------------------------------------
// Known secrets: what the configuration holds and what the target handed out during the run.

/** Secrets shorter than this are never remembered (they would redact ordinary words). */
const MIN_KNOWN = 4
/** Long secrets are found through an index on their first characters. */
const PREFIX = 8

const known = new Set<string>()
const short: string[] = []
const byPrefix = new Map<string, string[]>()

const encodings = (value: string): string[] => {
  const forms = new Set([value])
  forms.add(encodeURIComponent(value))
  forms.add(new URLSearchParams({ v: value }).toString().slice(2))
  forms.add(JSON.stringify(value).slice(1, -1))
  forms.add(
    value
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;'),
  )
  return [...forms]
}

/**
 * Remembers a secret, in every encoding a transcript may show it in (raw, URL-encoded, form-
 * encoded, JSON-escaped, HTML-escaped), so that it is redacted wherever it appears later.
 */
export function rememberSecret(value: string | undefined): void {
  if (typeof value !== 'string' || value.length < MIN_KNOWN) return
  for (const form of encodings(value)) {
    if (known.has(form)) continue
    known.add(form)
    if (form.length < PREFIX) {
      short.push(form)
      short.sort((a, b) => b.length - a.length)
    } else {
      const key = form.slice(0, PREFIX)
      const list = byPrefix.get(key) ?? []
      list.push(form)
      list.sort((a, b) => b.length - a.length)
      byPrefix.set(key, list)
    }
  }
}

/** Whether `value` is a secret the run knows (used by tests that grep reports). */
export function knownSecrets(): readonly string[] {
  return [...known]
}

/**
 * A handed-out credential's first characters are its secret too (a message that shows a token's
 * start, "…: gbK3CfcShSAEap48vKTh…"): a run of at least this many characters that begins an
 * issued non-JWT credential is replaced. Only issued ones: a configured secret may begin like a
 * client id, and a JWT's header is shared by every JWT of the target (and is kept anyway).
 */
const MIN_ISSUED_PREFIX = 12

/** The forms of issued non-JWT credentials, for prefix redaction. */
const issuedForms = new Set<string>()

/** How many characters at `i` begin an issued credential among `candidates` (0: too few). */
function issuedPrefixAt(
  text: string,
  i: number,
  candidates: readonly string[] | undefined,
): number {
  let best = 0
  for (const c of candidates ?? []) {
    if (!issuedForms.has(c)) continue
    let n = PREFIX
    while (n < c.length && text[i + n] === c[n]) n += 1
    if (n > best) best = n
  }
  // only a token's start shown cut short ("gbK3CfcShSAEap48vKTh…"): the run must begin and end
  // at a token's edge, so another value sharing its first characters (a configured client id
  // "conformance-client" beside a handed-out "conformance-secret") is left alone
  if (best < MIN_ISSUED_PREFIX) return 0
  if (TOKEN_CHAR.test(text[i - 1] ?? '') || TOKEN_CHAR.test(text[i + best] ?? '')) return 0
  return best
}

/** A character a token may carry (RFC 6750 §2.1 b64token, and the base64 and URL-safe sets). */
const TOKEN_CHAR = /^[A-Za-z0-9._~+/=-]$/

const replacementFor = (secret: string): string =>
  JWT.test(secret) ? redactValue(secret) : REDACTED

/** Replaces every known secret in `text`, wherever it appears. */
export function redactKnown(text: string): string {
  if (known.size === 0 || text.length < MIN_KNOWN) return text
  let out = text
  if (byPrefix.size > 0 && out.length >= PREFIX) {
    let result = ''
    let from = 0
    for (let i = 0; i + PREFIX <= out.length;) {
      const candidates = byPrefix.get(out.slice(i, i + PREFIX))
      const hit = candidates?.find((c) => out.startsWith(c, i))
      const part = hit ? 0 : issuedPrefixAt(out, i, candidates)
      if (hit) {
        result += out.slice(from, i) + replacementFor(hit)
        i += hit.length
        from = i
      } else if (part > 0) {
        result += out.slice(from, i) + REDACTED
        i += part
        from = i
      } else i += 1
    }
    out = result + out.slice(from)
  }
  for (const s of short) if (out.includes(s)) out = out.split(s).join(replacementFor(s))
  return out
}

const rememberIssuedValue = (value: string): void => {
  if (value.length < MIN_ISSUED || isRedacted(value)) return
  rememberSecret(value)
  if (!JWT.test(value))
    for (const form of encodings(value)) if (form.length >= MIN_ISSUED_PREFIX) issuedForms.add(form)
}

/** Remembers the credentials a JSON response or a redirect handed out. */
export function rememberIssued(json: unknown, location?: string | null, text?: string): void {
  if (text !== undefined && json === undefined) rememberIssuedText(text)
  if (json && typeof json === 'object' && !Array.isArray(json))
    for (const [field, v] of Object.entries(json))
      if (SECRET_FIELDS.has(field) && typeof v === 'string') rememberIssuedValue(v)
  if (location) rememberIssuedUrl(location)
}

/** Remembers the code or tokens carried in a URL's query or fragment (a redirect to a client). */
export function rememberIssuedUrl(url: string): void {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return
  }
  for (const part of [u.search.slice(1), u.hash.slice(1)])
    for (const [k, v] of new URLSearchParams(part)) if (SECRET_FIELDS.has(k)) rememberIssuedValue(v)
}

// ---------------------------------------------------------------------------------------------
// By field.

/** Redacts the secret fields of a form-encoded body, a URL query or a fragment. */
export function redactForm(body: string): string {
  const params = new URLSearchParams(body)
  const out = new URLSearchParams()
  for (const [k, v] of params) out.append(k, SECRET_FIELDS.has(k) ? redactValue(v) : v)
  return out.toString()
}

/** Redacts the secret fields of a URL's query and fragment (`#access_token=…`). */
export function redactUrl(url: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return redactText(url)
  }
  if (u.search) u.search = redactForm(u.search.slice(1))
  if (u.hash) u.hash = redactFragment(u.hash.slice(1))
  return redactText(u.toString())
}

/**
 * Redacts the secret fields of a URL's fragment in place: a client's `access_token=…`, or a
 * script page's route (`/login?uid=…&code=…`), whose other characters are left as the page had
 * them, so the address printed still opens the same route (re-encoding it as a form would
 * write `%2Flogin%3Fuid=…`).
 */
function redactFragment(fragment: string): string {
  return fragment.replace(
    /(^|[&?])([^&?=]*)=([^&]*)/g,
    (whole, lead: string, name: string, value: string) =>
      SECRET_FIELDS.has(decodeUri(name))
        ? `${lead}${name}=${encodeURIComponent(redactValue(decodeUri(value)))}`
        : whole,
  )
}

/** Redacts secret members of a JSON document (any depth); undefined when `text` is not JSON. */
function redactJsonDocument(text: string): string | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
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

/** Redacts secret members of a JSON document; text that is not JSON is redacted as text. */
export function redactJson(text: string): string {
  return redactText(redactJsonDocument(text) ?? text)
}

const FIELD_NAMES = [...SECRET_FIELDS].join('|')
/** `name=value` (forms, queries, fragments inside any text). */
const FIELD_ASSIGNMENT = new RegExp(`(^|[^A-Za-z0-9_])(${FIELD_NAMES})=([^&\\s"'<>#]+)`, 'g')
/** `"name": "value"` (JSON inside text that is not a JSON document, e.g. truncated or in HTML). */
const FIELD_JSON = new RegExp(`("(${FIELD_NAMES})"\\s*:\\s*")((?:[^"\\\\]|\\\\.)*)(")`, 'g')
/** An HTML input carrying a secret: `<input name="csrf" value="…">`, in either attribute order. */
const HTML_INPUT = /<input\b[^>]*>/gi
const HTML_NAME = new RegExp(`\\bname\\s*=\\s*["']?(${FIELD_NAMES})["'\\s/>]`, 'i')
const HTML_VALUE = /(\bvalue\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)/i
/** A multipart part named after a secret field: its value is everything up to the boundary. */
const MULTIPART_PART = new RegExp(
  `(content-disposition:[^\\r\\n]*\\bname="(${FIELD_NAMES})"[^\\r\\n]*\\r?\\n(?:[^\\r\\n]+\\r?\\n)*\\r?\\n)([\\s\\S]*?)(?=\\r?\\n--|$)`,
  'gi',
)

const decodeUri = (value: string): string => {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '))
  } catch {
    return value
  }
}
const decodeJsonString = (value: string): string => {
  try {
    return JSON.parse(`"${value}"`) as string
  } catch {
    return value
  }
}
const decodeHtml = (value: string): string =>
  value
    .replace(/^["']|["']$/g, '')
    .replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/**
 * Rewrites the value of every secret field found in `text`, in every notation the suite sends or
 * receives: multipart parts, HTML inputs, JSON members, `name=value` pairs. `rewrite` gets the
 * field's name and its decoded value, and returns what to write instead (the encoded value as
 * found is kept when it returns undefined).
 */
function rewriteFields(
  text: string,
  rewrite: (name: string, value: string) => string | undefined,
): string {
  return text
    .replace(MULTIPART_PART, (m, head: string, name: string, value: string) => {
      const out = value === '' ? undefined : rewrite(name, value)
      return out === undefined ? m : `${head}${out}`
    })
    .replace(HTML_INPUT, (tag) => {
      const name = HTML_NAME.exec(tag)?.[1]
      if (!name) return tag
      return tag.replace(HTML_VALUE, (m, attr: string, value: string) => {
        const out = rewrite(name, decodeHtml(value))
        return out === undefined ? m : `${attr}"${out}"`
      })
    })
    .replace(FIELD_JSON, (m, head: string, name: string, value: string, tail: string) => {
      const out = value === '' ? undefined : rewrite(name, decodeJsonString(value))
      return out === undefined ? m : `${head}${out}${tail}`
    })
    .replace(FIELD_ASSIGNMENT, (m, before: string, name: string, value: string) => {
      const out = rewrite(name, decodeUri(value))
      return out === undefined ? m : `${before}${name}=${out}`
    })
}

/** Whether a value is already a redaction (a redacted JWT is cut at its first space). */
const isRedacted = (value: string): boolean =>
  value.startsWith(REDACTED) || /\.\[signature( redacted\])?$/.test(value)

/**
 * Redacts secrets in any text: HTML, plain text, multipart bodies, failure messages. Secret
 * fields are found by name in every notation the suite sends or receives, signed JWTs by shape,
 * and known secrets by value.
 */
export function redactText(text: string): string {
  return redactKnown(
    rewriteFields(text, (_name, value) =>
      isRedacted(value) ? undefined : redactValue(value),
    ).replace(JWT_IN_TEXT, (jwt) => redactValue(jwt)),
  )
}

/** Remembers the codes and tokens that a page or text body hands out (e.g. a form_post page). */
export function rememberIssuedText(text: string): void {
  rewriteFields(text, (_name, value) => {
    rememberIssuedValue(value)
    return undefined
  })
}

/** The longest body a transcript keeps; redaction runs on the whole body before it is cut. */
export const MAX_RECORDED_BODY = 16 * 1024

/** Redacts a request or response body by its content type, then truncates it. */
export function redactBody(
  body: string | undefined,
  contentType: string | undefined,
): string | undefined {
  if (body === undefined) return undefined
  const type = contentType?.toLowerCase() ?? ''
  const redacted = type.includes('x-www-form-urlencoded')
    ? redactKnown(redactForm(body))
    : type.includes('json')
      ? redactJson(body)
      : (redactJsonDocument(body) ?? redactText(body))
  return redacted.length > MAX_RECORDED_BODY
    ? `${redacted.slice(0, MAX_RECORDED_BODY)}…[truncated]`
    : redacted
}

export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase()
    if (name === 'authorization' || name === 'proxy-authorization')
      out[k] = v.replace(/^(\S+)\s+(.+)$/s, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    else if (name === 'cookie' || name === 'set-cookie')
      out[k] = v.replace(/=([^;,\s]+)/g, (m, _value: string, offset: number, all: string) =>
        isCookieAttribute(all, offset) ? m : `=${REDACTED}`,
      )
    else if (name === 'location' || name === 'content-location' || name === 'referer')
      out[k] = redactUrl(v)
    else out[k] = redactText(v)
  }
  return out
}

/** Whether the `=` at `offset` belongs to a Set-Cookie attribute (Path, Domain, …), kept. */
const isCookieAttribute = (header: string, offset: number): boolean =>
  /(?:^|;)\s*(?:path|domain|expires|max-age|samesite|priority|partitioned)$/i.test(
    header.slice(0, offset),
  )

const redactRecord = (r: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [k, redactKnown(v)]))

/**
 * The last pass over a check's result before any report sees it: the message, notes and
 * screenshot names are redacted as text, and the transcript again by value, for a secret that
 * became known after an exchange was recorded.
 */
export function redactResult(result: CheckResult): CheckResult {
  const exchange = (x: Exchange): Exchange => ({
    ...x,
    url: redactKnown(x.url),
    requestHeaders: redactRecord(x.requestHeaders),
    requestBody: x.requestBody === undefined ? undefined : redactKnown(x.requestBody),
    responseHeaders: redactRecord(x.responseHeaders),
    responseBody: x.responseBody === undefined ? undefined : redactKnown(x.responseBody),
    error: x.error === undefined ? undefined : redactText(x.error),
  })
  return {
    ...result,
    message: result.message === undefined ? undefined : redactText(result.message),
    ...(result.cause === undefined ? {} : { cause: redactText(result.cause) }),
    ...(result.more === undefined ? {} : { more: result.more.map(redactText) }),
    notes: result.notes.map(redactText),
    exchanges: result.exchanges.map(exchange),
    screenshots: result.screenshots.map((s) => ({ ...s, name: redactText(s.name) })),
  }
}
