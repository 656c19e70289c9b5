import type { accessToken } from '../../catalogue/access-token.ts'
import {
  corruptJson,
  type ForgedJwt,
  forgeTokens,
  perPart,
  type Sabotages,
  type TokenExchange,
} from './kit.ts'

const grantOf = (ex: TokenExchange): string | null => ex.form.get('grant_type')

/** A token of the fixture user alice (org-1; bob is org-2). */
const ofAlice = (jwt: ForgedJwt): boolean => jwt.payload.org_id === 'org-1'

/** How to break the target for each AT-* check. */
export const accessTokenSabotage: Record<keyof typeof accessToken, Sabotages> = {
  'AT-01': {
    how: "access tokens are re-signed with a foreign key under the server's kid",
    expect: /^access token \(authorization_code\): the signature does not verify/,
    handlers: forgeTokens({ access: (jwt) => void (jwt.sign = 'same-kid') }),
  },
  // one sabotage per token whose typ the check reads (each a sub-case)
  'AT-02': [
    {
      how: 'access tokens carry typ JWT',
      expect: /^access token \(authorization_code\): header typ: expected "at\+jwt", got "JWT"/,
      handlers: forgeTokens({ access: (jwt) => void (jwt.header.typ = 'JWT') }),
    },
    {
      how: 'client_credentials access tokens carry typ JWT',
      expect: /^access token \(client_credentials\): header typ: expected "at\+jwt", got "JWT"/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (grantOf(ex) === 'client_credentials') jwt.header.typ = 'JWT'
          else jwt.keep = true
        },
      }),
    },
    {
      how: 'ID tokens carry typ at+jwt too',
      expect: /^the ID token: the ID token header also has typ "at\+jwt"/,
      handlers: forgeTokens({ id: (jwt) => void (jwt.header.typ = 'at+jwt') }),
    },
  ],
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
  // one sabotage per grant whose access token the check reads (each a sub-case)
  'AT-04': [
    {
      how: 'access tokens name a resource server as aud',
      expect:
        /^access token \(authorization_code\): aud: expected "conformance-client", got "https:\/\/api\.example"/,
      handlers: forgeTokens({ access: (jwt) => void (jwt.payload.aud = 'https://api.example') }),
    },
    {
      how: 'client_credentials access tokens name a resource server as aud',
      expect:
        /^access token \(client_credentials\): aud: expected "[^"]+", got "https:\/\/api\.example"/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (grantOf(ex) === 'client_credentials') jwt.payload.aud = 'https://api.example'
          else jwt.keep = true
        },
      }),
    },
  ],
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
  // one sabotage per token the check reads (each a sub-case), and per property of a token: the
  // claims' types, the fixture's values, personal data, a secret in a claim
  'AT-06': perPart([
    {
      how: "alice's access tokens carry roles as a string",
      expect: /^access token of alice: roles: expected an array of strings, got "admin"/,
      handlers: forgeTokens({
        access: (jwt) => {
          if (ofAlice(jwt)) jwt.payload.roles = 'admin'
          else jwt.keep = true
        },
      }),
    },
    {
      how: "alice's access tokens carry the viewer role (the refresh agrees)",
      expect: /^access token of alice: roles: expected exactly \["admin"\], got \["viewer"\]/,
      handlers: forgeTokens({
        access: (jwt) => {
          if (ofAlice(jwt)) jwt.payload.roles = ['viewer']
          else jwt.keep = true
        },
      }),
    },
    {
      how: "alice's access token of the code grant carries her email",
      expect: /^access token of alice: carries personal data or secrets: email$/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (ofAlice(jwt) && grantOf(ex) === 'authorization_code')
            jwt.payload.email = 'alice@example.com'
          else jwt.keep = true
        },
      }),
    },
    {
      how: "alice's access token of the code grant carries the client secret in a claim",
      expect: /^access token of alice: contains a password or client secret in a claim/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (ofAlice(jwt) && grantOf(ex) === 'authorization_code')
            jwt.payload.client_note = `secret=${ex.target.clients.main.secret}`
          else jwt.keep = true
        },
      }),
    },
    {
      how: 'access tokens minted by a refresh carry another org_id',
      expect: /^refreshed access token: org_id: expected "org-1", got "org-elsewhere"/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (grantOf(ex) === 'refresh_token') jwt.payload.org_id = 'org-elsewhere'
          else jwt.keep = true
        },
      }),
    },
    {
      how: 'access tokens minted by a refresh carry the user name',
      expect: /^refreshed access token: carries personal data or secrets: name$/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (grantOf(ex) === 'refresh_token') jwt.payload.name = 'Alice Example'
          else jwt.keep = true
        },
      }),
    },
    {
      how: "bob's access tokens carry alice's org_id",
      expect: /^access token of bob: org_id: expected "org-2", got "org-1"/,
      handlers: forgeTokens({
        access: (jwt) => {
          if (jwt.payload.org_id === 'org-2') jwt.payload.org_id = 'org-1'
          else jwt.keep = true
        },
      }),
    },
  ]),
  // one sabotage per claim the check reads
  'AT-07': [
    {
      how: 'every access token carries the same jti',
      expect: /repeats the jti "jti-0001"/,
      handlers: forgeTokens({ access: (jwt) => void (jwt.payload.jti = 'jti-0001') }),
    },
    {
      how: 'access tokens name another client in client_id',
      expect: /^access token #1 \(authorization_code\) client_id: expected /,
      handlers: forgeTokens({ access: (jwt) => void (jwt.payload.client_id = 'someone-else') }),
    },
  ],
}
