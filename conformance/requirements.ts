import type { Level } from './harness/types.ts'

/** One catalogue row (shared/REQUIREMENTS.md): written once here, repeated nowhere else. */
export interface Requirement {
  readonly area: string
  readonly level: Level
  readonly source: string
  readonly title: string
}

/**
 * The requirements the suite checks, by stable ID. A check whose ID is missing here does not
 * type-check, and the self-test's sabotage table must name every ID here. IDs are never reused.
 */
export const requirements = {
  'DISC-01': {
    area: 'Discovery',
    level: 'MUST',
    source: 'OIDC Discovery §4; INTERFACE.md §4.8',
    title: 'the discovery document is served as a JSON object with status 200',
  },
  'DISC-02': {
    area: 'Discovery',
    level: 'MUST',
    source: 'OIDC Discovery §4.3; RFC 8414 §2, §3.3',
    title: 'issuer is byte-identical to the base URL: https, no query, fragment or trailing slash',
  },
  'DISC-03': {
    area: 'Discovery',
    level: 'MUST',
    source: 'OIDC Discovery §3; RFC 8414 §2; INTERFACE.md §2.7',
    title:
      'required members are present with the right types and every endpoint is the base URL plus its path',
  },
  'DISC-04': {
    area: 'Discovery',
    level: 'MUST',
    source: 'OIDC Discovery §3; INTERFACE.md §2.7',
    title:
      'response_types_supported is [code], subject_types_supported [public], RS256 listed and none not',
  },
  'DISC-05': {
    area: 'Discovery',
    level: 'MUST',
    source: 'OIDC Discovery §3; RFC 8414 §2; RFC 9700 §2.4',
    title: 'grant_types_supported is exactly authorization_code, refresh_token, client_credentials',
  },
  'DISC-06': {
    area: 'Discovery',
    level: 'SHOULD',
    source: 'OIDC Discovery §3; RFC 6749 App. A.4',
    title:
      'scopes_supported holds openid, profile, email, offline_access as valid scope tokens; claims_supported lists the user claims',
  },
  'DISC-07': {
    area: 'Discovery',
    level: 'MUST',
    source: 'OIDC Discovery §3; INTERFACE.md §1 (client_secret_post only)',
    title: 'token_endpoint_auth_methods_supported declares exactly [client_secret_post]',
  },
  'DISC-08': {
    area: 'Discovery',
    level: 'SHOULD',
    source: 'RFC 9700 §2.1.1; RFC 8414 §2; RFC 7636 §4.2',
    title: 'code_challenge_methods_supported is exactly [S256]',
  },
  'DISC-09': {
    area: 'Discovery',
    level: 'MUST',
    source: 'OIDC Discovery §3 (member defaults)',
    title:
      'request_uri_parameter_supported is stated false; request and claims parameters false or absent; response_modes [query]',
  },
  'DISC-10': {
    area: 'Discovery',
    level: 'MUST',
    source: 'RP-Initiated Logout §2.1; RFC 8414 §2; RFC 7662; RFC 7009',
    title:
      'end_session, introspection and revocation endpoints are advertised, with their auth methods [client_secret_post]',
  },
  'DISC-11': {
    area: 'Discovery',
    level: 'MAY',
    source: 'RFC 8414 §3, §5',
    title: 'the RFC 8414 well-known document, when served, agrees with the OpenID one',
  },
  'JWKS-01': {
    area: 'JWKS',
    level: 'MUST',
    source: 'RFC 7517 §5, §8.5; INTERFACE.md §4.9',
    title: 'the JWK Set is served as JSON with a non-empty keys array',
  },
  'JWKS-02': {
    area: 'JWKS',
    level: 'MUST',
    source: 'INTERFACE.md §2.8; RFC 7517 §4; RFC 7518 §6.3.1',
    title: 'every key has kty RSA, use sig, alg RS256, a unique kid, and base64url n and e',
  },
  'JWKS-03': {
    area: 'JWKS',
    level: 'MUST',
    source: 'RFC 7518 §3.3, §6.3.2; RFC 7517 §8.5',
    title:
      'no private or symmetric key material is published and every modulus has at least 2048 bits',
  },
  'TLS-01': {
    area: 'HTTPS',
    level: 'MUST',
    source: 'INTERFACE.md §1, §7; RFC 6749 §3.1, §3.2, §10.9',
    title:
      'plain HTTP never serves a document or accepts a credential, and every URL the server emits is https',
  },
  'TLS-02': {
    area: 'HTTPS',
    level: 'MUST',
    source: 'RFC 9325 §3.1.1',
    title:
      'TLS 1.0 and 1.1 handshakes fail; TLS 1.2+ succeeds with a certificate valid for the host',
  },
  'TLS-03': {
    area: 'HTTPS',
    level: 'SHOULD',
    source: 'RFC 6797 §6.1; RFC 9325 §3.2',
    title: 'Strict-Transport-Security with max-age of at least one year on HTTPS responses',
  },
  'ERR-01': {
    area: 'Errors',
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 9110 §15.5.5, §15.5.6',
    title:
      'unknown routes answer 404 and wrong methods 405 with Allow, both in the JSON error shape',
  },
  'ERR-02': {
    area: 'Errors',
    level: 'MUST',
    source: 'RFC 6749 §5.2, App. A.7, A.8',
    title: 'error and error_description use only the characters RFC 6749 allows',
  },
} as const satisfies Record<string, Requirement>

export type RequirementId = keyof typeof requirements

export const requirementIds = Object.keys(requirements) as RequirementId[]

/** `ID [LEVEL] title (source)`: how every check is named in tests and reports. */
export const checkName = (id: RequirementId): string => {
  const r: Requirement = requirements[id]
  return `${id} [${r.level}] ${r.title} (${r.source})`
}
