import type { Server, ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { assets } from './assets.ts'
import { authorize } from './authorize.ts'
import { discovery } from './discovery.ts'
import { fallback } from './fallback.ts'
import { jwks } from './jwks.ts'
import { login } from './login.ts'
import { branding } from './branding.ts'
import { health } from './health.ts'
import { introspect } from './introspect.ts'
import { logout } from './logout.ts'
import { revoke } from './revoke.ts'
import { token } from './token.ts'
import { userInfo } from './user-info.ts'

/** The route table: one line per endpoint. */
export const routes = (server: Server, deps: Deps): ServerRoute[] => [
  ...discovery(deps),
  jwks(deps),
  ...authorize(deps),
  login(deps),
  token(deps),
  ...userInfo(deps),
  introspect(deps),
  revoke(deps),
  ...logout(deps),
  branding(deps),
  ...health(deps),
  assets(),
  fallback(server),
]
