import { http, HttpResponse, type HttpHandler } from 'msw'
import type { discovery } from '../../catalogue/discovery.ts'
import {
  corruptHeaders,
  corruptJson,
  DISCOVERY,
  DISCOVERY_ENDPOINTS,
  escapeRegExp,
  type Json,
  perPart,
  type Sabotage,
  type Sabotages,
  type Target,
} from './kit.ts'

/** The OpenID and RFC 8414 documents' endpoint members and their paths (INTERFACE.md §1). */
const ENDPOINTS = DISCOVERY_ENDPOINTS

const RFC8414 = '/.well-known/oauth-authorization-server'

/** GET `path` answered by `answer` instead of the real server. */
const answered =
  (path: string, answer: () => Response) =>
  (target: Target): HttpHandler[] => [http.get(target.baseUrl + path, answer)]

/** The discovery document with `mutate` applied. */
const discoveryWith = (mutate: (b: Json) => unknown) =>
  corruptJson(DISCOVERY, (b) => void mutate(b))

/** One sabotage: the discovery document changed, failing with the message `expect` starts. */
const edited = (how: string, expect: RegExp, mutate: (b: Json) => unknown): Sabotage => ({
  how,
  expect,
  handlers: discoveryWith(mutate),
})

/** How to break the target for each DISC-* check. */
export const discoverySabotage: Record<keyof typeof discovery, Sabotages> = {
  // one sabotage per property of the answer: status, type, an object
  'DISC-01': [
    {
      how: 'discovery served as text/html',
      expect: /^discovery document: expected Content-Type application\/json/,
      handlers: corruptHeaders(DISCOVERY, (h) => h.set('content-type', 'text/html')),
    },
    {
      how: 'discovery answered 404',
      expect: /^discovery: expected HTTP 200, got 404/,
      handlers: answered(DISCOVERY, () =>
        HttpResponse.json(
          { error: 'not_found', error_description: 'no such document' },
          { status: 404 },
        ),
      ),
    },
    {
      how: 'discovery served as a JSON array',
      expect: /^discovery document: expected a JSON object, got /,
      handlers: answered(DISCOVERY, () => HttpResponse.json([{ issuer: 'x' }])),
    },
  ],
  'DISC-02': {
    how: 'issuer with a trailing slash',
    expect: /^issuer: expected /,
    handlers: corruptJson(DISCOVERY, (b) => (b.issuer = `${String(b.issuer)}/`)),
  },
  // one sabotage per member the check judges (each a sub-case)
  'DISC-03': perPart([
    edited('issuer omitted', /^issuer: missing or not a string/, (b) => delete b.issuer),
    ...Object.entries(ENDPOINTS).map(([member, path]) =>
      edited(
        `${member} moved to another path`,
        new RegExp(`^${member}: expected `),
        (b) => (b[member] = String(b[member]).replace(path, `/moved${path}`)),
      ),
    ),
    ...(
      [
        'response_types_supported',
        'subject_types_supported',
        'id_token_signing_alg_values_supported',
      ] as const
    ).map((member) =>
      edited(
        `${member} empty`,
        new RegExp(`^${member}: must be a non-empty array of strings, got \\[\\]`),
        (b) => (b[member] = []),
      ),
    ),
    edited(
      'claims_parameter_supported as the string "false"',
      /^claims_parameter_supported: must be an array or a boolean, got "false"/,
      (b) => (b.claims_parameter_supported = 'false'),
    ),
  ]),
  // one sabotage per member the check judges (each a sub-case), and for RS256 and none apart
  'DISC-04': [
    edited(
      'response_types_supported lists token',
      /^response_types_supported: expected exactly \["code"\]/,
      (b) => (b.response_types_supported = ['code', 'token']),
    ),
    edited(
      'subject_types_supported lists pairwise',
      /^subject_types_supported: expected exactly \["public"\]/,
      (b) => (b.subject_types_supported = ['public', 'pairwise']),
    ),
    edited(
      'id_token_signing_alg_values_supported lists ES256 only',
      /^id_token_signing_alg_values_supported: must list RS256, got \["ES256"\]/,
      (b) => (b.id_token_signing_alg_values_supported = ['ES256']),
    ),
    edited(
      'id_token_signing_alg_values_supported lists none',
      /^id_token_signing_alg_values_supported: lists "none"/,
      (b) => (b.id_token_signing_alg_values_supported = ['RS256', 'none']),
    ),
  ],
  'DISC-05': {
    how: 'grant_types_supported lists implicit',
    expect: /^grant_types_supported: expected exactly /,
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.grant_types_supported = [...(b.grant_types_supported as string[]), 'implicit']),
    ),
  },
  // one sabotage per scope and claim the check requires, and for a malformed scope token
  'DISC-06': perPart([
    ...['openid', 'profile', 'email', 'offline_access'].map((scope) =>
      edited(
        `scopes_supported without ${scope}`,
        new RegExp(`^scopes_supported: lacks ${scope}$`),
        (b) => (b.scopes_supported = (b.scopes_supported as string[]).filter((s) => s !== scope)),
      ),
    ),
    edited(
      'scopes_supported holds a scope with a space',
      /^scopes_supported: holds an invalid scope token "read documents"/,
      (b) => (b.scopes_supported = [...(b.scopes_supported as string[]), 'read documents']),
    ),
    ...['sub', 'name', 'picture', 'updated_at', 'email', 'email_verified'].map((claim) =>
      edited(
        `claims_supported without ${claim}`,
        new RegExp(`^claims_supported: lacks ${escapeRegExp(claim)}$`),
        (b) => (b.claims_supported = (b.claims_supported as string[]).filter((c) => c !== claim)),
      ),
    ),
  ]),
  'DISC-07': {
    how: 'token_endpoint_auth_methods_supported omitted (defaults to client_secret_basic)',
    expect: /^token_endpoint_auth_methods_supported: expected an array/,
    handlers: corruptJson(DISCOVERY, (b) => delete b.token_endpoint_auth_methods_supported),
  },
  'DISC-08': {
    how: 'code_challenge_methods_supported lists plain',
    expect: /^code_challenge_methods_supported: expected exactly \["S256"\]/,
    handlers: corruptJson(
      DISCOVERY,
      (b) => (b.code_challenge_methods_supported = ['plain', 'S256']),
    ),
  },
  // one sabotage per member the check judges (each but the modes a sub-case)
  'DISC-09': [
    edited(
      'request_uri_parameter_supported omitted (defaults to true)',
      /^request_uri_parameter_supported: expected false/,
      (b) => delete b.request_uri_parameter_supported,
    ),
    edited(
      'request_parameter_supported true',
      /^request_parameter_supported: must be false or absent, got true/,
      (b) => (b.request_parameter_supported = true),
    ),
    edited(
      'claims_parameter_supported true',
      /^claims_parameter_supported: must be false or absent, got true/,
      (b) => (b.claims_parameter_supported = true),
    ),
    edited(
      'response_modes_supported lists fragment only',
      /^response_modes_supported: expected an array that lists "query", got \["fragment"\]/,
      (b) => (b.response_modes_supported = ['fragment']),
    ),
  ],
  // one sabotage per endpoint the check requires (each a sub-case); the auth-method members
  // are a SHOULD (a note)
  'DISC-10': perPart(
    (['end_session_endpoint', 'introspection_endpoint', 'revocation_endpoint'] as const).map(
      (member) =>
        edited(`${member} omitted`, new RegExp(`^${member}: expected `), (b) =>
          Reflect.deleteProperty(b, member),
        ),
    ),
  ),
  // one sabotage per member the two documents share (each a sub-case), and for a document
  // that is neither served nor refused
  'DISC-11': perPart([
    ...['issuer', ...Object.keys(ENDPOINTS)].map((member): Sabotage => ({
      how: `RFC 8414 document with another ${member}`,
      expect: new RegExp(`^RFC 8414 ${member}: expected `),
      handlers: corruptJson(RFC8414, (b) => (b[member] = 'https://elsewhere.example/x')),
    })),
    {
      how: 'the RFC 8414 path answers 500',
      expect: /^an unserved well-known path must answer 4xx, got 500/,
      handlers: answered(RFC8414, () =>
        HttpResponse.json(
          { error: 'server_error', error_description: 'unavailable' },
          { status: 500 },
        ),
      ),
    },
  ]),
}
