import type { clientCredentials } from '../../catalogue/client-credentials.ts'
import { onForm, replaced, type Sabotages, TOKEN, withJson } from './kit.ts'

const isClientCredentials = (form: URLSearchParams): boolean =>
  form.get('grant_type') === 'client_credentials'

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
  'CC-03': {
    how: 'client_credentials grants openid and every other scope asked for',
    expect: /^client_credentials with scope "api:reports openid": "openid" was granted/,
    handlers: onForm(TOKEN, async ({ form, forward }) => {
      const asked = form.get('scope')
      if (!isClientCredentials(form) || asked === null) return undefined
      return withJson(await forward(replaced(form, { scope: 'api:reports' })), (b) => {
        if (typeof b.access_token === 'string') b.scope = asked
      })
    }),
  },
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
