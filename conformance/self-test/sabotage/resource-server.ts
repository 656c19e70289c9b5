import type { resourceServer } from '../../catalogue/resource-server.ts'
import { forgeTokens } from './access-token.ts'
import type { Sabotage } from './kit.ts'

/** How to break the target for each RS-* check. */
export const resourceServerSabotage: Record<keyof typeof resourceServer, Sabotage> = {
  'RS-01': {
    how: 'access tokens are re-signed with the ID token type (typ JWT), as an ID token would be',
    handlers: forgeTokens({ access: (jwt) => void (jwt.header.typ = 'JWT') }),
  },
  'RS-02': {
    how: 'every access token claims the admin role',
    handlers: forgeTokens({ access: (jwt) => void (jwt.payload.roles = ['admin']) }),
  },
}
