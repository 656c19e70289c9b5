import { http, HttpResponse, type HttpHandler } from 'msw'
import type { token } from '../../catalogue/token.ts'
import {
  answerFrom,
  corruptTokenJson,
  forward,
  headerPairs,
  rewriteTokenForm,
  type Sabotages,
  type Target,
  TOKEN,
} from './kit.ts'

/** Removes one header from every token endpoint answer. */
function dropTokenHeader(name: string) {
  return (target: Target): HttpHandler[] => [
    http.post(target.baseUrl + TOKEN, async ({ request }) => {
      const real = await forward(target, request, { body: await request.text() })
      return new HttpResponse(await real.text(), {
        status: real.status,
        headers: headerPairs(real.headers).filter(([n]) => n !== name),
      })
    }),
  ]
}

/** How to break the target for each TOK-* check. */
export const tokenSabotage: Record<keyof typeof token, Sabotages> = {
  'TOK-01': {
    how: 'token responses lack Cache-Control',
    expect: /^authorization_code: Cache-Control null lacks no-store/,
    handlers: dropTokenHeader('cache-control'),
  },
  'TOK-02': {
    how: 'token responses say token_type "mac"',
    expect: /^authorization_code: token_type "mac" is not Bearer/,
    handlers: corruptTokenJson((b) => {
      if (b.access_token !== undefined) b.token_type = 'mac'
    }),
  },
  'TOK-03': [
    {
      how: 'the client secret is not verified',
      expect: /^a wrong secret got tokens \(HTTP 200\)/,
      handlers: rewriteTokenForm((form, target) => {
        if (form.get('client_id') === target.clients.main.id)
          form.set('client_secret', target.clients.main.secret)
      }),
    },
    {
      how: 'an unknown client_id is told apart from a wrong secret (client enumeration)',
      expect: /^wrong secret and unknown client answer differently/,
      handlers: corruptTokenJson((b, { form }) => {
        if (b.error === 'invalid_client' && form.get('client_id')?.startsWith('no-such-client'))
          b.error_description = 'no such client'
      }),
    },
  ],
  'TOK-04': {
    how: 'the 401 to a Basic request has no WWW-Authenticate',
    expect: /^401 to a Basic request without WWW-Authenticate: Basic/,
    handlers: dropTokenHeader('www-authenticate'),
  },
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
      faults: ['client-credentials-in-query-accepted'],
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
      faults: ['grant-types-unenforced'],
    },
  ],
  'TOK-07': {
    how: 'refresh tokens are a counter behind a fixed prefix',
    expect: /^refresh tokens carry an estimated \d+ bits \(128 required\)/,
    handlers: (target) => {
      let issued = 0
      return corruptTokenJson((b) => {
        if (typeof b.refresh_token === 'string')
          b.refresh_token = `refresh-token-${String(++issued).padStart(6, '0')}`
      })(target)
    },
  },
}
