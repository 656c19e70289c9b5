import { createHash } from 'node:crypto'
import { CompactSign, exportJWK, generateKeyPair, type JWK } from 'jose'
import { bypass, http, HttpResponse, type HttpHandler } from 'msw'
import type { accessToken } from '../../catalogue/access-token.ts'
import { fetchVia, type Target } from '../../harness/target.ts'
import { corruptJson, headerPairs, JWKS, type Json, type Sabotages } from './kit.ts'

/** An RSA key of the saboteur's; the "published" one is slipped into the JWKS. */
interface Forger {
  readonly kid: string
  readonly privateKey: CryptoKey
  readonly jwk: JWK
}

async function makeForger(kid: string): Promise<Forger> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  return {
    kid,
    privateKey,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' },
  }
}

let publishedForger: Promise<Forger> | undefined
let unpublishedForger: Promise<Forger> | undefined
const published = (): Promise<Forger> => (publishedForger ??= makeForger('sabotage-published'))
const unpublished = (): Promise<Forger> =>
  (unpublishedForger ??= makeForger('sabotage-unpublished'))

/**
 * How a forged token is signed:
 * - published: a saboteur key whose public half the (corrupted) JWKS publishes, so only the
 *   edited claims are wrong and the signature still verifies;
 * - unpublished: a saboteur key under a kid the JWKS does not have;
 * - same-kid: a saboteur key under the server's own kid (the signature does not verify);
 * - hmac: HS256 keyed with the given secret, under the server's kid.
 */
export type Signing = 'published' | 'unpublished' | 'same-kid' | { readonly hmac: string }

export interface ForgedJwt {
  header: Json
  payload: Json
  sign: Signing
  /** Set to leave this token exactly as the server made it. */
  keep: boolean
}

/** What a forgery sees of the exchange: the token request form and the response body. */
export interface TokenExchange {
  readonly form: URLSearchParams
  readonly body: Json
  readonly target: Target
}

/** Edits a decoded token in place. */
export type JwtEdit = (jwt: ForgedJwt, exchange: TokenExchange) => void

const decode = (segment: string): Json =>
  JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Json

async function resign(token: string, edit: JwtEdit, exchange: TokenExchange): Promise<string> {
  const [h = '', p = ''] = token.split('.')
  const original = decode(h)
  const jwt: ForgedJwt = {
    header: { ...original },
    payload: decode(p),
    sign: 'published',
    keep: false,
  }
  edit(jwt, exchange)
  if (jwt.keep) return token
  const { sign } = jwt
  let key: CryptoKey | Uint8Array
  if (typeof sign === 'object') {
    jwt.header.alg = 'HS256'
    key = new TextEncoder().encode(sign.hmac)
  } else {
    const forger = await (sign === 'published' ? published() : unpublished())
    jwt.header.alg = 'RS256'
    jwt.header.kid = sign === 'same-kid' ? original.kid : forger.kid
    key = forger.privateKey
  }
  return new CompactSign(new TextEncoder().encode(JSON.stringify(jwt.payload)))
    .setProtectedHeader(jwt.header as { alg: string })
    .sign(key)
}

/** OIDC Core §3.1.3.6: the left half of SHA-256, base64url. */
export const halfHash = (value: string): string =>
  createHash('sha256').update(value, 'ascii').digest().subarray(0, 16).toString('base64url')

export interface Forgery {
  /** Edits every access token the token endpoint returns. */
  readonly access?: JwtEdit
  /** Edits every ID token the token endpoint returns. */
  readonly id?: JwtEdit
  /** Edits the token response body (after the tokens). */
  readonly body?: (body: Json, exchange: TokenExchange) => void
}

/**
 * Corrupts the token endpoint's successful answers by re-signing the tokens after `edits`, and
 * publishes the saboteur's key in the JWKS, so a forged token is as convincing as msw can make
 * it. A re-signed access token gets a matching at_hash, as a careful forger would give it.
 */
export function forgeTokens(edits: Forgery): (target: Target) => HttpHandler[] {
  return (target) => [
    http.post(target.baseUrl + '/auth/token', async ({ request }) => {
      const form = new URLSearchParams(await request.clone().text())
      const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
      const headers = headerPairs(real.headers)
      const text = await real.text()
      if (real.status !== 200) return new HttpResponse(text, { status: real.status, headers })
      const body = JSON.parse(text) as Json
      const exchange: TokenExchange = { form, body, target }
      const original = body.access_token
      if (edits.access && typeof original === 'string')
        body.access_token = await resign(original, edits.access, exchange)
      const changed = body.access_token !== original
      const { id } = edits
      if (typeof body.id_token === 'string' && (id || changed)) {
        body.id_token = await resign(
          body.id_token,
          (jwt, ex) => {
            if (changed && jwt.payload.at_hash === halfHash(String(original)))
              jwt.payload.at_hash = halfHash(String(body.access_token))
            id?.(jwt, ex)
          },
          exchange,
        )
      }
      edits.body?.(body, exchange)
      return HttpResponse.json(body, { status: 200, headers })
    }),
    http.get(target.baseUrl + JWKS, async ({ request }) => {
      const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
      const headers = headerPairs(real.headers)
      const body = (await real.json()) as Json
      body.keys = [...(body.keys as unknown[]), (await published()).jwk]
      return HttpResponse.json(body, { status: real.status, headers })
    }),
  ]
}

const grantOf = (ex: TokenExchange): string | null => ex.form.get('grant_type')

/** How to break the target for each AT-* check. */
export const accessTokenSabotage: Record<keyof typeof accessToken, Sabotages> = {
  'AT-01': {
    how: "access tokens are re-signed with a foreign key under the server's kid",
    expect: /^access token \(authorization_code\): the signature does not verify/,
    handlers: forgeTokens({ access: (jwt) => void (jwt.sign = 'same-kid') }),
  },
  'AT-02': {
    how: 'access tokens carry typ JWT',
    expect: /^access token \(authorization_code\) header typ: expected "at\+jwt", got "JWT"/,
    handlers: forgeTokens({ access: (jwt) => void (jwt.header.typ = 'JWT') }),
  },
  'AT-03': {
    how: 'access tokens live twice as long as expires_in says',
    expect:
      /^access token \(authorization_code\): exp - iat is 7200 s but the token response says expires_in 3600/,
    handlers: forgeTokens({
      access: (jwt, ex) => {
        jwt.payload.exp = Number(jwt.payload.iat) + 2 * Number(ex.body.expires_in)
      },
    }),
  },
  'AT-04': {
    how: 'access tokens name a resource server as aud',
    expect:
      /^access token \(authorization_code\) aud: expected "conformance-client", got "https:\/\/api\.example"/,
    handlers: forgeTokens({ access: (jwt) => void (jwt.payload.aud = 'https://api.example') }),
  },
  // one sabotage per claim the check compares (each a sub-case)
  'AT-05': [
    {
      how: 'access tokens carry another subject than the ID token',
      expect: /^access token sub vs the ID token sub: expected /,
      handlers: forgeTokens({ access: (jwt) => void (jwt.payload.sub = 'usr_someone_else') }),
    },
    {
      how: 'access tokens carry an empty sub',
      expect: /^access token sub: expected a non-empty string, got ""/,
      handlers: forgeTokens({
        access: (jwt) => void (jwt.payload.sub = ''),
        id: (jwt) => void (jwt.payload.sub = ''),
      }),
    },
    {
      how: 'user-info names another subject than the access token',
      expect: /^access token sub vs the user-info sub: expected /,
      handlers: corruptJson(
        '/auth/user-info',
        (b) => {
          if (typeof b.sub === 'string') b.sub = 'usr_someone_else'
        },
        'all',
      ),
    },
    {
      how: 'an authorization_code access token carries less scope than the response grants',
      expect:
        /^access token \(authorization_code\) scope claim vs the granted scope: expected exactly/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (grantOf(ex) === 'authorization_code') jwt.payload.scope = 'openid'
          else jwt.keep = true
        },
      }),
    },
    {
      how: 'a client_credentials access token carries more scope than the response grants',
      expect:
        /^access token \(client_credentials\) scope claim vs the granted scope: expected exactly/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (grantOf(ex) === 'client_credentials')
            jwt.payload.scope = `${String(jwt.payload.scope)} admin:everything`
          else jwt.keep = true
        },
      }),
    },
  ],
  'AT-06': {
    how: 'access tokens minted by a refresh carry another org_id',
    expect: /^refreshed access token org_id: expected "org-1", got "org-elsewhere"/,
    handlers: forgeTokens({
      access: (jwt, ex) => {
        if (grantOf(ex) === 'refresh_token') jwt.payload.org_id = 'org-elsewhere'
        else jwt.keep = true
      },
    }),
  },
  'AT-07': {
    how: 'every access token carries the same jti',
    expect: /repeats the jti "jti-0001"/,
    handlers: forgeTokens({ access: (jwt) => void (jwt.payload.jti = 'jti-0001') }),
  },
}
