// the module objects, looked up per request (not named imports, which bind the original
// functions): the self-test's msw interceptors patch http.request and https.request
import nodeHttp, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http'
import nodeHttps, { Agent as HttpsAgent } from 'node:https'
import { createSecureContext, rootCertificates } from 'node:tls'
import type { Target } from './target.ts'
import { endpointNamed, endpointUrl } from './endpoints.ts'
import type { Exchange } from './types.ts'
import { redactBody, redactHeaders, redactUrl, rememberIssued } from './redact.ts'

/**
 * The exchange each response of `Http.request` was recorded as: an expectation that fails on a
 * response names that exchange as its cause (expect.ts), not whichever the check made last.
 */
const recordedAs = new WeakMap<HttpResponse, Exchange>()

/** The recorded exchange a response came from (undefined for one built by other means). */
export const exchangeOf = (res: HttpResponse): Exchange | undefined => recordedAs.get(res)

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

/**
 * One keep-alive agent per CA, trusting it beside the public roots with verification on (the
 * same trust as the target's undici dispatcher). The trust is one secure context made once:
 * given as `ca`, the ~150 roots were parsed again for every new connection and joined into
 * the agent's key for every request (a few per cent of a run's CPU).
 */
const agents = new Map<string, HttpsAgent>()
function agentFor(ca: string | undefined): HttpsAgent {
  const key = ca ?? ''
  let agent = agents.get(key)
  if (!agent) {
    agent = new HttpsAgent({
      keepAlive: true,
      keepAliveMsecs: 1000,
      ...(ca ? { secureContext: createSecureContext({ ca: [...rootCertificates, ca] }) } : {}),
    })
    agents.set(key, agent)
  }
  return agent
}

const toHeaders = (raw: IncomingHttpHeaders): Headers => {
  const headers = new Headers()
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue
    if (Array.isArray(v)) for (const x of v) headers.append(k, x)
    else headers.append(k, v)
  }
  return headers
}

const sentHeaders = (headers: OutgoingHttpHeaders, host: string): Record<string, string> => {
  const out: Record<string, string> = { host }
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : String(v)
  return out
}

/**
 * Sends one request like a plain HTTP client: exactly the headers the check gives (plus Host,
 * Connection and Content-Length, which HTTP/1.1 needs), never the `Sec-Fetch-*`,
 * `Accept-Language` or `User-Agent` headers Node's fetch() adds, which make some providers
 * answer as to a browser's script. Never follows redirects. Resolves with the headers actually
 * sent, for the transcript.
 */
function send(
  url: URL,
  init: {
    method: string
    headers: Record<string, string>
    body: string | undefined
    ca: string | undefined
    signal: AbortSignal | undefined
    localAddress: string | undefined
    retried?: boolean
  },
): Promise<{ status: number; headers: Headers; text: string; sent: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...init.headers }
    if (
      init.body !== undefined &&
      !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')
    )
      headers['content-length'] = String(Buffer.byteLength(init.body))
    const options = {
      method: init.method,
      headers,
      ...(init.signal ? { signal: init.signal } : {}),
      ...(init.localAddress ? { localAddress: init.localAddress } : {}),
    }
    const req =
      url.protocol === 'http:'
        ? nodeHttp.request(url, options)
        : nodeHttps.request(url, { ...options, agent: agentFor(init.ca) })
    req.once('error', (err: NodeJS.ErrnoException) => {
      // a kept-alive socket the server closed just as it was reused: the request never reached
      // the server, so it is sent once more on a fresh connection (the retry Node's http docs
      // give for request.reusedSocket); any other error is the target's answer
      if (req.reusedSocket && err.code === 'ECONNRESET' && !init.retried)
        send(url, { ...init, retried: true }).then(resolve, reject)
      else reject(err)
    })
    req.once('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.once('error', reject)
      res.once('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: toHeaders(res.headers),
          text: Buffer.concat(chunks).toString('utf8'),
          sent: sentHeaders(req.getHeaders(), url.host),
        }),
      )
    })
    req.end(init.body)
  })
}

/**
 * The raw HTTP client of a check. `signal` stops it: once aborted (the check timed out),
 * requests in flight fail and new ones are refused.
 */
export function createHttp(
  target: Pick<Target, 'baseUrl' | 'ca' | 'endpoints'> & {
    /** The local address to send from (a second source on loopback, SEC-01). */
    readonly localAddress?: string
  },
  signal?: AbortSignal,
): Http {
  const exchanges: Exchange[] = []
  const resolve = (pathOrUrl: string): URL => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(pathOrUrl)) return new URL(pathOrUrl)
    // an endpoint's interface path stands for the URL discovery advertised for it (endpoints.ts)
    const name = target.endpoints && endpointNamed(pathOrUrl)
    if (!name) return new URL(target.baseUrl + pathOrUrl)
    // the rest (a query, as the check wrote it) is appended as it is, byte for byte
    const endpoint = endpointUrl(target, name)
    const rest = pathOrUrl.slice(pathOrUrl.search(/[?#]|$/))
    return new URL(
      endpoint.includes('?') && rest.startsWith('?')
        ? `${endpoint}&${rest.slice(1)}`
        : endpoint + rest,
    )
  }

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
        requestBody: redactBody(body, headers['content-type']),
      }
      if (signal?.aborted) throw new Error(`request not sent: ${String(signal.reason)}`)
      let response: Awaited<ReturnType<typeof send>>
      try {
        response = await send(url, {
          method,
          headers,
          body,
          ca: target.ca,
          signal,
          localAddress: target.localAddress,
        })
      } catch (err) {
        exchanges.push({
          ...base,
          requestHeaders: redactHeaders({ host: url.host, ...headers }),
          status: undefined,
          responseHeaders: {},
          responseBody: undefined,
          error: `${(err as Error).name}: ${(err as Error).message}`,
          durationMs: performance.now() - started,
        })
        throw err
      }
      const { text } = response
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
      const exchange: Exchange = {
        ...base,
        requestHeaders: redactHeaders(response.sent),
        status: response.status,
        responseHeaders: redactHeaders(Object.fromEntries(response.headers)),
        responseBody: redactBody(text, response.headers.get('content-type') ?? undefined),
        error: undefined,
        durationMs: performance.now() - started,
      }
      exchanges.push(exchange)
      const res: HttpResponse = {
        status: response.status,
        headers: response.headers,
        text,
        json,
        url: url.toString(),
      }
      recordedAs.set(res, exchange)
      return res
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
