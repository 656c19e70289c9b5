import type { resourceServer } from '../../catalogue/resource-server.ts'
import { forgeTokens, type Sabotages } from './kit.ts'

/** How to break the target for each RS-* check. */
export const resourceServerSabotage: Record<keyof typeof resourceServer, Sabotages> = {
  'RS-01': {
    how: 'access tokens are re-signed with the ID token type (typ JWT), as an ID token would be',
    expect:
      /^a §5\.6 resource server refused the access token: the token is not an access token \(typ at\+jwt\)/,
    handlers: forgeTokens({ access: (jwt) => void (jwt.header.typ = 'JWT') }),
  },
  // one sabotage per claim the example API's rules read (each rule a sub-case)
  'RS-02': [
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
