import { fetchVia, type Target } from './target.ts'
import type { Exchange } from './types.ts'
import { redactBody, redactHeaders, redactUrl, rememberIssued } from './redact.ts'

/** A response as the harness sees it: status, lower-cased headers, raw text and parsed JSON. */
export interface HttpResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed body when it is JSON, otherwise undefined. */
  readonly json: unknown
  readonly url: string
}

export interface RequestOptions {
  readonly method?: string
  readonly headers?: Record<string, string>
  /** A form body: sent as application/x-www-form-urlencoded unless a content-type is given. */
  readonly form?: Record<string, string | readonly string[]>
  readonly body?: string
  /** Query parameters added to the URL. */
  readonly query?: Record<string, string | readonly string[]>
}

/**
 * The raw HTTP client of the negative checks. It never follows redirects (assertions are made
 * on Location), trusts the target's CA with TLS verification on, and records every exchange.
 */
export interface Http {
  request(pathOrUrl: string, options?: RequestOptions): Promise<HttpResponse>
  get(pathOrUrl: string, query?: Record<string, string | readonly string[]>): Promise<HttpResponse>
  postForm(
    pathOrUrl: string,
    form: Record<string, string | readonly string[]>,
    headers?: Record<string, string>,
  ): Promise<HttpResponse>
  /** Every exchange so far. */
  readonly exchanges: readonly Exchange[]
  /** Records an exchange made by other means (openid-client, the browser). */
  record(exchange: Exchange): void
}

const toParams = (values: Record<string, string | readonly string[]>): URLSearchParams => {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(values)) {
    if (typeof v === 'string') p.append(k, v)
    else for (const x of v) p.append(k, x)
  }
  return p
}

export function createHttp(target: Pick<Target, 'baseUrl' | 'dispatcher'>): Http {
  const exchanges: Exchange[] = []
  const resolve = (pathOrUrl: string): URL =>
    /^[a-z][a-z0-9+.-]*:/i.test(pathOrUrl)
      ? new URL(pathOrUrl)
      : new URL(target.baseUrl + pathOrUrl)

  const http: Http = {
    exchanges,
    record(exchange) {
      exchanges.push(exchange)
    },
    async request(pathOrUrl, options = {}) {
      const url = resolve(pathOrUrl)
      if (options.query) for (const [k, v] of toParams(options.query)) url.searchParams.append(k, v)
      const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
      let body = options.body
      if (options.form) {
        body = toParams(options.form).toString()
        headers['content-type'] ??= 'application/x-www-form-urlencoded'
      }
      const method = options.method ?? (body === undefined ? 'GET' : 'POST')
      const started = performance.now()
      const base = {
        method,
        url: redactUrl(url.toString()),
        requestHeaders: redactHeaders(headers),
        requestBody: redactBody(body, headers['content-type']),
      }
      let response: Response
      try {
        response = await fetchVia(target.dispatcher, url, {
          method,
          headers,
          body,
          redirect: 'manual',
        })
      } catch (err) {
        const cause = (err as Error & { cause?: Error }).cause
        exchanges.push({
          ...base,
          status: undefined,
          responseHeaders: {},
          responseBody: undefined,
          error: cause ? `${cause.name}: ${cause.message}` : (err as Error).message,
          durationMs: performance.now() - started,
        })
        throw err
      }
      const text = await response.text()
      let json: unknown
      if (/[/+]json\b/i.test(response.headers.get('content-type') ?? '')) {
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
      }
      // what the target hands out is remembered first, so that it is redacted wherever it
      // appears, in this exchange and in every later one
      rememberIssued(json, response.headers.get('location'), text)
      exchanges.push({
        ...base,
        status: response.status,
        responseHeaders: redactHeaders(Object.fromEntries(response.headers)),
        responseBody: redactBody(text, response.headers.get('content-type') ?? undefined),
        error: undefined,
        durationMs: performance.now() - started,
      })
      return { status: response.status, headers: response.headers, text, json, url: url.toString() }
    },
    get(pathOrUrl, query) {
      return http.request(pathOrUrl, query ? { query } : {})
    },
    postForm(pathOrUrl, form, headers) {
      return http.request(pathOrUrl, { method: 'POST', form, ...(headers ? { headers } : {}) })
    },
  }
  return http
}
