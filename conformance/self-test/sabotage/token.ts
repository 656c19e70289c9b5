import { http, HttpResponse, type HttpHandler } from 'msw'
import type { token } from '../../catalogue/token.ts'
import {
  answerFrom,
  clientsOfEveryGrant,
  corruptTokenJson,
  credentialsFromQuery,
  forward,
  headerPairs,
  perPart,
  rewriteTokenForm,
  type Sabotage,
  type Sabotages,
  type Target,
  TOKEN,
} from './kit.ts'

/** The grants whose responses TOK-01 and TOK-02 read, in the order they read them. */
const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials'] as const

/** Removes one header from every token endpoint answer (of one grant, when given). */
function dropTokenHeader(name: string, grant?: string) {
  return (target: Target): HttpHandler[] => [
    http.post(target.baseUrl + TOKEN, async ({ request }) => {
      const text = await request.text()
      const real = await forward(target, request, { body: text })
      if (grant !== undefined && new URLSearchParams(text).get('grant_type') !== grant)
        return answerFrom(real)
      return new HttpResponse(await real.text(), {
        status: real.status,
        headers: headerPairs(real.headers).filter(([n]) => n !== name),
      })
    }),
  ]
}

/** How to break the target for each TOK-* check. */
export const tokenSabotage: Record<keyof typeof token, Sabotages> = {
  // one sabotage per grant's response (each a sub-case) and per header
  'TOK-01': perPart([
    ...GRANTS.map((grant): Sabotage => ({
      how: `${grant} token responses lack Cache-Control`,
      expect: new RegExp(`^${grant}: Cache-Control null lacks no-store`),
      handlers: dropTokenHeader('cache-control', grant),
    })),
    {
      how: 'token responses lack Pragma',
      expect: /^authorization_code: Pragma null is not no-cache/,
      handlers: dropTokenHeader('pragma'),
    },
  ]),
  // one sabotage per grant's response (each a sub-case) and per property of the response
  'TOK-02': perPart([
    ...GRANTS.map((grant): Sabotage => ({
      how: `${grant} token responses say token_type "mac"`,
      expect: new RegExp(`^${grant}: token_type "mac" is not Bearer`),
      handlers: corruptTokenJson((b, { form }) => {
        if (b.access_token !== undefined && form.get('grant_type') === grant) b.token_type = 'mac'
      }),
    })),
    {
      how: 'client_credentials token responses are served as text/plain',
      expect: /^client_credentials: token response: expected Content-Type application\/json/,
      handlers: (target) => [
        http.post(target.baseUrl + TOKEN, async ({ request }) => {
          const text = await request.text()
          const real = await forward(target, request, { body: text })
          if (new URLSearchParams(text).get('grant_type') !== 'client_credentials')
            return answerFrom(real)
          const headers = headerPairs(real.headers).filter(([n]) => n !== 'content-type')
          return new HttpResponse(await real.text(), {
            status: real.status,
            headers: [...headers, ['content-type', 'text/plain']],
          })
        }),
      ],
    },
    {
      how: 'expires_in is a string',
      expect: /^authorization_code: expires_in "\d+" is not a JSON integer/,
      handlers: corruptTokenJson((b) => {
        if (typeof b.expires_in === 'number') b.expires_in = String(b.expires_in)
      }),
    },
    {
      how: 'expires_in is 0',
      expect: /^authorization_code: expires_in 0 is outside 1 s to one year/,
      handlers: corruptTokenJson((b) => {
        if (typeof b.expires_in === 'number') b.expires_in = 0
      }),
    },
    {
      how: 'refresh responses leave scope out',
      expect: /^refresh_token: scope undefined is not a space-delimited scope string/,
      handlers: corruptTokenJson((b, { form }) => {
        if (form.get('grant_type') === 'refresh_token') delete b.scope
      }),
    },
    {
      how: 'client_credentials responses name a scope the token does not carry',
      expect: /^client_credentials: response scope ".*extra:scope" differs from the access token's/,
      handlers: corruptTokenJson((b, { form }) => {
        if (form.get('grant_type') === 'client_credentials' && typeof b.scope === 'string')
          b.scope = `${b.scope} extra:scope`
      }),
    },
  ]),
  // one sabotage per request of the check (each a sub-case)
  'TOK-03': [
    {
      how: 'the client secret is not verified',
      expect: /^a wrong secret: got tokens \(HTTP 200\)/,
      handlers: rewriteTokenForm((form, target) => {
        if (form.get('client_id') === target.clients.main.id)
          form.set('client_secret', target.clients.main.secret)
      }),
    },
    {
      how: 'an unknown client_id is refused invalid_request',
      expect: /^an unknown client_id: error: expected invalid_client, got "invalid_request"/,
      handlers: corruptTokenJson((b, { form }) => {
        if (b.error === 'invalid_client' && form.get('client_id')?.startsWith('no-such-client'))
          b.error = 'invalid_request'
      }),
    },
    {
      how: 'an empty client secret is taken for a public client',
      expect: /^an empty secret: got tokens \(HTTP 200\)/,
      handlers: rewriteTokenForm((form, target) => {
        if (form.get('client_id') === target.clients.main.id && form.get('client_secret') === '')
          form.set('client_secret', target.clients.main.secret)
      }),
    },
    {
      how: 'a request without a client secret crashes the token endpoint',
      expect: /^no secret: status: expected HTTP 400 or 401, got 500/,
      handlers: corruptTokenJson((b, answer) => {
        if (!answer.form.has('client_secret') && b.error === 'invalid_client') {
          b.error = 'server_error'
          answer.status = 500
        }
      }),
    },
  ],
  'TOK-08': {
    how: 'an unknown client_id is told apart from a wrong secret (client enumeration)',
    expect: /^wrong secret and unknown client answer differently/,
    handlers: corruptTokenJson((b, { form }) => {
      if (b.error === 'invalid_client' && form.get('client_id')?.startsWith('no-such-client'))
        b.error_description = 'no such client'
    }),
  },
  // one sabotage per part of the refusal of a Basic request: its status, its challenge
  'TOK-04': [
    {
      how: 'the 401 to a Basic request has no WWW-Authenticate',
      expect: /^401 to a Basic request without WWW-Authenticate: Basic/,
      handlers: dropTokenHeader('www-authenticate'),
    },
    {
      how: 'a Basic request is refused 400 invalid_request',
      expect: /^status: expected HTTP 401, got 400/,
      handlers: (target) => [
        http.post(target.baseUrl + TOKEN, ({ request }) =>
          request.headers.has('authorization')
            ? HttpResponse.json(
                { error: 'invalid_request', error_description: 'no client authentication' },
                { status: 400 },
              )
            : undefined,
        ),
      ],
    },
  ],
  // one sabotage per sub-case: each is run, so each fails by its own assertion
  'TOK-05': [
    {
      how: 'a Basic header beside body credentials is ignored (the body is used)',
      expect: /^Basic header plus body credentials: tokens were issued/,
      handlers: (target) => [
        http.post(target.baseUrl + TOKEN, async ({ request }) => {
          const text = await request.text()
          if (!request.headers.has('authorization') || !/client_secret=/.test(text))
            return undefined
          const headers = new Headers(request.headers)
          headers.delete('authorization')
          const plain = new Request(request.url, { method: 'POST', headers })
          return answerFrom(await forward(target, plain, { body: text }))
        }),
      ],
    },
    {
      how: 'client credentials in the query string are accepted',
      expect: /^client_id and client_secret in the query string: tokens were issued/,
      extend: credentialsFromQuery,
    },
    {
      how: 'GET /auth/token is served like a POST',
      expect: /^GET \/auth\/token: tokens were issued/,
      handlers: (target) => [
        http.get(target.baseUrl + TOKEN, async ({ request }) => {
          const url = new URL(request.url)
          const headers = new Headers(request.headers)
          headers.set('content-type', 'application/x-www-form-urlencoded')
          const post = new Request(`${url.origin}${url.pathname}`, { method: 'POST', headers })
          return answerFrom(await forward(target, post, { body: url.searchParams.toString() }))
        }),
      ],
    },
    {
      how: 'a JSON body is read like a form',
      expect: /^a JSON body: tokens were issued/,
      handlers: (target) => [
        http.post(target.baseUrl + TOKEN, async ({ request }) => {
          if (!(request.headers.get('content-type') ?? '').includes('json')) return undefined
          const body = (await request.json()) as Record<string, string>
          const headers = new Headers(request.headers)
          headers.set('content-type', 'application/x-www-form-urlencoded')
          const post = new Request(request.url, { method: 'POST', headers })
          return answerFrom(
            await forward(target, post, { body: new URLSearchParams(body).toString() }),
          )
        }),
      ],
    },
    {
      how: 'a repeated form parameter is read as its last value',
      expect: /^grant_type sent twice: tokens were issued/,
      handlers: rewriteTokenForm((form) => {
        for (const name of new Set(form.keys())) form.set(name, form.getAll(name).at(-1) ?? '')
      }),
    },
  ],
  'TOK-06': [
    {
      how: 'a missing grant_type is answered unsupported_grant_type',
      expect: /^no grant_type: error: expected invalid_request, got "unsupported_grant_type"/,
      handlers: corruptTokenJson((b, { form }) => {
        if (!form.has('grant_type') && b.error === 'invalid_request')
          b.error = 'unsupported_grant_type'
      }),
    },
    {
      how: 'unsupported grant types are answered invalid_request',
      expect: /^grant_type=password: error: expected unsupported_grant_type, got "invalid_request"/,
      handlers: corruptTokenJson((b) => {
        if (b.error === 'unsupported_grant_type') b.error = 'invalid_request'
      }),
    },
    {
      how: "a client's registered grant types are not enforced",
      expect:
        /^client_credentials by third-client, which is not registered for it: tokens were issued/,
      store: clientsOfEveryGrant,
    },
  ],
  // one sabotage per property of the tokens: each one's characters, distinct, random
  'TOK-07': [
    {
      how: 'refresh tokens are a counter behind a fixed prefix',
      expect: /^refresh token entropy: refresh tokens carry an estimated \d+ bits \(128 required\)/,
      handlers: (target) => {
        let issued = 0
        return corruptTokenJson((b) => {
          if (typeof b.refresh_token === 'string')
            b.refresh_token = `refresh-token-${String(++issued).padStart(6, '0')}`
        })(target)
      },
    },
    {
      how: 'every code grant returns the first refresh token again',
      expect: /^distinct refresh tokens: only 1 distinct refresh tokens among 20/,
      handlers: (target) => {
        let first: unknown
        return corruptTokenJson((b, { form }) => {
          if (form.get('grant_type') !== 'authorization_code' || b.refresh_token === undefined)
            return
          first ??= b.refresh_token
          b.refresh_token = first
        })(target)
      },
    },
    {
      how: 'refresh tokens carry a non-ASCII character',
      expect: /^refresh_token missing or outside %x20-7E: /,
      handlers: corruptTokenJson((b) => {
        if (typeof b.refresh_token === 'string') b.refresh_token = `${b.refresh_token}é`
      }),
    },
    {
      how: 'access tokens carry a line break',
      expect: /^access_token outside %x20-7E: /,
      handlers: corruptTokenJson((b) => {
        if (typeof b.access_token === 'string') b.access_token = `${b.access_token}\n`
      }),
    },
  ],
}
