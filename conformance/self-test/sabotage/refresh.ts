import { bypass, HttpResponse } from 'msw'
import type { refresh } from '../../catalogue/refresh.ts'
import {
  corruptJson,
  DISCOVERY,
  escapeRegExp,
  fetchVia,
  forgeTokens,
  onForm,
  perPart,
  plainHeaders,
  refreshTokensNeverExpire,
  replaced,
  REVOKE,
  type Sabotage,
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

/**
 * The code grant answered with offline_access left out of its scope and a refresh token the
 * token endpoint does not know: neither the scope nor the token shows offline access granted.
 */
const offlineNotGrantedDeadToken = onForm(TOKEN, async ({ form, forward }) => {
  if (!grant(form, 'authorization_code')) return undefined
  return withJson(await forward(), (b) => {
    if (typeof b.refresh_token !== 'string') return
    b.refresh_token = 'unknown-refresh-token-0123456789'
    if (typeof b.scope === 'string') b.scope = b.scope.replace(/\s*offline_access/, '')
  })
})

/** The code grant answered with offline_access granted but no refresh token. */
const dropRefreshToken = onForm(TOKEN, async ({ form, forward }) => {
  if (!grant(form, 'authorization_code')) return undefined
  return withJson(await forward(), (b) => {
    delete b.refresh_token
  })
})

/** Refresh responses that ask for a scope report `scope` instead of what was granted. */
const narrowedReportedAs = (scope: (asked: string) => string) =>
  onForm(TOKEN, async ({ form, forward }) => {
    const asked = form.get('scope')
    if (!grant(form, 'refresh_token') || asked === null) return undefined
    return withJson(await forward(), (b) => {
      if (typeof b.access_token === 'string') b.scope = scope(asked)
    })
  })

/** Refreshes `matches` picks that the real server refuses invalid_grant get `error` instead. */
const refreshRefusedAs = (matches: (form: URLSearchParams) => boolean, error: string) =>
  onForm(TOKEN, async ({ form, forward }) => {
    if (!grant(form, 'refresh_token') || !matches(form)) return undefined
    return withJson(await forward(), (b) => {
      if (b.error === 'invalid_grant') b.error = error
    })
  })

/** How to break the target for each RT-* check. */
export const refreshSabotage: Record<keyof typeof refresh, Sabotages> = {
  'RT-01': [
    {
      how: 'a refresh_token is issued without offline_access',
      expect:
        /^a refresh_token was issued for scope "openid", which does not include offline_access/,
      // OIDC Core §11: "The Authorization Server MAY grant Refresh Tokens in other contexts"
      level: 'SHOULD',
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
    {
      how: 'offline_access is granted but the code grant returns no refresh_token',
      expect: /^no refresh_token in the token response for scope ".*offline_access.*"/,
      handlers: dropRefreshToken,
    },
    {
      how: 'offline_access is left out of the scope and the refresh token issued does not work',
      expect:
        /^offline_access was requested but not granted \(scope "[^"]*"\), and the refresh_token issued with it is refused at the token endpoint \(HTTP 400 invalid_grant\)/,
      handlers: offlineNotGrantedDeadToken,
    },
  ],
  // one sabotage for offline_access not granted, one for its refresh token left out
  'RT-02': [
    {
      how: 'offline_access is silently dropped from the code grant',
      expect: /^prompt=consent: offline_access was not granted/,
      handlers: dropOfflineAccess,
    },
    {
      how: 'prompt=consent grants offline_access without a refresh_token',
      expect: /^prompt=consent with offline_access: no refresh_token in the token response/,
      handlers: dropRefreshToken,
    },
    {
      how: 'prompt=consent leaves offline_access out of the scope and its refresh token does not work',
      expect:
        /^prompt=consent: offline_access was not granted \(scope "[^"]*"\), and the refresh_token issued with it is refused at the token endpoint \(HTTP 400 invalid_grant\)/,
      handlers: offlineNotGrantedDeadToken,
    },
  ],
  // one sabotage per property of a refresh the check asserts
  'RT-03': [
    {
      how: 'the refresh response carries a refresh_token',
      expect:
        /^refresh_token in the refresh response: the refresh response carries a refresh_token, which INTERFACE\.md §2\.2 rules out/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!grant(form, 'refresh_token')) return undefined
        return withJson(await forward(), (b) => {
          if (typeof b.access_token === 'string') b.refresh_token = form.get('refresh_token')
        })
      }),
    },
    {
      how: 'the refresh response names a narrower scope than the original grant',
      expect:
        /^scope of the refresh response \(the original grant\): expected "offline_access openid profile", got "openid"/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!grant(form, 'refresh_token')) return undefined
        return withJson(await forward(), (b) => {
          if (typeof b.access_token === 'string') b.scope = 'openid'
        })
      }),
    },
    {
      how: 'a refreshed access token names another subject',
      expect: /^sub of the refreshed access token: expected /,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (ex.form.get('grant_type') === 'refresh_token') jwt.payload.sub = 'usr_someone_else'
          else jwt.keep = true
        },
      }),
    },
    {
      how: 'a refreshed access token carries a narrower scope claim',
      expect:
        /^scope claim of the refreshed access token: expected "offline_access openid profile", got "openid"/,
      handlers: forgeTokens({
        access: (jwt, ex) => {
          if (ex.form.get('grant_type') === 'refresh_token') jwt.payload.scope = 'openid'
          else jwt.keep = true
        },
      }),
    },
    {
      how: 'a refresh token works once (single use without rotation)',
      expect: /^second refresh with the same refresh token: expected HTTP 200, got 400/,
      handlers: (target) => {
        const used = new Set<string>()
        return onForm(TOKEN, async ({ form, forward }) => {
          const rt = form.get('refresh_token')
          if (!grant(form, 'refresh_token') || rt === null) return undefined
          if (!used.has(rt)) {
            used.add(rt)
            return forward()
          }
          return HttpResponse.json(
            { error: 'invalid_grant', error_description: 'the refresh token was used' },
            { status: 400, headers: { 'cache-control': 'no-store', pragma: 'no-cache' } },
          )
        })(target)
      },
    },
    {
      how: 'a refresh answers the access token it issued before',
      expect:
        /^second refresh with the same refresh token: returned an access token already issued/,
      handlers: (target) => {
        const issued = new Map<string, string>()
        return onForm(TOKEN, async ({ form, forward }) => {
          const rt = form.get('refresh_token')
          if (!grant(form, 'refresh_token') || rt === null) return undefined
          return withJson(await forward(), (b) => {
            const before = issued.get(rt)
            if (before !== undefined) b.access_token = before
            else if (typeof b.access_token === 'string') issued.set(rt, b.access_token)
          })
        })(target)
      },
    },
    {
      how: 'refresh responses may be cached (no Cache-Control: no-store)',
      expect: /^refresh response: expected Cache-Control: no-store/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!grant(form, 'refresh_token')) return undefined
        const real = await forward()
        const headers = plainHeaders(real)
        headers.delete('cache-control')
        return new Response(await real.arrayBuffer(), { status: real.status, headers })
      }),
    },
  ],
  // one sabotage per scope the check reads: the original grant's, the narrowed response's and
  // the narrowed token's
  'RT-04': [
    {
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
    {
      how: 'a narrowed refresh reports the whole grant as its scope',
      expect: /^scope of the narrowed refresh response: expected "openid read:documents"/,
      handlers: narrowedReportedAs(() => 'email offline_access openid profile read:documents'),
    },
    {
      how: 'the code grant reports its scope without profile',
      expect: /^scope of the code grant \(the original grant\): expected /,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!grant(form, 'authorization_code')) return undefined
        return withJson(await forward(), (b) => {
          if (typeof b.scope === 'string') b.scope = b.scope.replace(/\s*\bprofile\b/, '')
        })
      }),
    },
  ],
  // one sabotage per scope the check reads: the narrowed response's, and the later whole
  // refresh's response and token
  'RT-05': [
    {
      how: 'a narrowed refresh reports the whole grant as its scope',
      expect: /^scope of the narrowed refresh response: expected "openid read:documents"/,
      handlers: narrowedReportedAs(() => 'email offline_access openid profile read:documents'),
    },
    {
      how: 'a refresh without scope mints a token of the last narrowed scope, reporting the whole',
      expect:
        /^scope claim of the access token from a refresh without scope after narrowing: expected /,
      handlers: forgeTokens({
        access: (jwt, { form }) => {
          if (grant(form, 'refresh_token') && !form.has('scope'))
            jwt.payload.scope = 'openid read:documents'
          else jwt.keep = true
        },
      }),
    },
    {
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
  ],
  // one sabotage per widening (each a sub-case), and one for a refusal that costs the grant
  'RT-06': perPart([
    {
      how: 'a refresh scope beyond the grant is silently cut back to the grant',
      expect: /^refresh with scope .*write:documents.*: 200, granting/,
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!grant(form, 'refresh_token') || form.get('scope') === null) return undefined
        const without = new URLSearchParams(form)
        without.delete('scope')
        return forward(without)
      }),
    },
    ...[
      'openid offline_access read:documents write:documents',
      'openid no-such:scope',
      'openid write:documents',
      'openid profile',
    ].map((scope): Sabotage => ({
      how: `a refresh asking for "${scope}" is granted it`,
      expect: new RegExp(
        `^refresh with scope "${escapeRegExp(scope)}" \\(granted .*\\): 200, granting "${escapeRegExp(scope)}"`,
      ),
      handlers: onForm(TOKEN, async ({ form, forward }) => {
        if (!grant(form, 'refresh_token') || form.get('scope') !== scope) return undefined
        const without = new URLSearchParams(form)
        without.delete('scope')
        return withJson(await forward(without), (b) => {
          if (typeof b.access_token === 'string') b.scope = scope
        })
      }),
    })),
    {
      how: 'a refused widening cuts the grant down to openid',
      expect: /^scope after the refused widenings: expected /,
      handlers: (target) => {
        const refused = new Set<string>()
        return onForm(TOKEN, async ({ form, forward }) => {
          const rt = form.get('refresh_token')
          if (!grant(form, 'refresh_token') || rt === null) return undefined
          const real = await forward()
          if (real.status === 400) refused.add(rt)
          if (form.has('scope') || !refused.has(rt)) return real
          return withJson(real, (b) => {
            if (typeof b.access_token === 'string') b.scope = 'openid'
          })
        })(target)
      },
    },
  ]),
  // one sabotage per part: the token accepted, the refusal's error code, the rightful client's
  // refresh afterwards
  'RT-07': [
    {
      how: "a refresh token is accepted from another client (sent on as the owner's)",
      expect: /^other-client refreshed a refresh token of another client/,
      handlers: onForm(TOKEN, async ({ form, forward, target }) => {
        const other = target.clients.other
        if (!grant(form, 'refresh_token') || form.get('client_id') !== other?.id) return undefined
        const main = target.clients.main
        return forward(replaced(form, { client_id: main.id, client_secret: main.secret }))
      }),
    },
    {
      how: "another client's refresh token is refused unauthorized_client",
      expect:
        /^other-client presenting the refresh token: error: expected invalid_grant, got "unauthorized_client"/,
      handlers: onForm(TOKEN, async ({ form, forward, target }) => {
        if (!grant(form, 'refresh_token') || form.get('client_id') !== target.clients.other?.id)
          return undefined
        return withJson(await forward(), (b) => {
          if (b.error === 'invalid_grant') b.error = 'unauthorized_client'
        })
      }),
    },
    {
      how: "another client's attempt revokes the refresh token",
      expect: /^refresh by the rightful client afterwards: expected HTTP 200, got 400/,
      handlers: onForm(TOKEN, async ({ form, forward, target }) => {
        if (!grant(form, 'refresh_token') || form.get('client_id') !== target.clients.other?.id)
          return undefined
        const main = target.clients.main
        // the token's owner revokes it, as a server that punishes the presented token would
        const revoke = new Request(target.baseUrl + REVOKE, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            token: form.get('refresh_token') ?? '',
            client_id: main.id,
            client_secret: main.secret,
          }).toString(),
        })
        await fetchVia(target.dispatcher, bypass(revoke))
        return forward()
      }),
    },
  ],
  // one sabotage per way of failing to authenticate (each a sub-case)
  'RT-08': perPart(
    (
      [
        ['no client_secret', (secret: string | null) => secret === null],
        ['an empty client_secret', (secret: string | null) => secret === ''],
        ['a wrong client_secret', (secret: string | null) => !!secret?.endsWith('-wrong')],
      ] as const
    ).map(([what, matches]): Sabotage => ({
      how: `a refresh with ${what} is accepted`,
      expect: new RegExp(`^refresh with ${what}: status: expected HTTP 401, got 200`),
      handlers: onForm(TOKEN, async ({ form, forward, target }) => {
        const main = target.clients.main
        if (!grant(form, 'refresh_token') || form.get('client_id') !== main.id) return undefined
        if (!matches(form.get('client_secret'))) return undefined
        return forward(replaced(form, { client_secret: main.secret }))
      }),
    })),
  ),
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
      how: 'a refresh token that was never issued is refused invalid_request',
      expect:
        /^refresh with a refresh token never issued: error: expected invalid_grant, got "invalid_request"/,
      handlers: refreshRefusedAs(
        (form) => form.get('refresh_token')?.startsWith('garbage') === true,
        'invalid_request',
      ),
    },
    {
      how: 'revocation answers 200 but revokes nothing, so a revoked refresh token still works',
      expect: /^refresh with a revoked refresh token: status: expected HTTP 400, got 200/,
      handlers: onForm('/auth/revoke', () =>
        Promise.resolve(HttpResponse.json({ message: 'revoked' }, { status: 200 })),
      ),
    },
    {
      how: 'a revoked refresh token is refused invalid_token',
      expect:
        /^refresh with a revoked refresh token: error: expected invalid_grant, got "invalid_token"/,
      handlers: (target) => {
        const revoked = new Set<string>()
        return [
          ...onForm(REVOKE, async ({ form }) => {
            revoked.add(form.get('token') ?? '')
            return Promise.resolve(undefined)
          })(target),
          ...refreshRefusedAs(
            (form) => revoked.has(form.get('refresh_token') ?? ''),
            'invalid_token',
          )(target),
        ]
      },
    },
    {
      how: 'the refresh token of a reused code is refused 401 invalid_client',
      expect:
        /^refresh with the refresh token of a reused code: status: expected HTTP 400, got 401/,
      handlers: (target) => {
        // refresh tokens issued by a code grant, by the code that issued them
        const codeOf = new Map<string, string>()
        const redeemed = new Set<string>()
        return onForm(TOKEN, async ({ form, forward }) => {
          const real = await forward()
          if (grant(form, 'authorization_code')) {
            const code = form.get('code') ?? ''
            if (real.status === 200) {
              const body = (await real.clone().json()) as { refresh_token?: unknown }
              if (typeof body.refresh_token === 'string') codeOf.set(body.refresh_token, code)
            } else redeemed.add(code)
            return real
          }
          const code = codeOf.get(form.get('refresh_token') ?? '')
          if (!grant(form, 'refresh_token') || code === undefined || !redeemed.has(code))
            return real
          return HttpResponse.json(
            { error: 'invalid_client', error_description: 'grant revoked' },
            { status: 401, headers: plainHeaders(real) },
          )
        })(target)
      },
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
      how: 'a refresh without the client secret crashes the token endpoint',
      expect: /^status: expected HTTP 400 or 401, got 500/,
      handlers: onForm(TOKEN, ({ form }) =>
        Promise.resolve(
          grant(form, 'refresh_token') && !form.has('client_secret')
            ? HttpResponse.json(
                { error: 'server_error', error_description: 'no secret' },
                { status: 500 },
              )
            : undefined,
        ),
      ),
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
  // one sabotage for the expiry, one for the refusal's error code
  'RT-11': [
    {
      how: 'refresh tokens never expire',
      expect:
        /^refresh with a refresh token past its \d+ s lifetime: 200, the expired refresh token still works/,
      store: refreshTokensNeverExpire,
    },
    {
      how: 'an expired refresh token is refused invalid_request',
      expect:
        /^refresh with a refresh token past its \d+ s lifetime: error: expected invalid_grant, got "invalid_request"/,
      handlers: refreshRefusedAs(() => true, 'invalid_request'),
    },
  ],
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
