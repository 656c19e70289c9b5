import type { Request } from '@hapi/hapi'
import type { ServerResponse } from 'node:http'
import HapiPino from 'hapi-pino'
import { pino, type DestinationStream, type Level, type Logger } from 'pino'
import PinoPretty from 'pino-pretty'
import type { Config } from './config.ts'
import type { Deps } from './deps.ts'
import { clientAddress } from './protocol/client-address.ts'

/**
 * Query parameters logged with their value; every other value is replaced by `[REDACTED]`
 * (codes, tokens, `id_token_hint`, `state`, `login_hint` and whatever a client invents).
 */
const PLAIN_QUERY = new Set([
  'client_id',
  'response_type',
  'response_mode',
  'scope',
  'redirect_uri',
  'post_logout_redirect_uri',
  'code_challenge_method',
  'prompt',
  'max_age',
  'grant_type',
  'ui_locales',
  'display',
])

/** Paths pino blanks in every line, event details included (defence in depth). */
export const REDACT_PATHS = [
  'authorization',
  'cookie',
  'password',
  'secret',
  'client_secret',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'id_token_hint',
  'code',
  'code_verifier',
  'csrf',
  '*.authorization',
  '*.cookie',
  '*.password',
  '*.secret',
  '*.client_secret',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
  '*.id_token_hint',
  '*.code',
  '*.code_verifier',
  '*.csrf',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["set-cookie"]',
  '*.headers.location',
]

/**
 * The top-level names of REDACT_PATHS, the access lines' only redaction: their fields are an
 * allow-list (the request's id, method, path with redacted query, address and user agent; the
 * status; the time), so no secret can be in them, and pino's wildcard paths cost about 20 µs of
 * CPU per line (@pinojs/redact parses each of them on every call, three calls a request) where
 * these cost nothing measurable (issue 33).
 */
const ACCESS_REDACT_PATHS = REDACT_PATHS.filter((p) => !p.includes('.') && !p.includes('['))

/** A path with its query's values redacted except the few harmless ones. */
export function loggableUrl(path: string, query: URLSearchParams): string {
  const kept = [...query.entries()].map(
    ([name, value]) => `${name}=${PLAIN_QUERY.has(name) ? value : '[REDACTED]'}`,
  )
  return kept.length > 0 ? `${path}?${kept.join('&')}` : path
}

export interface LoggerOptions {
  readonly level?: Level | 'silent'
  /** Where the JSON lines go; default stdout, pretty-printed when stdout is a terminal. */
  readonly destination?: DestinationStream
}

/** The server's logger: JSON lines (pino), pretty when stdout is a terminal. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const destination =
    options.destination ??
    (process.stdout.isTTY ? PinoPretty({ colorize: true, sync: true }) : process.stdout)
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      base: { pid: process.pid },
    },
    destination,
  )
}

/** The level of each server event (Deps['log']); anything else is info. */
const LEVEL_OF: Readonly<Record<string, Level>> = {
  error: 'error',
  'storage-unavailable': 'error',
  'rate-limit-unavailable': 'warn',
  'purge-failed': 'warn',
  'password-rehash-failed': 'warn',
  'client-error': 'debug',
  'connection-limit': 'warn',
  'response-timeout': 'warn',
  purge: 'info',
  'password-rehashed': 'info',
  'signing-key-created': 'info',
  'signing-key-activated': 'info',
}

/** Deps['log'] writing each event at its level. */
export function eventLog(logger: Logger): Deps['log'] {
  return (event, detail = {}) => {
    logger[LEVEL_OF[event] ?? 'info']({ event, ...detail }, event)
  }
}

/**
 * hapi-pino: one access line per request (`request completed`) with the request id, method,
 * path, the query with its values redacted, the client address, the status and the time. No
 * header, body or cookie is logged. Its logger blanks only REDACT_PATHS' top-level names
 * (ACCESS_REDACT_PATHS), so it writes nothing but access lines and start/stop: a request's
 * unexpected error is logged by the oauth-errors plugin as the `error` event (eventLog, every
 * path redacted), not as hapi-pino's `request-error`, and the server calls neither
 * `server.log` nor `request.log`.
 */
export const accessLog = (logger: Logger, config: Pick<Config, 'trustProxy'>) => ({
  plugin: HapiPino,
  options: {
    instance: logger.child({}, { redact: { paths: ACCESS_REDACT_PATHS, censor: '[REDACTED]' } }),
    // a Prometheus scrape every few seconds is not traffic anyone reads the access log for
    logRequestComplete: (request: Request) => request.path !== '/metrics',
    logEvents: ['response', 'onPostStart', 'onPostStop'],
    wrapSerializers: false,
    getChildBindings: (request: Request) => ({ req: request }),
    serializers: {
      req: (request: Request) => ({
        id: request.info.id,
        method: request.method.toUpperCase(),
        // hapi leaves request.url null when the URL does not parse, whatever its types say
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
        url: loggableUrl(request.path, request.url?.searchParams ?? new URLSearchParams()),
        remoteAddress: clientAddress(request, config.trustProxy),
        userAgent: (request.headers as Record<string, string | undefined>)['user-agent'],
      }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
  },
})
