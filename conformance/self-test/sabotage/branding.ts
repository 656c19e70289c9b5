import { http, type HttpHandler } from 'msw'
import type { branding } from '../../catalogue/branding.ts'
import { BRANDING, type Json, relay, type Sabotages, type Target } from './kit.ts'

/** The real branding answers with their JSON body changed (successful ones only). */
const editRecord =
  (mutate: (body: Json, target: Target) => void) =>
  (target: Target): HttpHandler[] => [
    http.get(target.baseUrl + BRANDING, async ({ request }) => {
      const res = await relay(target, request)
      if (res.status !== 200) return res
      const body = (await res.json()) as Json
      mutate(body, target)
      return new Response(JSON.stringify(body), {
        status: 200,
        headers: new Headers([...res.headers]),
      })
    }),
  ]

/** How to break the target for each BRAND-* check. */
export const brandingSabotage: Record<keyof typeof branding, Sabotages> = {
  'BRAND-01': {
    how: 'the branding record lacks terms_of_service_url',
    expect: /^fields of the branding record of conformance-client: expected exactly /,
    handlers: editRecord((b) => delete b.terms_of_service_url),
  },
  'BRAND-02': {
    how: 'brand_color given as a CSS name',
    expect: /^branding of conformance-client: brand_color must be #RRGGBB, got "blue"/,
    handlers: editRecord((b) => (b.brand_color = 'blue')),
  },
  'BRAND-03': {
    how: 'branding errors served as an HTML page',
    expect: /^error body: expected Content-Type application\/json, got "text\/html/,
    handlers: (target) => [
      http.get(target.baseUrl + BRANDING, async ({ request }) => {
        const res = await relay(target, request)
        if (res.status < 400) return res
        const headers = new Headers([...res.headers])
        headers.set('content-type', 'text/html; charset=utf-8')
        const page = '<!doctype html><title>Not found</title><h1>Not found</h1>'
        return new Response(page, { status: res.status, headers })
      }),
    ],
  },
  'BRAND-04': {
    how: 'the branding record carries the client secret',
    expect: /^branding of conformance-client carries "client_secret"/,
    handlers: editRecord((b, target) => (b.client_secret = target.clients.main.secret)),
  },
}
