import { compactVerify, decodeJwt, decodeProtectedHeader } from 'jose'
import { bypass, http, HttpResponse, type HttpHandler } from 'msw'
import type { userInfo } from '../../catalogue/user-info.ts'
import {
  escapeRegExp,
  type Extend,
  fetchVia,
  FORGERIES,
  forgeryKind,
  type ForgeryKind,
  onForm,
  onRequestOf,
  perPart,
  plainHeaders,
  replaceJson,
  type Sabotage,
  type Sabotages,
  type Target,
  USER_INFO,
  withJson,
} from './kit.ts'

/** The real user-info answer with its headers changed. */
const userInfoHeaders = (mutate: (headers: Headers) => void) =>
  onUserInfo(async (_request, real) => {
    const res = await real()
    const headers = plainHeaders(res)
    mutate(headers)
    return new Response(await res.arrayBuffer(), { status: res.status, headers })
  })

/** A user-info handler for every method: `fn` answers, or undefined lets the request through. */
function onUserInfo(
  fn: (request: Request, real: () => Promise<Response>) => Promise<Response | undefined>,
): (target: Target) => HttpHandler[] {
  return (target) => [
    http.all(target.baseUrl + USER_INFO, ({ request }) =>
      fn(request, async () => {
        const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
        return new Response(await real.arrayBuffer(), {
          status: real.status,
          headers: plainHeaders(real),
        })
      }),
    ),
  ]
}

const bearer = (request: Request): string | undefined =>
  /^\S+\s+(\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1]

/**
 * A user-info that serves a genuine access token past its exp: its 401 for a token that the
 * server's own published keys verify and whose exp has passed (on the server's clock) becomes
 * the token's sub, through hapi's onPreResponse: a server broken from outside its code.
 */
const userInfoAcceptsExpired: Extend = (app) => {
  app.server.ext('onPreResponse', async (request, h) => {
    const response = request.response
    // the refusal, whether still an error or already the server's own 401 answer
    const status = 'isBoom' in response ? response.output.statusCode : response.statusCode
    if (request.path !== USER_INFO || status !== 401) return h.continue
    const header: unknown = request.headers.authorization
    const token = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined
    if (!token) return h.continue
    const now = app.deps.clock()
    try {
      const { kid } = decodeProtectedHeader(token)
      const key = kid ? await app.deps.keys.verificationKey(kid, now) : undefined
      if (!key) return h.continue
      await compactVerify(token, key)
    } catch {
      return h.continue
    }
    const { exp, sub } = decodeJwt(token)
    if (typeof exp !== 'number' || exp > now) return h.continue
    return h.response({ sub }).code(200)
  })
}

/** How to break the target for each UI-* check. */
export const userInfoSabotage: Record<keyof typeof userInfo, Sabotages> = {
  // one sabotage for another sub, one for the answer's type (openid-client's comparison of the
  // sub is the same property seen a second time: the raw comparison fails first)
  'UI-01': [
    {
      how: 'user-info answers another sub',
      expect: /^user-info sub \(the ID token sub\): expected /,
      handlers: onUserInfo(async (_request, real) =>
        withJson(await real(), (b) => {
          if (typeof b.sub === 'string') b.sub = `${b.sub}-other`
        }),
      ),
    },
    {
      how: 'user-info answers its claims as text/plain',
      expect: /^GET user-info: expected Content-Type application\/json, got "text\/plain"/,
      handlers: userInfoHeaders((h) => h.set('content-type', 'text/plain')),
    },
  ],
  // one sabotage for POST refused, one for POST answered with other claims than GET
  'UI-02': [
    {
      how: 'POST to user-info is 405',
      expect: /^POST user-info with an empty body: expected HTTP 200, got 405/,
      handlers: onUserInfo((request) =>
        Promise.resolve(
          request.method === 'POST'
            ? HttpResponse.json(
                { error: 'invalid_request', error_description: 'method not allowed' },
                { status: 405, headers: { allow: 'GET' } },
              )
            : undefined,
        ),
      ),
    },
    {
      how: 'POST to user-info answers the sub only',
      expect: /^POST claims vs GET: expected /,
      handlers: onUserInfo(async (request, real) =>
        request.method === 'POST' ? replaceJson(await real(), (b) => ({ sub: b.sub })) : undefined,
      ),
    },
  ],
  // one sabotage per answer the check judges: the double token's status and its error (a token
  // in the query is UI-12's)
  'UI-03': [
    {
      how: 'a token in the header and the body at once is accepted (the body is ignored)',
      expect:
        /^a token in the Authorization header and the body at once was accepted with HTTP 200 .*RFC 6750 §3\.1: the resource server SHOULD answer 400 invalid_request/,
      // RFC 6750 §3.1: "The resource server SHOULD respond with the HTTP 400"
      level: 'SHOULD',
      handlers: onForm(USER_INFO, async ({ form, forward }) => {
        if (!form.has('access_token')) return undefined
        const without = new URLSearchParams(form)
        without.delete('access_token')
        return forward(without)
      }),
    },
    {
      how: 'a token in the header and the body at once is refused with error=invalid_token',
      expect:
        /^a token in the Authorization header and the body at once: error: expected "invalid_request", got "invalid_token"/,
      handlers: onUserInfo((request) =>
        Promise.resolve(
          request.method === 'POST' && bearer(request) !== undefined
            ? HttpResponse.json({ error: 'invalid_token' }, { status: 400 })
            : undefined,
        ),
      ),
    },
  ],
  // one sabotage per scope (each a sub-case): a claim it does not allow, or one it needs left out
  'UI-04': perPart(
    (
      [
        [
          'openid',
          'returned claims its scopes do not allow: email',
          (b) => (b.email ??= 'leaked@example.com'),
        ],
        [
          'openid profile',
          'returned claims its scopes do not allow: email',
          (b) => (b.email ??= 'leaked@example.com'),
        ],
        [
          'openid email',
          'returned claims its scopes do not allow: name',
          (b) => (b.name ??= 'Leaked Name'),
        ],
        [
          'openid profile email',
          'returned claims its scopes do not allow: phone_number',
          (b) => (b.phone_number ??= '+1 555 0100'),
        ],
        ['openid profile', 'lacks name', (b) => delete b.name],
        ['openid email', 'lacks email_verified', (b) => delete b.email_verified],
      ] as const satisfies readonly (readonly [
        string,
        string,
        (b: Record<string, unknown>) => unknown,
      ])[]
    ).map(([scope, fault, edit]): Sabotage => ({
      how: `user-info for "${scope}": ${fault.replace('returned', 'returns')}`,
      expect: new RegExp(`^user-info for "${escapeRegExp(scope)}": ${escapeRegExp(fault)}`),
      handlers: onUserInfo(async (request, real) => {
        const token = bearer(request)
        const claimed = token ? decodeJwt(token).scope : undefined
        const granted = typeof claimed === 'string' ? claimed : ''
        const same = granted.split(' ').sort().join(' ') === scope.split(' ').sort().join(' ')
        return withJson(await real(), (b) => {
          if (same && typeof b.sub === 'string') edit(b)
        })
      }),
    })),
  ),
  // one sabotage per claim type the check reads
  'UI-05': perPart(
    (
      [
        [
          'email_verified is the string "true"/"false"',
          /^primary user: email_verified must be a JSON boolean, got "true"/,
          (b) => {
            if (typeof b.email_verified === 'boolean') b.email_verified = String(b.email_verified)
          },
        ],
        [
          'updated_at is an ISO date string',
          /^primary user: updated_at must be a JSON number of seconds, got "\d{4}-/,
          (b) => {
            if (typeof b.updated_at === 'number')
              b.updated_at = new Date(b.updated_at * 1000).toISOString()
          },
        ],
        [
          'name is a number',
          /^primary user: name must be a string, got 42/,
          (b) => {
            if ('name' in b) b.name = 42
          },
        ],
        [
          'picture is a path relative to the IdP',
          /^primary user: picture must be an absolute URL, got "\/avatars\/me.png"/,
          (b) => {
            b.picture = '/avatars/me.png'
          },
        ],
      ] as const satisfies readonly (readonly [
        string,
        RegExp,
        (b: Record<string, unknown>) => void,
      ])[]
    ).map(([how, expect, edit]): Sabotage => ({
      how,
      expect,
      handlers: onUserInfo(async (_request, real) => withJson(await real(), edit)),
    })),
  ),
  // one sabotage for the status, one for the challenge
  'UI-06': [
    {
      how: 'a 401 from user-info has no WWW-Authenticate',
      expect: /^user-info without a token: expected WWW-Authenticate: Bearer/,
      handlers: userInfoHeaders((h) => h.delete('www-authenticate')),
    },
    {
      how: 'a user-info request without a token is refused 400 invalid_request',
      expect: /^user-info without a token: expected HTTP 401, got 400/,
      // the 401 is a SHOULD (RFC 6750 §3 examples, RFC 9110 §15.5.2); the challenge is the MUST
      level: 'SHOULD',
      handlers: onUserInfo((request) =>
        Promise.resolve(
          request.headers.has('authorization') || new URL(request.url).search !== ''
            ? undefined
            : HttpResponse.json(
                { error: 'invalid_request', error_description: 'no access token provided' },
                {
                  status: 400,
                  headers: { 'www-authenticate': 'Bearer realm="idp", error="invalid_request"' },
                },
              ),
        ),
      ),
    },
  ],
  // one sabotage per refused token (each a sub-case), and one for the challenge
  'UI-07': perPart([
    {
      how: 'a refused token gets a challenge without error="invalid_token"',
      expect: /^user-info with garbage: expected WWW-Authenticate with error="invalid_token"/,
      handlers: userInfoHeaders((h) => {
        if (h.has('www-authenticate')) h.set('www-authenticate', 'Bearer realm="idp"')
      }),
    },
    ...(Object.keys(FORGERIES) as ForgeryKind[]).map((kind): Sabotage => ({
      how: `user-info accepts ${FORGERIES[kind]}`,
      expect: new RegExp(
        `^user-info with ${escapeRegExp(FORGERIES[kind])}: expected HTTP 401, got 200`,
      ),
      handlers: (target) =>
        onUserInfo(async (request) => {
          const token = bearer(request)
          if (!token || (await forgeryKind(token, target)) !== kind) return undefined
          return HttpResponse.json({
            sub: kind === 'garbage' ? 'someone' : String(decodeJwt(token).sub),
          })
        })(target),
    })),
    {
      how: 'user-info does not honour revocation',
      expect: /^user-info with a revoked token: expected HTTP 401, got 200/,
      handlers: (target) =>
        onUserInfo(async (request, real) => {
          const res = await real()
          const token = bearer(request)
          if (res.status !== 401 || !token || token.split('.').length !== 3) return res
          // a genuine token (the target's keys verify it) that the server refused
          if ((await forgeryKind(token, target)) !== undefined) return res
          return HttpResponse.json({ sub: String(decodeJwt(token).sub) })
        })(target),
    },
    {
      // driven as a deployment: the check waits the token's 20 s lifetime out (the server's
      // clock is not moved), so the refusal it judges is the deployment's own
      how: 'user-info accepts an access token past its exp (driven as a deployment, no clock control)',
      expect: /^user-info with an expired token: expected HTTP 401, got 200/,
      config: { accessTokenTtl: 20 },
      extend: userInfoAcceptsExpired,
      asDeployment: true,
    },
  ]),
  // one sabotage per token without openid (each a sub-case), and one for the challenge
  'UI-08': [
    {
      how: 'a token without openid gets claims (403 turned into 200)',
      expect:
        /^user-info with a client_credentials token: 200, but the token lacks the openid scope/,
      handlers: onUserInfo(async (request, real) => {
        const res = await real()
        const token = bearer(request)
        if (res.status !== 403 || !token) return res
        return HttpResponse.json({ sub: String(decodeJwt(token).sub) })
      }),
    },
    {
      how: "a user's token without openid gets claims (a client's is refused)",
      expect: /^user-info with a token without openid: 200, but the token lacks the openid scope/,
      handlers: onUserInfo(async (request, real) => {
        const res = await real()
        const token = bearer(request)
        if (res.status !== 403 || !token) return res
        const claims = decodeJwt(token)
        if (claims.sub === claims.client_id) return res
        return HttpResponse.json({ sub: String(claims.sub) })
      }),
    },
    {
      how: 'a 403 for a token without openid has no WWW-Authenticate',
      expect: /^user-info with a client_credentials token: expected WWW-Authenticate: Bearer/,
      handlers: userInfoHeaders((h) => h.delete('www-authenticate')),
    },
  ],
  // one sabotage per token that is not an access token (each a sub-case)
  'UI-09': [
    {
      how: 'user-info accepts any JWT of the issuer, ID tokens included',
      expect: /^user-info with the ID token as a bearer token: expected HTTP 401, got 200/,
      handlers: onUserInfo(async (request, real) => {
        const token = bearer(request)
        if (!token || token.split('.').length !== 3) return undefined
        if (decodeProtectedHeader(token).typ === 'at+jwt') return real()
        return HttpResponse.json({ sub: String(decodeJwt(token).sub) })
      }),
    },
    {
      how: 'user-info takes any opaque bearer token for a valid one (refresh tokens included)',
      expect: /^user-info with the refresh token as a bearer token: expected HTTP 401, got 200/,
      handlers: onUserInfo((request) => {
        const token = bearer(request)
        return Promise.resolve(
          token && token.split('.').length !== 3
            ? HttpResponse.json({ sub: 'someone' })
            : undefined,
        )
      }),
    },
  ],
  // one sabotage per spelling of the scheme the server may refuse (each a sub-case)
  'UI-10': perPart(
    (['bearer', 'BEARER'] as const).map((scheme): Sabotage => ({
      how: `the Bearer scheme spelt ${scheme} is refused`,
      expect: new RegExp(
        `^user-info with "Authorization: ${scheme} …": expected HTTP 200, got 401`,
      ),
      handlers: onUserInfo((request) =>
        Promise.resolve(
          (request.headers.get('authorization') ?? '').startsWith(`${scheme} `)
            ? HttpResponse.json(
                { error: 'invalid_token', error_description: 'not a Bearer token' },
                { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } },
              )
            : undefined,
        ),
      ),
    })),
  ),
  // one sabotage per header the check reads, on the preflight and on the answer itself
  'UI-11': [
    {
      how: 'no Access-Control-Allow-Origin on user-info',
      expect: /^CORS preflight: Access-Control-Allow-Origin null/,
      handlers: userInfoHeaders((h) => h.delete('access-control-allow-origin')),
    },
    {
      how: 'the preflight allows "*" headers, never naming Authorization',
      expect: /^CORS preflight: Access-Control-Allow-Headers does not name Authorization/,
      handlers: userInfoHeaders((h) => {
        if (h.has('access-control-allow-headers')) h.set('access-control-allow-headers', '*')
      }),
    },
    {
      how: 'the preflight allows the origin but the GET answer does not',
      expect: /^user-info response: Access-Control-Allow-Origin null/,
      handlers: onUserInfo(async (request, real) => {
        if (request.method === 'OPTIONS') return undefined
        const res = await real()
        const headers = plainHeaders(res)
        headers.delete('access-control-allow-origin')
        return new Response(await res.arrayBuffer(), { status: res.status, headers })
      }),
    },
  ],
  // one sabotage per method (each a sub-case) that takes the token from the query, built on the
  // server (a hapi extension moving it into the Authorization header before the handler reads
  // the request, as a framework's token extractor that reads the query would), and one for an
  // answer that is no refusal
  'UI-12': [
    {
      how: 'user-info takes ?access_token= as the bearer token (GET and POST)',
      expect:
        /^GET user-info with the access token in the URI query \(access_token parameter\): accepted with HTTP 200/,
      extend: queryTokenAsBearer(),
    },
    {
      how: 'user-info takes ?access_token= as the bearer token of a POST only',
      expect:
        /^POST user-info with the access token in the URI query \(access_token parameter\): accepted with HTTP 200/,
      extend: queryTokenAsBearer('post'),
    },
    {
      how: 'a token in the query string is answered HTTP 500',
      expect:
        /^GET user-info with the access token in the URI query \(access_token parameter\): expected a 4xx refusal, got 500/,
      handlers: onUserInfo((request) =>
        Promise.resolve(
          new URL(request.url).searchParams.has('access_token')
            ? HttpResponse.json(
                { error: 'server_error', error_description: 'internal error' },
                { status: 500 },
              )
            : undefined,
        ),
      ),
    },
  ],
}

/**
 * A reference server whose user-info reads `?access_token=` as the bearer token (of `method`'s
 * requests, default any): moved into the Authorization header, and out of the query, before the
 * handler runs.
 */
function queryTokenAsBearer(method?: 'get' | 'post'): Extend {
  return onRequestOf({ path: USER_INFO, ...(method ? { method } : {}) }, (request) => {
    const query = request.query as Record<string, unknown>
    const token = query.access_token
    const headers = request.headers as Record<string, string | undefined>
    if (typeof token !== 'string' || headers.authorization !== undefined) return
    headers.authorization = `Bearer ${token}`
    delete query.access_token
  })
}
