import type { Server, ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { assets } from './assets.ts'
import { authorize } from './authorize.ts'
import { discovery } from './discovery.ts'
import { fallback } from './fallback.ts'
import { jwks } from './jwks.ts'
import { login } from './login.ts'
import { token } from './token.ts'

/** The route table: one line per endpoint. */
export const routes = (server: Server, deps: Deps): ServerRoute[] => [
  ...discovery(deps),
  jwks(deps),
  ...authorize(deps),
  login(deps),
  token(deps),
  assets(),
  fallback(server),
]
