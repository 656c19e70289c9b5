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
  'RS-02': {
    how: 'every access token claims the admin role',
    expect: /^bob \(viewer\) at the admin route: expected HTTP 403, got 200/,
    handlers: forgeTokens({ access: (jwt) => void (jwt.payload.roles = ['admin']) }),
  },
}
