import { HttpResponse } from 'msw'
import type { refresh } from '../../catalogue/refresh.ts'
import {
  corruptJson,
  DISCOVERY,
  onForm,
  plainHeaders,
  replaced,
  type Sabotages,
  TOKEN,
  withJson,
} from './kit.ts'

const grant = (form: URLSearchParams, type: string): boolean => form.get('grant_type') === type

/** The code grant answered as if offline_access had not been granted. */
const dropOfflineAccess = onForm(TOKEN, async ({ form, forward }) => {
  if (!grant(form, 'authorization_code')) return undefined
  return withJson(await forward(), (b) => {
    delete b.refresh_token
    if (typeof b.scope === 'string') b.scope = b.scope.replace(/\s*offline_access/, '')
  })
})

/** How to break the target for each RT-* check. */
export const refreshSabotage: Record<keyof typeof refresh, Sabotages> = {
  'RT-01': [
    {
      how: 'a refresh_token is issued without offline_access',
      expect:
        /^a refresh_token was issued for scope "openid", which does not include offline_access/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!grant(form, 'authorization_code')) return undefined
        return withJson(await forward(), (b) => {
          if (typeof b.access_token === 'string')
            b.refresh_token ??= 'unasked-refresh-token-0123456789'
        })
      }),
    },
    {
      how: 'offline_access is silently dropped from the code grant, with its refresh token',
      expect: /^offline_access was requested but not granted/,
      handlers: dropOfflineAccess,
    },
  ],
  'RT-02': {
    how: 'offline_access is silently dropped from the code grant',
    expect: /^prompt=consent: offline_access was not granted/,
    handlers: dropOfflineAccess,
  },
  'RT-03': {
    how: 'the refresh response carries a refresh_token',
    expect: /^the refresh response carries a refresh_token, which INTERFACE\.md §2\.2 rules out/,
    handlers: onForm(TOKEN, async ({ form, forward }) => {
      if (!grant(form, 'refresh_token')) return undefined
      return withJson(await forward(), (b) => {
        if (typeof b.access_token === 'string') b.refresh_token = form.get('refresh_token')
      })
    }),
  },
  'RT-04': {
    how: 'a narrowed refresh changes only the response scope, not the token',
    expect: /^scope claim of the narrowed access token: expected "openid read:documents"/,
    handlers: onForm(TOKEN, async ({ form, forward }) => {
      const asked = form.get('scope')
      if (!grant(form, 'refresh_token') || asked === null) return undefined
      const without = new URLSearchParams(form)
      without.delete('scope')
      return withJson(await forward(without), (b) => {
        if (typeof b.access_token === 'string') b.scope = asked
      })
    }),
  },
  'RT-05': {
    how: 'a narrowed refresh shrinks the grant for later refreshes',
    expect: /^scope of a refresh without scope after narrowing: expected /,
    handlers: (target) => {
      const narrowedTo = new Map<string, string>()
      return onForm(TOKEN, async ({ form, forward }) => {
        const token = form.get('refresh_token')
        if (!grant(form, 'refresh_token') || token === null) return undefined
        const asked = form.get('scope')
        if (asked !== null) narrowedTo.set(token, asked)
        const narrowed = narrowedTo.get(token)
        return asked === null && narrowed !== undefined
          ? forward(replaced(form, { scope: narrowed }))
          : forward()
      })(target)
    },
  },
  'RT-06': {
    how: 'a refresh scope beyond the grant is silently cut back to the grant',
    expect: /^refresh with scope .*write:documents.*: 200, granting/,
    handlers: onForm(TOKEN, async ({ form, forward }) => {
      if (!grant(form, 'refresh_token') || form.get('scope') === null) return undefined
      const without = new URLSearchParams(form)
      without.delete('scope')
      return forward(without)
    }),
  },
  'RT-07': {
    how: "a refresh token is accepted from another client (sent on as the owner's)",
    expect: /^other-client refreshed a refresh token of another client/,
    handlers: onForm(TOKEN, async ({ form, forward, target }) => {
      const other = target.clients.other
      if (!grant(form, 'refresh_token') || form.get('client_id') !== other?.id) return undefined
      const main = target.clients.main
      return forward(replaced(form, { client_id: main.id, client_secret: main.secret }))
    }),
  },
  'RT-08': {
    how: 'a refresh with a missing or wrong client secret is accepted',
    expect: /^refresh with no client_secret: status: expected HTTP 401, got 200/,
    handlers: onForm(TOKEN, async ({ form, forward, target }) => {
      const main = target.clients.main
      if (!grant(form, 'refresh_token') || form.get('client_id') !== main.id) return undefined
      return forward(replaced(form, { client_secret: main.secret }))
    }),
  },
  'RT-09': [
    {
      how: 'a refresh token that was never issued is answered 401 invalid_client',
      expect: /^refresh with a refresh token never issued: status: expected HTTP 400, got 401/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!grant(form, 'refresh_token') || !form.get('refresh_token')?.startsWith('garbage'))
          return undefined
        const real = await forward()
        return HttpResponse.json(
          { error: 'invalid_client', error_description: 'unknown token' },
          { status: 401, headers: plainHeaders(real) },
        )
      }),
    },
    {
      how: 'revocation answers 200 but revokes nothing, so a revoked refresh token still works',
      expect: /^refresh with a revoked refresh token: status: expected HTTP 400, got 200/,
      handlers: onForm('/auth/revoke', () =>
        Promise.resolve(HttpResponse.json({ message: 'revoked' }, { status: 200 })),
      ),
    },
  ],
  'RT-10': [
    {
      how: 'public clients (token_endpoint_auth_method none) while refresh tokens do not rotate',
      expect:
        /^refresh tokens do not rotate, yet discovery advertises token_endpoint_auth_method "none"/,
      handlers: corruptJson(DISCOVERY, (b) => {
        b.token_endpoint_auth_methods_supported = ['client_secret_post', 'none']
      }),
    },
    {
      how: 'a refresh token that does not rotate refreshes without the client secret',
      expect:
        /^a refresh token that does not rotate refreshed with no client secret, as a public client/,
      handlers: onForm(TOKEN, async ({ form, forward, target }) => {
        const main = target.clients.main
        if (!grant(form, 'refresh_token') || form.has('client_secret')) return undefined
        return forward(replaced(form, { client_secret: main.secret }))
      }),
    },
  ],
  'RT-11': {
    how: 'refresh tokens never expire',
    expect:
      /^refresh with a refresh token past its \d+ s lifetime: 200, the expired refresh token still works/,
    faults: ['refresh-expiry-unchecked'],
  },
}

/**
 * Not a sabotage: a target whose refresh tokens rotate (every refresh response carries a new
 * refresh token, one the target has never issued), for the self-test's proof that RT-10
 * skips rather than passes where its rule does not apply. Repeating the token it was given
 * (RT-03's sabotage) is no rotation.
 */
export const rotatingRefreshTokens = {
  handlers: onForm(TOKEN, async ({ form, forward }) => {
    if (!grant(form, 'refresh_token')) return undefined
    return withJson(await forward(), (b) => {
      if (typeof b.access_token === 'string')
        b.refresh_token = `${form.get('refresh_token') ?? ''}.rotated`
    })
  }),
}
