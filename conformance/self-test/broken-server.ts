import type { Request, ResponseObject } from '@hapi/hapi'
import type { App } from '../../server/app.ts'

/**
 * The self-test's broken reference servers, built from outside the server's code (issue 34):
 * the built server is changed through hapi's own composition points (request lifecycle
 * extensions) before it starts, as an operator's plugin could, and never by a switch inside
 * `server/`. A sabotage names one of these as its `extend` (kit.ts re-exports them).
 */
export type Extend = (app: App) => void | Promise<void>

/** One route of the server: its path, and its method (default: any). */
export interface Route {
  readonly path: string
  readonly method?: 'get' | 'post'
}

const isRoute = (request: Request, route: Route): boolean =>
  request.path === route.path && (route.method === undefined || request.method === route.method)

/** Several extensions, applied in order. */
export const extendAll =
  (...parts: readonly Extend[]): Extend =>
  async (app) => {
    for (const part of parts) await part(app)
  }

/**
 * Changes the request of a route after its payload is parsed and before its handler runs
 * (hapi's onPreHandler): what a broken server would read instead of what was sent.
 */
export const onRequestOf =
  (route: Route, change: (request: Request) => void | Promise<void>): Extend =>
  (app) => {
    app.server.ext('onPreHandler', async (request, h) => {
      if (isRoute(request, route)) await change(request)
      return h.continue
    })
  }

/**
 * Changes a route's answer before it is sent (hapi's onPreResponse); errors (Boom) pass as
 * they are unless `errors` is set.
 */
export const onResponseOf =
  (
    route: Route,
    change: (response: ResponseObject, request: Request) => void | Promise<void>,
  ): Extend =>
  (app) => {
    app.server.ext('onPreResponse', async (request, h) => {
      const response = request.response
      if (isRoute(request, route) && !('isBoom' in response && response.isBoom))
        await change(response as ResponseObject, request)
      return h.continue
    })
  }

/** Rewrites the Location of a route's redirects (the URL as the server wrote it). */
export const rewriteLocation = (
  route: Route,
  rewrite: (location: URL, request: Request) => URL | string,
): Extend =>
  onResponseOf(route, (response, request) => {
    const location = response.headers.location
    if (typeof location === 'string') response.location(String(rewrite(new URL(location), request)))
  })

/** Rewrites the HTML of a route's pages (its other answers pass as they are). */
export const rewriteHtml = (
  route: Route,
  rewrite: (html: string, request: Request, response: ResponseObject) => string,
): Extend =>
  onResponseOf(route, (response, request) => {
    const type = response.headers['content-type']
    if (typeof response.source !== 'string' || !String(type ?? '').startsWith('text/html')) return
    // hapi sends `source` as it stands when the response is transmitted
    ;(response as { source: unknown }).source = rewrite(response.source, request, response)
  })
