import { http, HttpResponse } from 'msw'
import type { jwks } from '../../catalogue/jwks.ts'
import {
  corruptHeaders,
  corruptJson,
  firstKey,
  forgeTokens,
  type Json,
  JWKS,
  perPart,
  type Sabotage,
  type Sabotages,
  type Target,
  type TokenExchange,
} from './kit.ts'

/** The JWKS with its first key changed by `change`. */
const firstKeyWith = (change: (key: Json) => void) =>
  corruptJson(JWKS, (b) => {
    const key = { ...firstKey(b) }
    change(key)
    b.keys = [key, ...(b.keys as Json[]).slice(1)]
  })

/** A 1024-bit RSA modulus (base64url): 128 bytes, the top bit set. */
const SHORT_MODULUS = Buffer.concat([Buffer.from([0xc1]), Buffer.alloc(127, 0x5a)]).toString(
  'base64url',
)

const grantOf = (ex: TokenExchange): string | null => ex.form.get('grant_type')

/** The access tokens of `grant` signed with a key the JWKS does not publish. */
const unpublishedAccess = (grant: string) =>
  forgeTokens({
    access: (jwt, ex) => {
      if (grantOf(ex) === grant) jwt.sign = 'unpublished'
      else jwt.keep = true
    },
  })

/** How to break the target for each JWKS-* check. */
export const jwksSabotage: Record<keyof typeof jwks, Sabotages> = {
  // one sabotage per property of the document: status, type, keys, each key an object
  'JWKS-01': [
    {
      how: 'empty keys array',
      expect: /^JWKS: expected a non-empty "keys" array/,
      handlers: corruptJson(JWKS, (b) => (b.keys = [])),
    },
    {
      how: 'the JWKS answered 404',
      expect: /^JWKS: expected HTTP 200, got 404/,
      handlers: (target: Target) => [
        http.get(target.baseUrl + JWKS, () =>
          HttpResponse.json({ error: 'not_found', error_description: 'no keys' }, { status: 404 }),
        ),
      ],
    },
    {
      how: 'the JWKS served as text/plain',
      expect: /^JWKS: expected application\/json or application\/jwk-set\+json, got "text\/plain"/,
      handlers: corruptHeaders(JWKS, (h) => h.set('content-type', 'text/plain')),
    },
    {
      how: 'a key published as a string',
      expect: /^JWKS: every key must be an object, got "/,
      handlers: corruptJson(JWKS, (b) => (b.keys = [firstKey(b), JSON.stringify(firstKey(b))])),
    },
  ],
  // one sabotage per member of a key the check judges, and for a kid published twice
  'JWKS-02': perPart([
    {
      how: 'the key published twice under one kid',
      expect: /^duplicate kid /,
      handlers: corruptJson(JWKS, (b) => (b.keys = [firstKey(b), { ...firstKey(b) }])),
    },
    ...(
      [
        ['kty', 'EC', /kty must be RSA, got "EC"/],
        ['use', 'enc', /use must be sig, got "enc"/],
        ['alg', 'RS512', /alg must be RS256, got "RS512"/],
      ] as const
    ).map(([member, value, expected]): Sabotage => ({
      how: `the key's ${member} is ${value}`,
      expect: new RegExp(`^key "[^"]+": ${expected.source}`),
      handlers: firstKeyWith((k) => (k[member] = value)),
    })),
    {
      how: 'the key has an empty kid',
      expect: /^key "": kid must be a non-empty string/,
      handlers: firstKeyWith((k) => (k.kid = '')),
    },
    ...(['n', 'e'] as const).map((member): Sabotage => ({
      how: `the key's ${member} is padded base64`,
      expect: new RegExp(`^key "[^"]+": ${member} must be base64url without padding`),
      handlers: firstKeyWith((k) => (k[member] = `${String(k[member])}=`)),
    })),
  ]),
  // one sabotage per member that must not be published, and for a symmetric or short key
  'JWKS-03': perPart([
    ...['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'].map((member): Sabotage => ({
      how: `the private member ${member} is published`,
      expect: new RegExp(`^key "[^"]+": private member "${member}" is published`),
      handlers: firstKeyWith((k) => (k[member] = 'AQAB')),
    })),
    {
      how: 'a symmetric key is published',
      expect: /^key "hmac": a symmetric key is published/,
      handlers: corruptJson(
        JWKS,
        (b) => (b.keys = [...(b.keys as Json[]), { kty: 'oct', kid: 'hmac', alg: 'HS256' }]),
      ),
    },
    {
      how: 'the key has a 1024-bit modulus',
      expect: /^key "[^"]+": RSA modulus has 1024 bits, fewer than 2048/,
      handlers: firstKeyWith((k) => (k.n = SHORT_MODULUS)),
    },
  ]),
  // one sabotage per token the check verifies (each a sub-case)
  'JWKS-04': [
    {
      how: 'ID tokens are signed with a key whose kid the JWKS does not publish',
      expect: /^ID token \(authorization_code\): kid "sabotage-unpublished" matches 0 JWKS keys/,
      handlers: forgeTokens({ id: (jwt) => void (jwt.sign = 'unpublished') }),
    },
    {
      how: 'access tokens of the code grant are signed with an unpublished key',
      expect:
        /^access token \(authorization_code\): kid "sabotage-unpublished" matches 0 JWKS keys/,
      handlers: unpublishedAccess('authorization_code'),
    },
    {
      how: 'access tokens of a refresh are signed with an unpublished key',
      expect: /^access token \(refresh_token\): kid "sabotage-unpublished" matches 0 JWKS keys/,
      handlers: unpublishedAccess('refresh_token'),
    },
    {
      how: 'client_credentials access tokens are signed with an unpublished key',
      expect:
        /^access token \(client_credentials, [^)]+\): kid "sabotage-unpublished" matches 0 JWKS keys/,
      handlers: unpublishedAccess('client_credentials'),
    },
  ],
}
