import type { Server, ServerRoute } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { discovery } from './discovery.ts'
import { fallback } from './fallback.ts'
import { jwks } from './jwks.ts'

/** The route table: one line per endpoint. */
export const routes = (server: Server, deps: Deps): ServerRoute[] => [
  ...discovery(deps),
  jwks(deps),
  fallback(server),
]
