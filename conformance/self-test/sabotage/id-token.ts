import type { idToken } from '../../catalogue/id-token.ts'
import { forgeTokens, halfHash, type Sabotages } from './kit.ts'

/** ID tokens granted exactly `scope` (any order) get `claims` added. */
const forgeIdFor = (scope: string, claims: Record<string, unknown>) =>
  forgeTokens({
    id: (jwt, ex) => {
      const granted = String(ex.body.scope).split(' ').filter(Boolean).sort().join(' ')
      if (granted === scope.split(' ').sort().join(' ')) Object.assign(jwt.payload, claims)
      else jwt.keep = true
    },
  })

/** How to break the target for each IDT-* check. */
export const idTokenSabotage: Record<keyof typeof idToken, Sabotages> = {
  'IDT-01': {
    how: 'the authorization_code grant returns no id_token',
    expect: /^id_token of an openid request: expected a JWT string, got undefined/,
    handlers: forgeTokens({
      body: (body, ex) => {
        if (ex.form.get('grant_type') === 'authorization_code') delete body.id_token
      },
    }),
  },
  'IDT-02': {
    how: 'ID tokens are signed HS256 with the client secret',
    expect: /^ID token header alg: expected "RS256", got "HS256"/,
    handlers: forgeTokens({
      id: (jwt, ex) => {
        jwt.sign = { hmac: ex.target.clients.main.secret }
      },
    }),
  },
  // one sabotage per claim the check compares: iss, aud, azp with several audiences or one
  'IDT-03': [
    {
      how: 'ID tokens name a second audience and no azp',
      expect: /^ID token azp \(aud is .*\): expected "conformance-client", got undefined/,
      handlers: forgeTokens({
        id: (jwt, ex) => {
          jwt.payload.aud = [ex.form.get('client_id'), 'https://rs.example']
          delete jwt.payload.azp
        },
      }),
    },
    {
      how: 'ID tokens name another issuer',
      expect: /^ID token iss: expected /,
      handlers: forgeTokens({ id: (jwt) => void (jwt.payload.iss = 'https://evil.example') }),
    },
    {
      how: 'ID tokens name another audience only',
      expect:
        /^ID token aud: expected "conformance-client" or an array holding it, got "https:\/\/rs\.example"/,
      handlers: forgeTokens({ id: (jwt) => void (jwt.payload.aud = 'https://rs.example') }),
    },
    {
      how: 'ID tokens carry an azp naming another client',
      expect: /^ID token azp: expected "conformance-client", got "other-client"/,
      handlers: forgeTokens({ id: (jwt) => void (jwt.payload.azp = 'other-client') }),
    },
  ],
  'IDT-04': {
    how: 'ID tokens carry a pairwise sub (different per client)',
    expect: /^sub of alice at client other-client \(subject type public\): expected /,
    handlers: forgeTokens({
      id: (jwt, ex) => {
        jwt.payload.sub = halfHash(`${ex.form.get('client_id') ?? ''}:${String(jwt.payload.sub)}`)
      },
    }),
  },
  // one sabotage per property of exp and iat the check asserts
  'IDT-05': [
    {
      how: 'ID token exp is in milliseconds',
      expect: /^ID token exp \d+ is more than 50 years ahead/,
      handlers: forgeTokens({
        id: (jwt) => {
          jwt.payload.exp = Number(jwt.payload.exp) * 1000
        },
      }),
    },
    {
      how: 'ID token exp is a fraction',
      expect: /^ID token exp: expected an integer, got \d+\.5/,
      handlers: forgeTokens({
        id: (jwt) => void (jwt.payload.exp = Number(jwt.payload.exp) + 0.5),
      }),
    },
    {
      how: 'ID token iat is a string',
      expect: /^ID token iat: expected an integer, got "\d+"/,
      handlers: forgeTokens({ id: (jwt) => void (jwt.payload.iat = String(jwt.payload.iat)) }),
    },
    {
      how: 'ID tokens are issued already expired',
      expect: /^ID token exp \d+ is in the past/,
      handlers: forgeTokens({
        id: (jwt) => {
          jwt.payload.iat = Math.floor(Date.now() / 1000)
          jwt.payload.exp = Number(jwt.payload.iat) - 3600
        },
      }),
    },
    {
      how: 'ID token iat is an hour behind',
      expect: /^ID token iat \d+ is -36\d\d s from the harness clock/,
      handlers: forgeTokens({
        id: (jwt) => void (jwt.payload.iat = Number(jwt.payload.iat) - 3600),
      }),
    },
    {
      how: 'ID token exp equals iat',
      expect: /^ID token exp \d+ is not after iat \d+/,
      handlers: forgeTokens({
        id: (jwt) => {
          jwt.payload.iat = Math.floor(Date.now() / 1000) + 60
          jwt.payload.exp = jwt.payload.iat
        },
      }),
    },
  ],
  // one sabotage per request: a nonce sent must come back, none sent must not invent one
  'IDT-06': [
    {
      how: 'ID tokens carry a stale nonce, whether or not one was sent',
      expect: /^ID token nonce: expected .*, got "n-0S6_WzA2Mj-stale"/,
      handlers: forgeTokens({ id: (jwt) => void (jwt.payload.nonce = 'n-0S6_WzA2Mj-stale') }),
    },
    {
      how: 'ID tokens carry a nonce although none was sent',
      expect: /^no nonce was sent, but the ID token has nonce "n-0S6_WzA2Mj-invented"/,
      handlers: forgeTokens({
        id: (jwt) => {
          if ('nonce' in jwt.payload) jwt.keep = true
          else jwt.payload.nonce = 'n-0S6_WzA2Mj-invented'
        },
      }),
    },
  ],
  'IDT-07': {
    how: 'auth_time stays at the first sign-in (re-authentication is not recorded)',
    expect: /^auth_time did not increase after prompt=login re-authentication/,
    handlers: (target) => {
      let first: unknown
      return forgeTokens({
        id: (jwt) => {
          if ('auth_time' in jwt.payload) jwt.payload.auth_time = first ??= jwt.payload.auth_time
        },
      })(target)
    },
  },
  // one sabotage per optional claim the check judges (each a sub-case); a claim the server does
  // not issue is added, wrong, as a server issuing it wrongly would
  'IDT-08': [
    {
      how: 'at_hash is the hash of another access token',
      expect: /^ID token at_hash .*: expected /,
      handlers: forgeTokens({
        id: (jwt) => void (jwt.payload.at_hash = halfHash('some other access token')),
      }),
    },
    {
      how: 'c_hash is the hash of another code',
      expect: /^ID token c_hash \(of the authorization code\): expected /,
      handlers: forgeTokens({
        id: (jwt) => void (jwt.payload.c_hash = halfHash('some other code')),
      }),
    },
    {
      how: 'acr is an empty string',
      expect: /^ID token acr: expected a non-empty string, got ""/,
      handlers: forgeTokens({ id: (jwt) => void (jwt.payload.acr = '') }),
    },
    {
      how: 'amr is a string, not an array',
      expect: /^ID token amr: expected an array of strings, got "pwd"/,
      handlers: forgeTokens({ id: (jwt) => void (jwt.payload.amr = 'pwd') }),
    },
  ],
  // one sabotage per scope that leaves a claim group out (each a sub-case)
  'IDT-09': [
    {
      how: 'ID tokens for openid profile carry email claims',
      expect:
        /^the ID token for scope "openid profile": carries email, email_verified without the email scope/,
      handlers: forgeIdFor('openid profile', { email: 'alice@example.com', email_verified: true }),
    },
    {
      how: 'ID tokens for openid email carry the name',
      expect: /^the ID token for scope "openid email": carries name without the profile scope/,
      handlers: forgeIdFor('openid email', { name: 'Alice Example' }),
    },
    {
      how: 'ID tokens for openid alone carry the email',
      expect: /^the ID token for scope "openid": carries email without the email scope/,
      handlers: forgeIdFor('openid', { email: 'alice@example.com' }),
    },
  ],
}
