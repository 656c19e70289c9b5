import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  jwtVerify,
  type FetchImplementation,
  type JSONWebKeySet,
  type JWTPayload,
} from 'jose'

/** Why a token was refused. Never carries the token itself. */
export type VerifyErrorCode =
  | 'missing'
  | 'malformed'
  | 'bad_algorithm'
  | 'unknown_key'
  | 'bad_signature'
  | 'wrong_type'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'expired'
  | 'not_yet_valid'
  | 'invalid_claims'
  | 'jwks_unavailable'

export class VerifyError extends Error {
  readonly code: VerifyErrorCode
  constructor(code: VerifyErrorCode, message: string) {
    super(message)
    this.name = 'VerifyError'
    this.code = code
  }
}

/** The claims of an access token (INTERFACE.md §2.3, RFC 9068). */
export interface AccessTokenClaims {
  readonly iss: string
  readonly sub: string
  readonly aud: string | readonly string[]
  readonly exp: number
  readonly iat: number
  readonly jti: string | undefined
  readonly client_id: string | undefined
  /** The space-separated scope claim, split. */
  readonly scopes: readonly string[]
  readonly roles: readonly string[]
  readonly permissions: readonly string[]
  readonly org_id: string | undefined
  /** Every claim as received. */
  readonly raw: JWTPayload
}

export interface VerifierOptions {
  /** The issuer: equals the provider's base URL exactly. */
  readonly issuer: string
  /** The expected audience (INTERFACE.md: the client identifier). */
  readonly audience: string | readonly string[]
  /** Where to fetch the JWKS (cached; refetched on an unknown kid, at most once per cool-down). */
  readonly jwksUri?: string
  /** A fixed JWKS instead of `jwksUri`. */
  readonly jwks?: JSONWebKeySet
  /** Seconds of clock skew tolerated for exp, iat and nbf. Default 5. */
  readonly clockTolerance?: number
  /** Minimum seconds between two JWKS fetches. Default 30. */
  readonly cooldown?: number
  /** How long a fetched JWKS is trusted, seconds. Default 600. */
  readonly cacheMaxAge?: number
  /** A fetch to use for the JWKS (e.g. one that trusts a private CA). */
  readonly fetch?: FetchImplementation
  /** The clock, Unix seconds (tests). */
  readonly now?: () => number
}

export interface Verifier {
  /** Verifies an access token exactly as INTERFACE.md §5.6 says, or throws VerifyError. */
  verify(token: string | undefined): Promise<AccessTokenClaims>
}

const MAX_TOKEN = 8192
const strings = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((x) => typeof x === 'string')

/**
 * A resource server's access-token verifier: key by kid from the JWKS, RS256 only, iss, aud,
 * exp/nbf/iat with a small tolerance, and header typ at+jwt so an ID token is refused
 * (RFC 9068 §4). A locally verified JWT does not see revocation before it expires.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  if (!options.jwks && !options.jwksUri) throw new TypeError('createVerifier needs jwksUri or jwks')
  const keys = options.jwks
    ? createLocalJWKSet(options.jwks)
    : createRemoteJWKSet(new URL(options.jwksUri ?? ''), {
        cooldownDuration: (options.cooldown ?? 30) * 1000,
        cacheMaxAge: (options.cacheMaxAge ?? 600) * 1000,
        ...(options.fetch ? { [customFetch]: options.fetch } : {}),
      })
  const tolerance = options.clockTolerance ?? 5
  return {
    async verify(token) {
      if (token === undefined || token === '') throw new VerifyError('missing', 'no access token')
      if (
        token.length > MAX_TOKEN ||
        !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)
      ) {
        throw new VerifyError('malformed', 'the access token is not a compact JWS')
      }
      let payload: JWTPayload
      try {
        ;({ payload } = await jwtVerify(token, keys, {
          algorithms: ['RS256'],
          issuer: options.issuer,
          audience: typeof options.audience === 'string' ? options.audience : [...options.audience],
          typ: 'at+jwt',
          clockTolerance: tolerance,
          requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
          ...(options.now ? { currentDate: new Date(options.now() * 1000) } : {}),
        }))
      } catch (err) {
        throw toVerifyError(err)
      }
      const now = options.now ? options.now() : Math.floor(Date.now() / 1000)
      if (typeof payload.iat === 'number' && payload.iat > now + tolerance) {
        throw new VerifyError('not_yet_valid', 'the access token was issued in the future')
      }
      return toClaims(payload)
    },
  }
}

function toClaims(p: JWTPayload): AccessTokenClaims {
  const {
    iss,
    sub,
    aud,
    exp,
    iat,
    scope,
    roles,
    permissions,
    org_id: orgId,
    client_id: clientId,
    jti,
  } = p as Record<string, unknown>
  const ok =
    typeof iss === 'string' &&
    typeof sub === 'string' &&
    (typeof aud === 'string' || strings(aud)) &&
    typeof exp === 'number' &&
    typeof iat === 'number' &&
    (scope === undefined || typeof scope === 'string') &&
    (roles === undefined || strings(roles)) &&
    (permissions === undefined || strings(permissions)) &&
    (orgId === undefined || typeof orgId === 'string') &&
    (clientId === undefined || typeof clientId === 'string') &&
    (jti === undefined || typeof jti === 'string')
  if (!ok) throw new VerifyError('invalid_claims', 'the access token claims have the wrong types')
  return {
    iss,
    sub,
    aud,
    exp,
    iat,
    jti,
    client_id: clientId,
    scopes: (scope ?? '').split(' ').filter(Boolean),
    roles: roles ?? [],
    permissions: permissions ?? [],
    org_id: orgId,
    raw: p,
  }
}

function toVerifyError(err: unknown): VerifyError {
  if (err instanceof errors.JWTExpired)
    return new VerifyError('expired', 'the access token has expired')
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss')
      return new VerifyError('wrong_issuer', 'the access token was issued by someone else')
    if (err.claim === 'aud')
      return new VerifyError('wrong_audience', 'the access token is for another audience')
    if (err.claim === 'typ')
      return new VerifyError('wrong_type', 'the token is not an access token (typ at+jwt)')
    if (err.claim === 'nbf')
      return new VerifyError('not_yet_valid', 'the access token is not valid yet')
    return new VerifyError('invalid_claims', `the access token claim ${err.claim} is invalid`)
  }
  if (err instanceof errors.JOSEAlgNotAllowed)
    return new VerifyError('bad_algorithm', 'the access token is not signed with RS256')
  if (err instanceof errors.JWKSNoMatchingKey)
    return new VerifyError('unknown_key', 'no published key matches the access token')
  if (err instanceof errors.JWKSMultipleMatchingKeys)
    return new VerifyError('unknown_key', 'several published keys match the access token')
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return new VerifyError('bad_signature', 'the access token signature is invalid')
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) {
    return new VerifyError('jwks_unavailable', 'the key set could not be fetched')
  }
  if (err instanceof errors.JOSEError)
    return new VerifyError('malformed', 'the access token is malformed')
  if (err instanceof TypeError || (err as Error).name === 'TypeError')
    return new VerifyError('jwks_unavailable', 'the key set could not be fetched')
  return new VerifyError('malformed', 'the access token could not be verified')
}
