import type { clientCredentials } from '../../catalogue/client-credentials.ts'
import { decodeJwt } from 'jose'
import { HttpResponse } from 'msw'
import {
  editAccessToken,
  forgeTokens,
  INTROSPECT,
  type Json,
  onForm,
  perPart,
  plainHeaders,
  replaced,
  type Sabotage,
  type Sabotages,
  TOKEN,
  withJson,
} from './kit.ts'

const isClientCredentials = (form: URLSearchParams): boolean =>
  form.get('grant_type') === 'client_credentials'

/**
 * The JWT with some payload claims changed and its signature kept (now invalid): what a check
 * that only reads the claims sees of a token minted with them.
 */
function withClaims(jwt: string, claims: Record<string, unknown>): string {
  const [header = '', , signature = ''] = jwt.split('.')
  const changed = { ...(decodeJwt(jwt) as Record<string, unknown>), ...claims }
  return [header, Buffer.from(JSON.stringify(changed)).toString('base64url'), signature].join('.')
}

/** client_credentials with exactly this scope is granted as asked (minted without the rest). */
const grantsAsAsked = (asked: string) =>
  onForm(TOKEN, async ({ form, forward }) => {
    if (!isClientCredentials(form) || form.get('scope') !== asked) return undefined
    return withJson(await forward(replaced(form, { scope: 'api:reports' })), (b) => {
      if (typeof b.access_token === 'string') b.scope = asked
    })
  })

/** The real answers to client_credentials requests with their JSON body changed. */
const ccBody = (mutate: (body: Json, form: URLSearchParams) => unknown) =>
  onForm(TOKEN, async ({ form, forward }) => {
    if (!isClientCredentials(form)) return undefined
    return withJson(await forward(), (b) => {
      if (typeof b.access_token === 'string') mutate(b, form)
    })
  })

/** The real answers to client_credentials requests with their headers changed. */
const ccHeaders = (mutate: (headers: Headers) => unknown) =>
  onForm(TOKEN, async ({ form, forward }) => {
    if (!isClientCredentials(form)) return undefined
    const real = await forward()
    const headers = plainHeaders(real)
    mutate(headers)
    return new Response(await real.arrayBuffer(), { status: real.status, headers })
  })

/** The real answers of introspection for an active token with their body changed. */
const introspected = (mutate: (body: Json) => unknown) =>
  onForm(INTROSPECT, async ({ forward }) =>
    withJson(await forward(), (b) => {
      if (b.active === true) mutate(b)
    }),
  )

/** How to break the target for each CC-* check. */
export const clientCredentialsSabotage: Record<keyof typeof clientCredentials, Sabotages> = {
  // one sabotage per member of the response the check judges, and per cache header
  'CC-01': [
    {
      how: 'client_credentials answers a wider scope than asked',
      expect:
        /^scope of the client_credentials response: expected "api:reports", got "api:reports read:documents"/,
      handlers: ccBody((b) => (b.scope = 'api:reports read:documents')),
    },
    {
      how: 'client_credentials answers token_type mac',
      expect: /^token_type \(case-insensitive\): expected "bearer", got "mac"/,
      handlers: ccBody((b) => (b.token_type = 'mac')),
    },
    {
      how: 'client_credentials answers expires_in 0',
      expect: /^expires_in: expected a positive integer, got 0/,
      handlers: ccBody((b) => (b.expires_in = 0)),
    },
    {
      how: 'client_credentials answers without Cache-Control: no-store',
      expect: /^client_credentials response: expected Cache-Control: no-store, got ""/,
      handlers: ccHeaders((h) => h.delete('cache-control')),
    },
    {
      how: 'client_credentials answers without Pragma: no-cache',
      expect: /^client_credentials response: expected Pragma: no-cache, got null/,
      handlers: ccHeaders((h) => h.delete('pragma')),
    },
  ],
  // one sabotage per request (each a sub-case) and per token it must not carry
  'CC-02': [
    {
      how: 'client_credentials answers an id_token',
      expect: /^client_credentials response \(scope api:reports\): carries an id_token/,
      handlers: ccBody((b, form) => {
        if (form.has('scope')) b.id_token = b.access_token
      }),
    },
    {
      how: 'client_credentials answers a refresh_token',
      expect: /^client_credentials response \(scope api:reports\): carries a refresh_token/,
      handlers: ccBody((b, form) => {
        if (form.has('scope')) b.refresh_token = 'a-refresh-token'
      }),
    },
    {
      how: 'client_credentials without scope answers an id_token',
      expect: /^client_credentials response \(no scope\): carries an id_token/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!isClientCredentials(form) || form.has('scope')) return undefined
        // a token of the default scope, whether or not the real server has one
        return withJson(await forward(replaced(form, { scope: 'api:reports' })), (b) => {
          if (typeof b.access_token === 'string') b.id_token = b.access_token
        })
      }),
    },
  ],
  // one sabotage per request of the check (each a sub-case) and per assertion its answer meets
  'CC-03': perPart([
    {
      how: 'client_credentials without scope grants a user scope by default',
      expect:
        /^client_credentials without scope: a user scope was granted \("api:reports openid"\)/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!isClientCredentials(form) || form.has('scope')) return undefined
        return withJson(await forward(replaced(form, { scope: 'api:reports' })), (b) => {
          if (typeof b.access_token === 'string') b.scope = 'api:reports openid'
        })
      }),
    },
    {
      how: 'client_credentials without scope mints a token with a user scope the response hides',
      expect:
        /^client_credentials without scope: the access token carries a user scope \("api:reports openid"\)/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!isClientCredentials(form) || form.has('scope')) return undefined
        return withJson(await forward(replaced(form, { scope: 'api:reports' })), (b) => {
          if (typeof b.access_token === 'string')
            b.access_token = withClaims(b.access_token, { scope: 'api:reports openid' })
        })
      }),
    },
    {
      how: 'client_credentials without scope is refused with invalid_request',
      expect:
        /^client_credentials without scope: error: expected invalid_scope, got "invalid_request"/,
      handlers: onForm(TOKEN, async ({ form }) =>
        Promise.resolve(
          isClientCredentials(form) && !form.has('scope')
            ? HttpResponse.json(
                { error: 'invalid_request', error_description: 'scope is required' },
                { status: 400 },
              )
            : undefined,
        ),
      ),
    },
    ...[
      ...['openid', 'profile', 'email', 'offline_access', 'no-such:scope', 'write:documents'].map(
        (bad) => ({ asked: `api:reports ${bad}`, bad }),
      ),
      { asked: 'openid', bad: 'openid' },
    ].map(({ asked, bad }): Sabotage => ({
      how: `client_credentials grants scope "${asked}" as asked`,
      expect: new RegExp(`^client_credentials with scope "${asked}": "${bad}" was granted`),
      handlers: grantsAsAsked(asked),
    })),
    {
      how: 'client_credentials drops an unknown scope and leaves scope out of the response',
      expect:
        /^client_credentials with scope "api:reports no-such:scope": 200 without a scope in the response/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!isClientCredentials(form) || form.get('scope') !== 'api:reports no-such:scope')
          return undefined
        return withJson(await forward(replaced(form, { scope: 'api:reports' })), (b) => {
          delete b.scope
        })
      }),
    },
    {
      how: 'client_credentials says it dropped write:documents but the token carries it',
      expect:
        /^client_credentials with scope "api:reports write:documents": the access token carries "write:documents"/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!isClientCredentials(form) || form.get('scope') !== 'api:reports write:documents')
          return undefined
        return withJson(await forward(replaced(form, { scope: 'api:reports' })), (b) => {
          if (typeof b.access_token === 'string')
            b.access_token = withClaims(b.access_token, { scope: 'api:reports write:documents' })
        })
      }),
    },
    {
      how: 'a user scope asked with client_credentials is refused with invalid_request',
      expect:
        /^client_credentials with scope "api:reports profile": error: expected invalid_scope, got "invalid_request"/,
      handlers: onForm(TOKEN, async ({ form }) =>
        Promise.resolve(
          isClientCredentials(form) && form.get('scope') === 'api:reports profile'
            ? HttpResponse.json(
                { error: 'invalid_request', error_description: 'scope not allowed' },
                { status: 400 },
              )
            : undefined,
        ),
      ),
    },
  ]),
  // one sabotage per claim the check judges (each a sub-case)
  'CC-04': [
    {
      how: 'the client_credentials token names a subject other than the client',
      expect:
        /^sub of a client_credentials access token: expected "service-client", got "service-user"/,
      // the token re-signed with the server's own key, its sub no longer the client's
      extend: editAccessToken('client_credentials', (claims) => {
        claims.sub = 'service-user'
      }),
    },
    {
      how: 'the client_credentials token names a resource server in aud besides the client',
      expect: /^aud: expected "service-client", got \["service-client","https:\/\/api\.example"\]/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (isClientCredentials(ex.form))
            jwt.payload.aud = [String(jwt.payload.aud), 'https://api.example']
          else jwt.keep = true
        },
      }),
    },
    {
      how: 'the client_credentials token carries an email',
      expect: /^user claims: a client_credentials token carries email$/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (isClientCredentials(ex.form)) jwt.payload.email = 'service@example.com'
          else jwt.keep = true
        },
      }),
    },
  ],
  // one sabotage per field of the introspection answer (each but active a sub-case)
  'CC-05': perPart([
    {
      how: 'introspection calls an active client_credentials token inactive',
      expect: /^active: expected true, got false/,
      handlers: introspected((b) => {
        for (const key of Object.keys(b)) Reflect.deleteProperty(b, key)
        b.active = false
      }),
    },
    ...(
      [
        ['client_id', /^client_id: expected "service-client", got "someone-else"/, 'someone-else'],
        ['scope', /^scope \(the granted scope\): expected /, 'api:reports read:documents'],
        [
          'sub',
          /^sub \(the access token sub\): expected "service-client", got "someone"/,
          'someone',
        ],
      ] as const
    ).map(([field, expected, value]): Sabotage => ({
      how: `introspection of an active token names another ${field}`,
      expect: expected,
      handlers: introspected((b) => (b[field] = value)),
    })),
    ...(['exp', 'iat'] as const).map((field): Sabotage => ({
      how: `introspection of an active token answers ${field} a minute later`,
      expect: new RegExp(`^${field}: expected \\d+, got \\d+`),
      handlers: introspected((b) => (b[field] = Number(b[field]) + 60)),
    })),
  ]),
}
