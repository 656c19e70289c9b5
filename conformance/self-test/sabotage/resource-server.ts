import { decodeJwt } from 'jose'
import { http, HttpResponse, type HttpResponseResolver } from 'msw'
import type { resourceServer } from '../../catalogue/resource-server.ts'
import { forgeTokens, type Sabotages } from './kit.ts'

/**
 * The example API that RS-02 starts on a free loopback port (plain HTTP, unlike the IdP), with
 * one of its routes answered by `resolve` (undefined: the real API answers).
 */
const exampleApi = (path: string, resolve: HttpResponseResolver) => () => [
  http.get(new RegExp(`^http://127\\.0\\.0\\.1:\\d+${path}$`), resolve),
]

/** The org_id of the request's Bearer token, if it has one. */
const orgOf = (request: Request): unknown => {
  const token = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1]
  return token ? decodeJwt(token).org_id : undefined
}

/** How to break the target for each RS-* check. */
export const resourceServerSabotage: Record<keyof typeof resourceServer, Sabotages> = {
  'RS-01': {
    how: 'access tokens are re-signed with the ID token type (typ JWT), as an ID token would be',
    expect:
      /^a §5\.6 resource server refused the access token: the token is not an access token \(typ at\+jwt\)/,
    handlers: forgeTokens({ access: (jwt) => void (jwt.header.typ = 'JWT') }),
  },
  // one sabotage per claim the example API's rules read (each rule a sub-case), and one per rule
  // of the example API that no claim decides: a request without a token, its challenge, and a
  // document of another organisation read by id
  'RS-02': [
    {
      how: 'the example API lists documents to a request without a token',
      expect: /^no token: expected HTTP 401, got 200/,
      handlers: exampleApi('/documents', ({ request }) =>
        request.headers.has('authorization') ? undefined : HttpResponse.json({ documents: [] }),
      ),
    },
    {
      how: 'the example API refuses a request without a token with no Bearer challenge',
      expect: /^no token: a 401 without a Bearer challenge \(RFC 6750 §3\)/,
      handlers: exampleApi('/documents', ({ request }) =>
        request.headers.has('authorization')
          ? undefined
          : HttpResponse.json({ error: 'unauthorized' }, { status: 401 }),
      ),
    },
    {
      how: 'the example API reads a document by id without the tenant check',
      expect: /^bob reading an org-1 document: expected HTTP 403, got 200/,
      handlers: exampleApi('/documents/doc-1', ({ request }) =>
        orgOf(request) === 'org-2'
          ? HttpResponse.json({ id: 'doc-1', org_id: 'org-1', owner: 'alice' })
          : undefined,
      ),
    },
    {
      how: 'every access token claims the admin role',
      expect: /^bob \(viewer\) at the admin route: expected HTTP 403, got 200/,
      handlers: forgeTokens({ access: (jwt) => void (jwt.payload.roles = ['admin']) }),
    },
    {
      how: "alice's access tokens carry the viewer role only",
      expect: /^alice \(admin\) at the admin route: expected HTTP 200, got 403/,
      handlers: forgeTokens({
        access: (jwt) => {
          if (jwt.payload.org_id === 'org-1') jwt.payload.roles = ['viewer']
          else jwt.keep = true
        },
      }),
    },
    {
      how: "alice's access tokens carry bob's org_id",
      expect: /^documents alice \(org-1\) sees: expected "doc-1,doc-2", got "doc-3"/,
      handlers: forgeTokens({
        access: (jwt) => {
          if (jwt.payload.org_id === 'org-1') jwt.payload.org_id = 'org-2'
          else jwt.keep = true
        },
      }),
    },
    {
      how: "bob's access tokens carry alice's org_id",
      expect: /^documents bob \(org-2\) sees: expected "doc-3", got "doc-1,doc-2"/,
      handlers: forgeTokens({
        access: (jwt) => {
          if (jwt.payload.org_id === 'org-2') jwt.payload.org_id = 'org-1'
          else jwt.keep = true
        },
      }),
    },
    {
      how: 'an access token for read:documents carries write:documents too',
      expect: /^deleting with a read-only token: expected HTTP 403, got 204/,
      handlers: forgeTokens({
        access: (jwt) => {
          const scope = String(jwt.payload.scope).split(' ')
          if (scope.includes('write:documents')) jwt.keep = true
          else jwt.payload.scope = [...scope, 'write:documents'].join(' ')
        },
      }),
    },
    {
      how: "bob's access tokens name another subject",
      expect: /^bob deleting his own document: expected HTTP 204, got 403/,
      handlers: forgeTokens({
        access: (jwt) => {
          if (jwt.payload.org_id === 'org-2') jwt.payload.sub = 'someone-else'
          else jwt.keep = true
        },
      }),
    },
  ],
}
