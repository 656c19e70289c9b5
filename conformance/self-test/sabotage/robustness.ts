import { bypass, http, HttpResponse } from 'msw'
import type { robustness } from '../../catalogue/robustness.ts'
import { fetchVia, onForm, plainHeaders, replaceJson, type Sabotages } from './kit.ts'

/** How to break the target for each ROBUST-* check. */
export const robustnessSabotage: Record<keyof typeof robustness, Sabotages> = {
  'ROBUST-01': {
    how: 'the revocation endpoint answers every refusal with an HTML 500 page',
    expect: /^\/auth\/revoke: HTTP 500: a 5xx for a malformed request/,
    handlers: (target) => [
      http.all(`${target.baseUrl}/auth/revoke`, async ({ request }) => {
        const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
        if (real.status < 400) {
          return new HttpResponse(await real.arrayBuffer(), {
            status: real.status,
            headers: plainHeaders(real),
          })
        }
        return new HttpResponse('<!doctype html><title>Internal Server Error</title>', {
          status: 500,
          headers: { 'content-type': 'text/html' },
        })
      }),
    ],
  },
  'ROBUST-02': {
    how: 'introspection calls any JWT-shaped token it does not know active',
    expect:
      /^a mutated access token: introspection of the mutated token: expected active false, got \{"active":true/,
    handlers: onForm('/auth/introspect', async ({ form, forward }) => {
      const token = form.get('token') ?? ''
      return replaceJson(await forward(), (body) =>
        body.active === false && token.includes('.')
          ? { active: true, token_type: 'Bearer', client_id: form.get('client_id') }
          : body,
      )
    }),
  },
}
