import type { clientCredentials } from '../../catalogue/client-credentials.ts'
import { decodeJwt } from 'jose'
import { HttpResponse } from 'msw'
import { onForm, perPart, replaced, type Sabotage, type Sabotages, TOKEN, withJson } from './kit.ts'

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

/** How to break the target for each CC-* check. */
export const clientCredentialsSabotage: Record<keyof typeof clientCredentials, Sabotages> = {
  'CC-01': {
    how: 'client_credentials answers a wider scope than asked',
    expect:
      /^scope of the client_credentials response: expected "api:reports", got "api:reports read:documents"/,
    handlers: onForm(TOKEN, async ({ form, forward }) => {
      if (!isClientCredentials(form)) return undefined
      return withJson(await forward(), (b) => {
        if (typeof b.access_token === 'string') b.scope = 'api:reports read:documents'
      })
    }),
  },
  'CC-02': {
    how: 'client_credentials answers an id_token',
    expect: /^client_credentials response \(scope api:reports\) carries an id_token/,
    handlers: onForm(TOKEN, async ({ form, forward }) => {
      if (!isClientCredentials(form)) return undefined
      return withJson(await forward(), (b) => {
        if (typeof b.access_token === 'string') b.id_token = b.access_token
      })
    }),
  },
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
  'CC-04': {
    how: 'the client_credentials token names a subject other than the client',
    expect:
      /^sub of a client_credentials access token: expected "service-client", got "service-user"/,
    faults: ['client-credentials-user-subject'],
  },
  'CC-05': {
    how: 'introspection of an active token names another client_id',
    expect: /^client_id: expected "service-client", got "someone-else"/,
    handlers: onForm('/auth/introspect', async ({ forward }) =>
      withJson(await forward(), (b) => {
        if (b.active === true) b.client_id = 'someone-else'
      }),
    ),
  },
}
