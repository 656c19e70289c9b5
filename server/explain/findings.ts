/**
 * Client-check mode (`--explain`): what a client did against the RFCs and INTERFACE.md,
 * recorded even when the request succeeds. Each finding says how serious it is, where the
 * rule is written and what to change. Kept in this process's memory (a bounded ring), printed
 * one line each, and listed at /dev/findings and /dev/findings.json.
 */

import { RP_FINDING_KINDS } from '../rp/catalogue.ts'

/** error: refused or unsafe; warning: works but should change; info: allowed, worth knowing. */
export type Severity = 'error' | 'warning' | 'info'

export interface FindingKind {
  readonly severity: Severity
  readonly title: string
  /** RFC or INTERFACE.md section. */
  readonly reference: string
  /** What to change in the client. */
  readonly advice: string
}

export const FINDING_KINDS = {
  'authorize.no-state': {
    // every request that gets this far carries an S256 challenge: PKCE already binds the code
    severity: 'info',
    title: 'authorize request without state (PKCE protects this one against CSRF)',
    reference: 'RFC 9700 §2.1 (PKCE may provide the CSRF protection); RFC 6749 §10.12',
    advice:
      'nothing to fix while PKCE is used; send an unguessable state, kept in the user session and compared on the callback, if you want the sign-in bound to the browser before the code is redeemed',
  },
  'authorize.no-nonce': {
    severity: 'info',
    title: 'openid authorize request without nonce (PKCE protects this one against code injection)',
    reference:
      'OpenID Connect Core §3.1.2.1 (nonce OPTIONAL in the code flow), §15.5.2; RFC 9700 §2.1.1',
    advice:
      'nothing to fix while PKCE is used; a fresh nonce, compared with the ID token nonce claim, also binds the ID token to this sign-in',
  },
  'pkce.missing': {
    severity: 'error',
    title: 'authorize request without PKCE (refused)',
    reference: 'INTERFACE.md §5.2 (PKCE mandatory); RFC 9700 §2.1.1; RFC 7636 §4.3',
    advice:
      'send code_challenge=BASE64URL(SHA-256(code_verifier)) with code_challenge_method=S256 and the code_verifier at the token endpoint; openid-client v6: calculatePKCECodeChallenge; openid-client v5: generators.codeChallenge; Auth.js: checks: ["pkce", "state"]; express-openid-connect and passport-openidconnect: use response_type code (PKCE is on in the first; the second needs a PKCE-capable fork)',
  },
  'pkce.plain': {
    severity: 'error',
    title: 'PKCE plain attempted',
    reference: 'RFC 7636 §4.2, §7.2; RFC 9700 §2.1.1; INTERFACE.md §5.2 (S256 only)',
    advice:
      'send code_challenge=BASE64URL(SHA-256(code_verifier)) with code_challenge_method=S256; an omitted method means plain',
  },
  'pkce.verifier-length': {
    severity: 'error',
    title: 'code_verifier outside 43-128 characters',
    reference: 'RFC 7636 §4.1; INTERFACE.md §5.2, §8',
    advice:
      'make the verifier 43 to 128 characters of A-Z a-z 0-9 - . _ ~, e.g. 32 random bytes base64url-encoded (43 characters)',
  },
  'code.reused': {
    severity: 'error',
    title: 'authorization code redeemed more than once',
    reference: 'RFC 6749 §4.1.2, §10.5; RFC 9700 §4.5',
    advice:
      'redeem each code exactly once and never retry the exchange with the same code; any tokens issued from it are now revoked, so start a new authorize request',
  },
  'code.redirect-uri-mismatch': {
    severity: 'error',
    title: 'redirect_uri at the token endpoint differs from the authorize request',
    reference: 'RFC 6749 §4.1.3',
    advice:
      'send the token endpoint the very same redirect_uri string that the authorize request carried',
  },
  'client-auth.basic': {
    severity: 'error',
    title: 'client credentials in an Authorization: Basic header',
    reference: 'INTERFACE.md §5.3 (client_secret_post only); RFC 6749 §2.3.1',
    advice:
      'send client_id and client_secret as form fields of the POST body (token_endpoint_auth_method client_secret_post). openid-client v6: pass ClientSecretPost(secret) to discovery(); openid-client v5: new issuer.Client({ token_endpoint_auth_method: "client_secret_post" }); express-openid-connect: clientAuthMethod: "client_secret_post"; Auth.js: client: { token_endpoint_auth_method: "client_secret_post" }; passport-openidconnect: sends the body by default; Spring Security: clientAuthenticationMethod CLIENT_SECRET_POST',
  },
  'client-auth.missing-secret': {
    severity: 'error',
    title: 'client_id or client_secret missing from the request body (refused)',
    reference:
      'INTERFACE.md §4.2, §5.3 (client_id and client_secret always required in the body); RFC 6749 §2.3.1',
    advice:
      'send both client_id and client_secret as form fields of every token, introspection and revocation request; a library configured for a public client (no secret) or for private_key_jwt sends neither',
  },
  'client-auth.unknown-client': {
    severity: 'error',
    title: 'client_id not registered (refused as invalid_client)',
    reference: 'RFC 6749 §2.2, §5.2 (invalid_client)',
    advice:
      'use the client_id of your registration (clients file or `clients add`); the answer does not say which half was wrong, so that ids cannot be enumerated, but this finding does',
  },
  'client-auth.wrong-secret': {
    severity: 'error',
    title: 'client_secret is not the secret of this client (refused as invalid_client)',
    reference: 'RFC 6749 §2.3.1, §5.2 (invalid_client)',
    advice:
      'use the client_secret printed once by `clients add` (the file keeps only its SHA-256) or the client_secret of your clients file; check for whitespace or a secret of another environment',
  },
  'token.in-query': {
    severity: 'error',
    title: 'token or client secret sent in the URL query',
    reference: 'RFC 6750 §2.3 and §5.3; RFC 6749 §2.3.1; INTERFACE.md §5.5',
    advice:
      'URLs end up in logs and Referer headers: send access tokens in the Authorization: Bearer header, and tokens and secrets as form fields of the POST body',
  },
  'refresh.other-client': {
    severity: 'error',
    title: 'refresh token presented by another client',
    reference: 'RFC 6749 §6 and §10.4',
    advice:
      'a refresh token is bound to the client it was issued to: keep each client’s tokens apart and let each client refresh its own',
  },
  'id-token-as-access-token': {
    severity: 'error',
    title: 'ID token sent as an access token',
    reference: 'OpenID Connect Core §2 and §5.3.1; RFC 9068 §4',
    advice:
      'call user-info and APIs with the access_token of the token response; the id_token is for the client itself and proves the sign-in',
  },
  'rate-limit.polling': {
    severity: 'warning',
    title: 'token endpoint polled into the rate limit',
    reference: 'RFC 6585 §4; INTERFACE.md §7, §8 (rate limits)',
    advice:
      'reuse a token until shortly before expires_in instead of asking for a new one per call, and after a 429 wait for Retry-After seconds',
  },
  // what a client accepted from an RP test issuer (server/rp/catalogue.ts)
  ...RP_FINDING_KINDS,
} as const satisfies Record<string, FindingKind>

export type FindingCode = keyof typeof FINDING_KINDS

export interface Finding extends FindingKind {
  /** Increasing number, so scripts can ask for what is new (`?since=`). */
  readonly seq: number
  readonly at: string
  readonly code: FindingCode
  readonly clientId: string | undefined
  /** `METHOD /path` of the request. */
  readonly endpoint: string
  /** What exactly was seen; never a secret or a token. */
  readonly detail: string | undefined
}

export interface FindingContext {
  readonly clientId?: string | undefined
  readonly endpoint: string
  readonly detail?: string
}

export interface Explain {
  record(code: FindingCode, context: FindingContext): void
  /** Oldest first; only those after `since`, and only one client's when given. */
  list(filter?: { since?: number; clientId?: string }): Finding[]
}

/** One console line: severity, code, client, what and what to do, and where it is written. */
export const formatFinding = (f: Finding): string =>
  `[explain] ${f.severity} ${f.code} client=${f.clientId ?? '-'} ${f.endpoint}: ${f.title}${f.detail ? ` (${f.detail})` : ''}. Fix: ${f.advice}. See ${f.reference}`

/** Client ids and details come from requests: keep them printable and short. */
const printable = (v: string | undefined, max: number): string | undefined =>
  v === undefined ? undefined : v.replace(/[^\x20-\x7E]/g, '?').slice(0, max)

export function createExplain(
  options: { capacity?: number; onFinding?: (finding: Finding) => void } = {},
): Explain {
  const capacity = options.capacity ?? 1000
  const ring: Finding[] = []
  let seq = 0
  return {
    record(code, context) {
      const finding: Finding = {
        ...FINDING_KINDS[code],
        seq: ++seq,
        at: new Date().toISOString(),
        code,
        clientId: printable(context.clientId, 255),
        endpoint: context.endpoint,
        detail: printable(context.detail, 200),
      }
      ring.push(finding)
      if (ring.length > capacity) ring.shift()
      options.onFinding?.(finding)
    },
    list(filter = {}) {
      return ring.filter(
        (f) =>
          f.seq > (filter.since ?? 0) &&
          (filter.clientId === undefined || f.clientId === filter.clientId),
      )
    },
  }
}

/** `GET /auth/authorize`: how a finding names the request it came from. */
export const endpointOf = (request: { readonly method: string; readonly path: string }): string =>
  `${request.method.toUpperCase()} ${request.path}`
