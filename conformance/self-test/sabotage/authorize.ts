import { HttpResponse } from 'msw'
import type { authorize } from '../../catalogue/authorize.ts'
import {
  corruptJson,
  onResponseOf,
  DISCOVERY,
  escapeRegExp,
  onAuthorize,
  perPart,
  type Sabotage,
  type Sabotages,
  type Target,
  type TargetClient,
  redirectVariants,
  onRequestOf,
  paramsOf,
  rewriteLocation,
  tokenResponseScopeAsRegistered,
  extendAll,
  rewriteSuccessRedirect,
  onAuthorizationRequest,
  codesKeptAs,
  clientsReadAs,
  FIXTURE_SCOPES,
  type Extend,
  type StoreWrapper,
  signInCancelIgnored,
} from './kit.ts'

const redirect = (location: string) =>
  new HttpResponse(null, { status: 302, headers: { location, 'cache-control': 'no-store' } })

/** The client's URI plus parameters, as the broken server would build it. */
const toClient = (redirectUri: string, params: Record<string, string | null>) => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== null) q.set(k, v)
  return redirect(`${redirectUri}?${q.toString()}`)
}

const mainUri = (target: Target): string => target.clients.main.redirectUri ?? ''

/** Harness authorization requests `matches` picks are refused with invalid_request. */
const refusedWhen = (matches: (sent: URL) => boolean, description: string) =>
  onAuthorize({
    respond: (_real, sent) => {
      const uri = sent.searchParams.get('redirect_uri')
      if (!matches(sent) || !uri) return undefined
      return toClient(uri, {
        error: 'invalid_request',
        error_description: description,
        state: sent.searchParams.get('state'),
      })
    },
  })

/**
 * The error redirects (to the client, with error=) of the harness requests `matches` picks,
 * with their query changed by `change`.
 */
const errorRedirectChanged = (
  matches: (sent: URL) => boolean,
  change: (params: URLSearchParams) => void,
) =>
  onAuthorize({
    respond: (real, sent) => {
      const location = real.headers.get('location')
      if (!location?.includes('error=') || !matches(sent)) return undefined
      const url = new URL(location)
      change(url.searchParams)
      return redirect(url.toString())
    },
  })

/**
 * AUTHZ-11's broken server: it grants the requested scopes `beyond` picks though the client is
 * not registered for them. They are taken off the authorization request before the server
 * validates it, and put back into the code it keeps (found by its code_challenge), so the
 * code, and the tokens of it, carry them.
 */
function grantedBeyondRegistration(beyond: (scope: string) => boolean): {
  extend: Extend
  store: StoreWrapper
} {
  const taken = new Map<string, string[]>()
  return {
    extend: (app) =>
      onAuthorizationRequest(async (params) => {
        const { client_id: id, scope, code_challenge: challenge } = params
        if (typeof id !== 'string' || typeof scope !== 'string' || typeof challenge !== 'string')
          return
        const registered = (await app.deps.store.clients.get(id))?.scopes ?? []
        const requested = scope.split(' ')
        const extra = requested.filter((s) => s !== '' && !registered.includes(s) && beyond(s))
        if (extra.length === 0) return
        taken.set(challenge, extra)
        params.scope = requested.filter((s) => !extra.includes(s)).join(' ')
      })(app),
    store: codesKeptAs((code) => {
      const extra = taken.get(code.codeChallenge)
      return extra ? { ...code, scope: [code.scope, ...extra].join(' ') } : code
    }),
  }
}

/**
 * AUTHZ-20's sabotages: every authorization request (the harness's raw ones and the browser's)
 * loses its unknown no-such:* scope values before the server reads it.
 */
export const unknownScopesDropped: Extend = onAuthorizationRequest((params) => {
  if (typeof params.scope === 'string')
    params.scope = params.scope
      .split(' ')
      .filter((s) => !s.startsWith('no-such'))
      .join(' ')
})

/**
 * The token endpoint's answers with their scope rewritten (undefined: the member left out), on
 * their way out of the reference server.
 */
const tokenResponseScope =
  (change: (scope: string) => string | undefined): Extend =>
  (app) =>
    onResponseOf({ path: '/auth/token', method: 'post' }, (response) => {
      const body = response.source as Record<string, unknown> | null
      if (typeof body?.scope !== 'string') return
      const scope = change(body.scope)
      if (scope === undefined) delete body.scope
      else body.scope = scope
    })(app)

/** How to break the target for each AUTHZ-* check. */
export const authorizeSabotage: Record<keyof typeof authorize, Sabotages> = {
  'AUTHZ-01': {
    how: 'a valid request is answered with a code before any login',
    expect: /^valid authorization request: redirected to the client URI .*code=\[redacted\]/,
    handlers: onAuthorize({
      respond: (real, sent) => {
        const uri = sent.searchParams.get('redirect_uri')
        if (real.status !== 200 || !uri) return undefined
        return toClient(uri, { code: 'sabotage-code', state: sent.searchParams.get('state') })
      },
    }),
  },
  // one sabotage per part: the code, the redirect target, state, a token parameter in the
  // success redirect, a fragment
  'AUTHZ-02': [
    {
      how: 'the success redirect after login leaves the code out',
      expect: /^no code in the redirect to /,
      // the code is issued and kept, and left out of the redirect on its way out
      extend: rewriteSuccessRedirect((params) => params.delete('code')),
    },
    {
      how: 'the success redirect goes to the registered URI with a slash added',
      expect: /^redirect target: expected "\S+\/callback", got "\S+\/callback\/"/,
      // the sign-in's success redirect, rewritten on its way out of the reference server
      extend: rewriteLocation({ path: '/auth/login', method: 'post' }, (to) => {
        if (to.searchParams.has('code')) to.pathname += '/'
        return to
      }),
    },
    {
      how: 'the success redirect after login leaves state out',
      expect: /^state in the redirect: expected .*, got null/,
      extend: rewriteSuccessRedirect((params) => params.delete('state')),
    },
    {
      how: 'the success redirect carries token_type',
      expect: /^the success redirect carries token_type/,
      // a hybrid-flow parameter in the code flow's success redirect
      extend: rewriteSuccessRedirect((params) => params.set('token_type', 'Bearer')),
    },
    {
      how: 'the success redirect after login ends with a fragment',
      expect: /^the success redirect carries a fragment: \S+#_=_$/,
      extend: rewriteLocation({ path: '/auth/login', method: 'post' }, (to) => {
        if (to.searchParams.has('code')) to.hash = '_=_'
        return to
      }),
    },
  ],
  // one sabotage per client the server may take for the main one (each a sub-case)
  'AUTHZ-03': [
    {
      how: 'an unknown or missing client_id is taken to be the main client',
      expect:
        /^no client_id: the request was accepted: the IdP answered HTTP 200 and showed its login form/,
      handlers: onAuthorize({
        request: (url, target) => {
          const id = url.searchParams.get('client_id')
          const clients = Object.values(target.clients as Record<string, TargetClient | undefined>)
          const known = clients.some((c) => c?.id === id)
          if (!known || id === target.clients.service?.id)
            url.searchParams.set('client_id', target.clients.main.id)
          return url
        },
      }),
    },
    {
      how: 'an unknown client_id is taken to be the main client',
      expect: /^unknown client_id: the request was accepted/,
      handlers: onAuthorize({
        request: (url, target) => {
          if (url.searchParams.get('client_id')?.startsWith('unknown-'))
            url.searchParams.set('client_id', target.clients.main.id)
          return url
        },
      }),
    },
    {
      how: 'a client_credentials-only client is served the code flow at the main client URI',
      expect: /^client service-client \(client_credentials only\): the request was accepted/,
      handlers: onAuthorize({
        request: (url, target) => {
          if (url.searchParams.get('client_id') === target.clients.service?.id)
            url.searchParams.set('client_id', target.clients.main.id)
          return url
        },
      }),
    },
  ],
  // one sabotage per unregistered URI (each a sub-case)
  'AUTHZ-04': [
    {
      how: 'the error page for an unregistered redirect_uri becomes an error redirect to it',
      expect: /^redirect_uri https:\/\/evil\.example\/cb: redirected off the IdP/,
      handlers: onAuthorize({
        respond: (real, sent) => {
          const uri = sent.searchParams.get('redirect_uri')
          if (real.status < 400 || !uri) return undefined
          return toClient(uri, { error: 'invalid_request', state: sent.searchParams.get('state') })
        },
      }),
    },
    {
      how: "another client's registered redirect_uri is accepted for the main client",
      expect: /^redirect_uri \S+ \(registered only for third-client\): the request was accepted/,
      handlers: onAuthorize({
        request: (url, target) => {
          const third = target.clients.third?.redirectUri
          if (third !== undefined && url.searchParams.get('redirect_uri') === third)
            url.searchParams.set('redirect_uri', mainUri(target))
          return url
        },
      }),
    },
  ],
  // one sabotage per variant (each a sub-case): the server takes that variant for the
  // registered URI, and the check fails by that variant's own assertion
  'AUTHZ-05': authz05Sabotages(),
  'AUTHZ-06': {
    how: 'a missing redirect_uri defaults to the registered one',
    expect: /^no redirect_uri: the request was accepted/,
    handlers: onAuthorize({
      request: (url, target) => {
        if (!url.searchParams.has('redirect_uri'))
          url.searchParams.set('redirect_uri', mainUri(target))
        return url
      },
    }),
  },
  // one sabotage per response_type (each a sub-case): the server takes that one for code
  'AUTHZ-07': perPart([
    {
      how: 'a missing response_type is taken to be code',
      expect: /^no response_type: expected a redirect to /,
      handlers: onAuthorize({
        request: (url) => {
          if (!url.searchParams.has('response_type')) url.searchParams.set('response_type', 'code')
          return url
        },
      }),
    },
    ...(['token', 'id_token', 'code id_token', 'code token', 'code id_token token'] as const).map(
      (rt): Sabotage => ({
        how: `response_type=${rt} is taken to be code`,
        expect: new RegExp(`^response_type=${rt}: expected a redirect to `),
        handlers: onAuthorize({
          request: (url) => {
            if (url.searchParams.get('response_type') === rt)
              url.searchParams.set('response_type', 'code')
            return url
          },
        }),
      }),
    ),
  ]),
  // one sabotage per request of the check the harness sends itself (each a sub-case): each
  // optional parameter refused, and a repeated state taken as one; a server that reads the
  // parameters in order (the reversed order); and a server refusing the id_token_hint of the
  // last part
  'AUTHZ-08': perPart([
    ...(
      [
        ['extra', 'foobar'],
        ['display', 'page'],
        ['display', 'popup'],
        ['ui_locales', 'fr-CA fr en'],
        ['claims_locales', 'fr-CA en'],
        ['acr_values', 'urn:mace:incommon:iap:silver'],
      ] as const
    ).map(([name, value]): Sabotage => ({
      how: `${name}=${value} is refused with invalid_request`,
      expect: new RegExp(
        `^${escapeRegExp(`${name}=${value}`)}: redirected to the client URI .*error=invalid_request`,
      ),
      handlers: refusedWhen((sent) => sent.searchParams.get(name) === value, `${name} refused`),
    })),
    {
      how: 'login_hint is refused with invalid_request',
      expect: /^login_hint=\S+: redirected to the client URI .*error=invalid_request/,
      handlers: refusedWhen((sent) => sent.searchParams.has('login_hint'), 'login_hint refused'),
    },
    {
      how: 'the claims parameter is refused with invalid_request',
      expect: /^claims=\{.*: redirected to the client URI .*error=invalid_request/,
      handlers: refusedWhen((sent) => sent.searchParams.has('claims'), 'claims refused'),
    },
    {
      how: 'a code_challenge_method before its code_challenge is read as absent',
      expect: /^the reversed-order request failed: error=invalid_request/,
      // a parser that reads the query in order and takes a code_challenge_method that comes
      // before its code_challenge as absent
      extend: onRequestOf({ path: '/auth/authorize', method: 'get' }, (request) => {
        const names = [...request.url.searchParams.keys()]
        if (names.indexOf('code_challenge_method') < names.indexOf('code_challenge'))
          delete request.query.code_challenge_method
      }),
    },
    {
      how: 'prompt=none with an id_token_hint is refused invalid_request',
      expect:
        /^the authorization failed with error=invalid_request \(id_token_hint is not supported\)/,
      // a server that refuses the id_token_hint OIDC Core §3.1.2.1 defines: whatever it answered
      // a request with one becomes an invalid_request error redirect
      extend: rewriteLocation({ path: '/auth/authorize' }, (to, request) => {
        if (paramsOf(request).id_token_hint === undefined) return to
        const state = to.searchParams.get('state')
        const iss = to.searchParams.get('iss')
        for (const name of ['code', 'state', 'iss', 'error', 'error_description'])
          to.searchParams.delete(name)
        to.searchParams.set('error', 'invalid_request')
        to.searchParams.set('error_description', 'id_token_hint is not supported')
        if (state !== null) to.searchParams.set('state', state)
        if (iss !== null) to.searchParams.set('iss', iss)
        return to
      }),
    },
    {
      how: 'a repeated state is taken as its first value',
      expect:
        /^two state parameters: expected a redirect to \S+ with error=invalid_request, got HTTP 200/,
      handlers: onAuthorize({
        request: (url) => {
          const [first] = url.searchParams.getAll('state')
          if (first !== undefined) url.searchParams.set('state', first)
          return url
        },
      }),
    },
  ]),
  'AUTHZ-09': {
    how: 'state is cut to 64 characters in the success redirect',
    expect: /^state after decoding: expected /,
    extend: rewriteSuccessRedirect((params) => {
      const state = params.get('state')
      if (state !== null) params.set('state', state.slice(0, 64))
    }),
  },
  'AUTHZ-10': {
    how: 'the token response has an id_token although openid was not requested',
    expect: /^scope=read:documents without openid returned an id_token/,
    handlers: corruptJson(
      '/auth/token',
      (b) => {
        if (typeof b.access_token === 'string' && !('id_token' in b)) b.id_token = 'e30.e30.'
      },
      'all',
    ),
  },
  // one sabotage per scope and per place the grant shows (each scope is a sub-case)
  'AUTHZ-11': [
    {
      how: 'scopes no client is registered for are granted as requested',
      expect: /^scope="openid foo:bar": the token response grants foo:bar/,
      ...grantedBeyondRegistration((scope) => !FIXTURE_SCOPES.has(scope)),
    },
    {
      how: "another application's scopes are granted as requested",
      expect: /^scope="openid api:reports": the token response grants api:reports/,
      ...grantedBeyondRegistration((scope) => FIXTURE_SCOPES.has(scope)),
    },
    {
      how: 'the token response reports only registered scopes; the access token carries all',
      expect: /^scope="openid foo:bar": the access token's scope claim grants foo:bar/,
      // unknown scopes granted from outside, and the token response's scope rewritten on its
      // way out of the reference server
      ...(() => {
        const granted = grantedBeyondRegistration((scope) => !FIXTURE_SCOPES.has(scope))
        return { ...granted, extend: extendAll(granted.extend, tokenResponseScopeAsRegistered) }
      })(),
    },
    {
      how: 'an unknown scope is refused with invalid_request instead of invalid_scope',
      expect: /^scope="openid foo:bar": expected error=invalid_scope, got error=invalid_request/,
      handlers: onAuthorize({
        respond: (real) => {
          const location = real.headers.get('location')
          if (!location?.includes('error=invalid_scope')) return undefined
          const url = new URL(location)
          url.searchParams.set('error', 'invalid_request')
          return redirect(url.toString())
        },
      }),
    },
  ],
  'AUTHZ-12': {
    how: 'the code is issued without the request nonce, so the ID token has none',
    expect: /^nonce in the ID token: expected .*, got null/,
    store: codesKeptAs((code) => ({ ...code, nonce: null })),
  },
  'AUTHZ-13': {
    how: 'a POSTed authorization request is read from the (empty) query string',
    expect: /^the POSTed authorization request did not show the login page/,
    // POST /auth/authorize served as GET, which reads the query (before routing: hapi's onRequest)
    extend: (app) => {
      app.server.ext('onRequest', (request, h) => {
        if (request.path === '/auth/authorize' && request.method === 'post')
          request.setMethod('GET')
        return h.continue
      })
    },
  },
  'AUTHZ-14': {
    how: 'prompt=none is ignored and the login page is shown',
    expect: /^prompt=none without a session: expected a redirect to /,
    handlers: onAuthorize({
      request: (url) => {
        url.searchParams.delete('prompt')
        return url
      },
    }),
  },
  'AUTHZ-15': [
    {
      how: 'prompt=login and max_age are ignored when a session exists',
      expect: /^prompt=login with a live session did not show the login page/,
      extend: onAuthorizationRequest((params) => {
        if (typeof params.prompt === 'string')
          params.prompt = params.prompt
            .split(' ')
            .filter((p) => p !== 'login')
            .join(' ')
        delete params.max_age
      }),
    },
    {
      // the falsy-zero test `if (maxAge && ...)`
      how: 'max_age=0 is taken as no max_age',
      expect: /^max_age=0, 2 s after the login, did not show the login page/,
      extend: onAuthorizationRequest((params) => {
        if (params.max_age === '0') delete params.max_age
      }),
    },
    {
      how: 'prompt=none answers from the session although max_age is exceeded',
      expect: /^prompt=none with max_age=1, 2 s after the login issued a code/,
      extend: onAuthorizationRequest((params) => {
        if (typeof params.prompt === 'string' && params.prompt.split(' ').includes('none'))
          delete params.max_age
      }),
    },
  ],
  'AUTHZ-16': {
    how: 'the cancel button is treated as a failed login',
    expect: /^cancelling did not send the browser back to the client/,
    extend: signInCancelIgnored,
  },
  // one sabotage per request of the check (each a sub-case) and per claim of discovery
  'AUTHZ-17': [
    {
      how: 'request and request_uri are silently ignored',
      expect:
        /^request object by value: expected error=request_not_supported or invalid_request_object/,
      handlers: onAuthorize({
        request: (url) => {
          url.searchParams.delete('request')
          url.searchParams.delete('request_uri')
          return url
        },
      }),
    },
    {
      // the outer request carries no PKCE (the object would): ignored, it is refused for that
      how: 'request_uri is silently ignored',
      expect:
        /^request_uri: expected error=request_uri_not_supported or invalid_request_uri, got error=invalid_request/,
      handlers: onAuthorize({
        request: (url) => {
          url.searchParams.delete('request_uri')
          return url
        },
      }),
    },
    {
      how: 'discovery claims request_parameter_supported while request is refused',
      expect:
        /^request object by value: request_not_supported, yet discovery says request_parameter_supported: true/,
      handlers: corruptJson(DISCOVERY, (b) => {
        b.request_parameter_supported = true
      }),
    },
    {
      how: 'discovery leaves request_uri_parameter_supported out while request_uri is refused',
      expect:
        /^request_uri: discovery request_uri_parameter_supported while request_uri is refused: expected false, got "absent \(defaults to true\)"/,
      handlers: corruptJson(DISCOVERY, (b) => {
        delete b.request_uri_parameter_supported
      }),
    },
  ],
  // one sabotage per invalid request (each a sub-case), each breaking another property of its
  // error redirect: iss, error_description, its characters, state, the error code
  'AUTHZ-18': perPart([
    {
      how: 'error redirects carry iss of another issuer',
      expect: /^response_type=token: iss: expected /,
      handlers: errorRedirectChanged(
        () => true,
        (p) => p.set('iss', 'https://evil.example'),
      ),
    },
    {
      // (error_description is OPTIONAL, RFC 6749 §4.1.2.1: its absence is no failure)
      how: 'the error redirect of prompt=none without a session carries a code',
      expect: /^prompt=none without a session: the error redirect carries code/,
      handlers: errorRedirectChanged(
        (sent) => sent.searchParams.get('prompt') === 'none',
        (p) => p.set('code', 'a-code-beside-the-error'),
      ),
    },
    {
      how: 'the error redirect of a request without code_challenge has a quote in its description',
      expect: /^no code_challenge: error_description has characters outside RFC 6749 App\. A\.8: /,
      handlers: errorRedirectChanged(
        (sent) => !sent.searchParams.has('code_challenge'),
        (p) => p.set('error_description', 'missing "code_challenge"'),
      ),
    },
    {
      how: 'the error redirect of an unknown scope leaves state out',
      expect: /^scope=openid foo:bar: state: expected "s-\S+", got null/,
      handlers: errorRedirectChanged(
        (sent) => sent.searchParams.get('scope') === 'openid foo:bar',
        (p) => p.delete('state'),
      ),
    },
    {
      how: 'the error redirect of prompt=bogus carries an error code of its own',
      expect: /^prompt=bogus: expected error=\S+ or .*, got error=bad_prompt/,
      handlers: errorRedirectChanged(
        (sent) => sent.searchParams.get('prompt') === 'bogus',
        (p) => p.set('error', 'bad_prompt'),
      ),
    },
  ]),
  'AUTHZ-19': {
    how: 'an authorization request without scope is refused with invalid_scope',
    expect: /^an authorization request without scope was refused with error=invalid_scope/,
    // every client registered without default scopes: a request without scope is refused
    store: clientsReadAs((client) => ({ ...client, defaultScopes: [] })),
  },
  // RFC 6749 §3.3 lets the server ignore a scope when the token response's scope says so: what
  // is broken is the client not being told (no scope member, or the dropped value still listed)
  'AUTHZ-20': [
    {
      how: 'unknown scopes are silently dropped (the token response has no scope)',
      expect:
        /^scope="openid no-such:scope": the unknown scope was not refused with invalid_scope, and the token response has no scope member/,
      extend: extendAll(
        unknownScopesDropped,
        tokenResponseScope(() => undefined),
      ),
    },
    {
      how: 'unknown scopes are dropped while the token response still lists them',
      expect:
        /^scope="openid no-such:scope": the unknown scope was not refused with invalid_scope, and the token response still lists it/,
      extend: extendAll(
        unknownScopesDropped,
        tokenResponseScope((scope) => `${scope} no-such:scope`),
      ),
    },
  ],
}

function authz05Sabotages(): Sabotages {
  // the embedded fixtures' redirect URI of the main client, whose variants AUTHZ-05 sends
  const registered = 'https://client.example/callback'
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const parts = redirectVariants(registered).map((variant): Sabotage => ({
    how: `redirect_uri ${variant} is taken for the registered one`,
    expect: new RegExp(`^${escape(`redirect_uri ${variant}`)}: the request was accepted`),
    handlers: onAuthorize({
      request: (url, target) => {
        if (url.searchParams.get('redirect_uri') === variant)
          url.searchParams.set('redirect_uri', mainUri(target))
        return url
      },
    }),
  }))
  const [first, second, ...rest] = parts
  if (!first || !second) throw new Error('AUTHZ-05 has fewer than two redirect_uri variants')
  return [first, second, ...rest]
}
