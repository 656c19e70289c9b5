/**
 * The one error type of the server. Handlers throw an OAuthError; `plugins/oauth-errors.ts`
 * renders it as `{ error, error_description }` with the status decided in ARCHITECTURE.md.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'login_required'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'unsupported_token_type'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'temporarily_unavailable'
  | 'server_error'

/** HTTP status per code: the decisions table of ARCHITECTURE.md, in one place. */
export const STATUS: Readonly<Record<OAuthErrorCode, number>> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  // normally sent on a redirect, where no status applies
  access_denied: 400,
  login_required: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  unsupported_token_type: 400,
  request_not_supported: 400,
  request_uri_not_supported: 400,
  temporarily_unavailable: 503,
  server_error: 500,
}

export class OAuthError extends Error {
  readonly code: OAuthErrorCode
  readonly status: number
  /** Extra response headers (WWW-Authenticate, Retry-After, Allow). */
  readonly headers: Readonly<Record<string, string>>
  /** Members of the JSON body beside error and error_description (the readiness `status`). */
  readonly fields: Readonly<Record<string, string>>

  constructor(code: OAuthErrorCode, description: string, options?: Opts) {
    super(description, options)
    this.name = 'OAuthError'
    this.code = code
    // hapi's own refusals (404, 405, 413, 415, 429) keep their status as invalid_request
    this.status = options?.status ?? STATUS[code]
    this.headers = options?.headers ?? {}
    this.fields = options?.fields ?? {}
  }

  /** The JSON body of INTERFACE.md §7. */
  toJSON(): Record<string, string> & { error: OAuthErrorCode; error_description: string } {
    return { ...this.fields, error: this.code, error_description: this.message }
  }
}

type Opts = ErrorOptions & {
  headers?: Record<string, string>
  status?: number
  fields?: Record<string, string>
}
const make =
  (code: OAuthErrorCode) =>
  (description: string, options?: Opts): OAuthError =>
    new OAuthError(code, description, options)

export const invalidRequest = make('invalid_request')
export const invalidClient = make('invalid_client')
export const invalidGrant = make('invalid_grant')
export const unauthorizedClient = make('unauthorized_client')
export const unsupportedGrantType = make('unsupported_grant_type')
export const unsupportedResponseType = make('unsupported_response_type')
export const invalidScope = make('invalid_scope')
export const accessDenied = make('access_denied')
export const loginRequired = make('login_required')
export const invalidToken = make('invalid_token')
export const insufficientScope = make('insufficient_scope')
export const unsupportedTokenType = make('unsupported_token_type')
export const temporarilyUnavailable = make('temporarily_unavailable')
