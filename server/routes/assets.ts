import { fileURLToPath } from 'node:url'
import type { ServerRoute } from '@hapi/hapi'

const ASSETS = fileURLToPath(new URL('../views/assets/', import.meta.url))

/** Static assets of the hosted pages, through @hapi/inert. */
export const assets = (): ServerRoute => ({
  method: 'GET',
  path: '/assets/{file}',
  options: {
    handler: { directory: { path: ASSETS, listing: false, index: false, redirectToSlash: false } },
    cache: { expiresIn: 3600 * 1000, privacy: 'public' },
  },
})
