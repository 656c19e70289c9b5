import { parse, type DefaultTreeAdapterTypes } from 'parse5'
import type { Exchange } from '../harness/types.ts'
import type { CauseGroup } from './summary.ts'

/**
 * What the target configuration calls each client and user, so that a cause can name the
 * setting to look at: the configuration's name ('main', 'service', …) by client ID, and by
 * username.
 */
export interface ConfigNames {
  readonly clients: Readonly<Record<string, string>>
  readonly users: Readonly<Record<string, string>>
}

/** What the reader of a cause needs beside its line: the answer itself, and what to fix. */
export interface CauseDetail {
  /** The answer the cause names, as recorded (redacted): status and an excerpt of its body. */
  readonly answer?: string
  /** The target configuration's value that most likely caused it, and why. */
  readonly setting?: string
}

/** "POST /auth/token answered HTTP 401 error=invalid_client" (harness/check.ts answered()). */
const ANSWERED =
  /^([A-Z]+) (\S+) (?:answered HTTP (\d{3})(?: error=(\S+))?|got no answer(?: \(.*\))?$)/

const pathOf = (url: string): string => {
  try {
    return new URL(url, 'https://x').pathname
  } catch {
    return url
  }
}

/** The exchange a cause line names, the latest of the group's checks that answered so. */
function namedExchange(group: CauseGroup): Exchange | undefined {
  const m = ANSWERED.exec(group.cause)
  if (!m) return undefined
  const [, method, path, status] = m
  for (const r of group.results)
    for (const x of [...r.exchanges].reverse())
      if (
        x.method === method &&
        pathOf(x.url) === path &&
        (status === undefined ? x.status === undefined : String(x.status) === status)
      )
        return x
  return undefined
}

const EXCERPT = 240

/** The visible text of an HTML page, whitespace collapsed (scripts and styles left out). */
function pageText(html: string): string {
  const parts: string[] = []
  const walk = (node: DefaultTreeAdapterTypes.ParentNode): void => {
    for (const child of node.childNodes) {
      if (child.nodeName === '#text') parts.push((child as DefaultTreeAdapterTypes.TextNode).value)
      else if ('childNodes' in child && !['script', 'style', 'head'].includes(child.nodeName))
        walk(child)
    }
  }
  walk(parse(html))
  return parts.join(' ')
}

/** A short excerpt of an answer's body: an OAuth error's members, a page's text, or the text. */
export function bodyExcerpt(x: Pick<Exchange, 'responseBody' | 'responseHeaders'>): string {
  const body = x.responseBody ?? ''
  if (!body.trim()) return 'empty body'
  try {
    const json = JSON.parse(body) as unknown
    if (json && typeof json === 'object' && 'error' in json) {
      const { error, error_description } = json as Record<string, unknown>
      return JSON.stringify(
        error_description === undefined ? { error } : { error, error_description },
      )
    }
  } catch {
    // not JSON: as text below
  }
  const type = x.responseHeaders['content-type'] ?? ''
  const text = (/html/i.test(type) || /^\s*</.test(body) ? pageText(body) : body)
    .replace(/\s+/g, ' ')
    .trim()
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text || 'no text'
}

/** The client an exchange was made for: the client_id of its form body or of its URL. */
function clientIdOf(x: Exchange): string | undefined {
  const fromBody = /(?:^|&)client_id=([^&]*)/.exec(x.requestBody ?? '')?.[1]
  if (fromBody !== undefined)
    try {
      return decodeURIComponent(fromBody.replace(/\+/g, ' '))
    } catch {
      return fromBody
    }
  try {
    return new URL(x.url).searchParams.get('client_id') ?? undefined
  } catch {
    return undefined
  }
}

const CLIENT_ENDPOINTS = /\/(token|introspect|revoke)$/

/**
 * The setting a refused request most likely points at, when the failure is that answer itself
 * (the cause is the bare "answered HTTP …" line: the check did not expect a refusal there, so
 * it was sent with the configured values). An assertion about the answer's content (a cause
 * with ": expected …" after it) names no setting: the configuration is not what it is about.
 */
function settingOf(
  group: CauseGroup,
  x: Exchange | undefined,
  names: ConfigNames | undefined,
): string | undefined {
  const m = ANSWERED.exec(group.cause)
  if (m && m[0] === group.cause && x) {
    const [, , path = '', status, code] = m
    const id = clientIdOf(x)
    const name = id === undefined ? undefined : names?.clients[id]
    const client = name ? `clients.${name}` : 'clients.<name>'
    const whose = id === undefined ? '' : ` (client_id ${id})`
    if (code === 'invalid_client' || (status === '401' && CLIENT_ENDPOINTS.test(path)))
      return `${client}.secret or ${client}.id in the target configuration: the IdP did not authenticate the client${whose}`
    if (code === 'unauthorized_client')
      return `${client}.id: the client${whose} is not registered at the IdP for this grant`
    if (code === 'invalid_scope' && /grant_type=client_credentials/.test(x.requestBody ?? ''))
      return `${client}.scope: the IdP refused the scope it names for the client${whose}`
    const text = x.responseBody ?? ''
    if (/post_logout_redirect_uri/i.test(text))
      return `${client}.postLogoutRedirectUri: it must be registered at the IdP for the client${whose}`
    if (/redirect_uri/i.test(text))
      return `${client}.redirectUri: it must be registered at the IdP for the client${whose}`
    if (
      status === undefined &&
      /CERT|certificate|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/i.test(x.error ?? '')
    )
      return `ca (--ca): the certificate authority that signed the target's certificate is not trusted`
    if (status === undefined && /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(x.error ?? ''))
      return `baseUrl (--base-url): nothing answered there`
    return undefined
  }
  // a sign-in that did not get through: the IdP showed its login page again
  if (/login page again after the sign-in|sign-in by form post ended elsewhere/.test(group.cause)) {
    const users = Object.values(names?.users ?? {})
    const which = users.length ? users.map((u) => `users.${u}`).join(', ') : 'users.<name>'
    return `the username or password of ${which} (or login.steps): the sign-in did not get through`
  }
  return undefined
}

/** The answer a cause names and the setting it most likely points at, when there are. */
export function causeDetail(group: CauseGroup, names?: ConfigNames): CauseDetail {
  const x = namedExchange(group)
  const answer = x
    ? x.status === undefined
      ? `no answer: ${x.error ?? 'no response'}`
      : `HTTP ${x.status}: ${bodyExcerpt(x)}`
    : undefined
  const setting = settingOf(group, x, names)
  return { ...(answer ? { answer } : {}), ...(setting ? { setting } : {}) }
}

/** The configuration's names of its clients (by client ID) and users (by username). */
export function configNames(config: {
  readonly clients: Readonly<Record<string, { readonly id: string } | undefined>>
  readonly users: Readonly<Record<string, { readonly username: string } | undefined>>
}): ConfigNames {
  const byValue = <T>(
    entries: Readonly<Record<string, T | undefined>>,
    key: (t: T) => string,
  ): Record<string, string> =>
    Object.fromEntries(
      Object.entries(entries).flatMap(([name, t]) => (t === undefined ? [] : [[key(t), name]])),
    )
  return {
    clients: byValue(config.clients, (c) => c.id),
    users: byValue(config.users, (u) => u.username),
  }
}
