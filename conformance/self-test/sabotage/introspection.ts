import { decodeJwt } from 'jose'
import { http, HttpResponse } from 'msw'
import type { introspection } from '../../catalogue/introspection.ts'
import {
  asMainClient,
  INTROSPECT,
  isJwt,
  onForm,
  replaceJson,
  type Sabotages,
  unauthenticated,
  withJson,
} from './kit.ts'

/** How to break the target for each INTRO-* check. */
export const introspectionSabotage: Record<keyof typeof introspection, Sabotages> = {
  'INTRO-01': {
    how: 'introspection answers a sub that is not the token’s',
    expect: /^introspection: sub \(the token.s sub\): expected /,
    handlers: onForm(INTROSPECT, async ({ forward }) =>
      withJson(await forward(), (b) => {
        if (b.active === true) b.sub = `${String(b.sub)}-other`
      }),
    ),
  },
  'INTRO-02': {
    how: 'refresh tokens always introspect inactive',
    expect: /^introspection of a refresh token: expected active true, got \{"active":false\}/,
    handlers: onForm(INTROSPECT, async ({ form }) =>
      Promise.resolve(isJwt(form.get('token')) ? undefined : HttpResponse.json({ active: false })),
    ),
  },
  'INTRO-03': {
    how: 'introspection decodes an inactive JWT without verifying it and calls it active',
    expect: /^introspection of a truncated token: expected active false, got \{"active":true/,
    handlers: onForm(INTROSPECT, async ({ form, forward }) => {
      const token = form.get('token')
      const real = await forward()
      if (!isJwt(token)) return real
      return replaceJson(real, (b) => {
        if (b.active !== false) return b
        try {
          const claims = decodeJwt(token)
          return { active: true, ...claims, token_type: 'Bearer' }
        } catch {
          return b
        }
      })
    }),
  },
  'INTRO-04': {
    how: 'introspection answers without checking the client secret',
    expect: /^introspection with no client credentials: status: expected HTTP 401, got 200/,
    handlers: unauthenticated(INTROSPECT),
  },
  // one sabotage per sub-case: each is run, so each fails by its own assertion
  'INTRO-05': [
    {
      how: 'introspection without a token is answered 200 {active:false}',
      expect: /^introspection without a token: status: expected HTTP 400, got 200/,
      handlers: onForm(INTROSPECT, async ({ form }) =>
        Promise.resolve(form.has('token') ? undefined : HttpResponse.json({ active: false })),
      ),
    },
    {
      how: 'GET /auth/introspect is answered 200 {active:false}',
      expect:
        /^GET \/auth\/introspect \(RFC 7662 §2\.1: POST\): status: expected HTTP 400 or 404 or 405, got 200/,
      handlers: (target) => [
        http.get(target.baseUrl + INTROSPECT, () => HttpResponse.json({ active: false })),
      ],
    },
    {
      how: 'a token_type_hint that does not match the token makes it inactive',
      expect: /^introspection of the access token hinted as a refresh token: expected active true/,
      handlers: onForm(INTROSPECT, async ({ form }) => {
        const hint = form.get('token_type_hint')
        if (hint === null) return undefined
        const jwt = isJwt(form.get('token'))
        const matches =
          (hint === 'access_token' && jwt) ||
          (hint === 'refresh_token' && !jwt) ||
          (hint !== 'access_token' && hint !== 'refresh_token')
        return Promise.resolve(matches ? undefined : HttpResponse.json({ active: false }))
      }),
    },
    {
      how: 'an unknown token_type_hint makes the token inactive',
      expect: /^introspection of the access token with an unknown hint: expected active true/,
      handlers: onForm(INTROSPECT, async ({ form }) => {
        const hint = form.get('token_type_hint')
        if (hint === null || hint === 'access_token' || hint === 'refresh_token') return undefined
        return Promise.resolve(HttpResponse.json({ active: false }))
      }),
    },
  ],
  'INTRO-06': {
    how: "another client's tokens introspect as if it were their owner",
    expect:
      /^introspection of the access token of another client: expected active false, got \{"active":true/,
    handlers: asMainClient(INTROSPECT),
  },
  'INTRO-07': {
    how: 'introspection answers are cached per token for 5 s',
    expect: /^the revoked access token still introspects active/,
    handlers: (target) => {
      const cache = new Map<string, { at: number; body: unknown }>()
      return onForm(INTROSPECT, async ({ form, forward }) => {
        const token = form.get('token') ?? ''
        const hit = cache.get(token)
        if (hit && performance.now() - hit.at < 5000) return HttpResponse.json(hit.body as object)
        const real = await forward()
        const body: unknown = await real.clone().json()
        cache.set(token, { at: performance.now(), body })
        return real
      })(target)
    },
  },
}
