import { decodeJwt, decodeProtectedHeader } from 'jose'
import { bypass, http, HttpResponse } from 'msw'
import type { revocation } from '../../catalogue/revocation.ts'
import {
  asMainClient,
  fetchVia,
  forgeryKind,
  getServedAsPost,
  assumedClient,
  authFailureOf,
  basicWithoutChallenge,
  INTROSPECT,
  isJwt,
  keepsFirstAnswer,
  letsThrough,
  onForm,
  perPart,
  refreshMintsOrphans,
  replaced,
  REVOKE,
  type Sabotage,
  type Sabotages,
  TOKEN,
} from './kit.ts'

/** A revocation answered 200 without reaching the server. */
const swallowed = () => HttpResponse.json({ message: 'the token is no longer active' })

/** An ID token (a JWT not typed at+jwt, as RFC 9068 types access tokens). */
const isIdToken = (token: string | null): boolean => {
  if (!isJwt(token)) return false
  try {
    return decodeProtectedHeader(token).typ !== 'at+jwt'
  } catch {
    return false
  }
}

/** A revocation without a hint or with one of RFC 7009's two. */
const knownHint = (form: URLSearchParams): boolean => {
  const hint = form.get('token_type_hint')
  return hint === null || hint === 'access_token' || hint === 'refresh_token'
}

/** A revocation of a refresh token (not a JWT) hinted as an access token. */
const hintedAsAccess = (form: URLSearchParams): boolean =>
  form.get('token_type_hint') === 'access_token' && !isJwt(form.get('token'))

/** How to break the target for each REV-* check. */
export const revocationSabotage: Record<keyof typeof revocation, Sabotages> = {
  'REV-01': {
    how: 'revoking an access token answers 200 and revokes nothing',
    expect:
      /^introspection of the revoked access token: expected active false, got \{"active":true/,
    handlers: onForm(REVOKE, ({ form }) =>
      Promise.resolve(isJwt(form.get('token')) ? swallowed() : undefined),
    ),
  },
  // one sabotage per part: the revocation's effect, and its answer (INTERFACE.md §4.5)
  'REV-02': [
    {
      how: 'revoking a refresh token answers 200 and revokes nothing',
      expect: /^refresh with the revoked refresh token: status: expected HTTP 400, got 200/,
      handlers: onForm(REVOKE, ({ form }) =>
        Promise.resolve(isJwt(form.get('token')) ? undefined : swallowed()),
      ),
    },
    {
      how: 'revoking a refresh token revokes it but answers 200 with an empty body',
      expect: /^revocation of the refresh token: expected Content-Type application\/json/,
      handlers: onForm(REVOKE, async ({ form, forward }) => {
        if (isJwt(form.get('token'))) return undefined
        const real = await forward()
        if (real.status !== 200) return real
        return new HttpResponse(null, { status: 200 })
      }),
    },
  ],
  // one sabotage per token of the grant and per place its revocation must show
  'REV-03': [
    {
      how: 'access tokens minted by a refresh are not linked to their refresh token',
      expect:
        /^introspection of an access token minted from the refresh token, after revoking it: expected active false/,
      store: refreshMintsOrphans,
    },
    {
      how: 'introspection keeps calling the access tokens of a revoked grant active',
      expect:
        /^introspection of the access token issued with the refresh token, after revoking it: expected active false/,
      handlers: keepsFirstAnswer(INTROSPECT, (_res, body) => body.active === false),
    },
    {
      // the answer's empty body (REV-04's subject) must not hide the cascade that is missing
      how: 'revoking a refresh token answers an empty 200 and revokes nothing',
      expect:
        /^introspection of the access token issued with the refresh token, after revoking it: expected active false/,
      handlers: onForm(REVOKE, ({ form }) =>
        Promise.resolve(
          isJwt(form.get('token')) ? undefined : new HttpResponse(null, { status: 200 }),
        ),
      ),
    },
    {
      how: 'user-info keeps accepting the access tokens of a revoked grant',
      expect:
        /^user-info with the access token issued with the refresh token, after revoking it: expected HTTP 401, got 200/,
      // a genuine token (the target's keys verify it) that the real server refuses is accepted
      handlers: (target) => [
        http.get(target.baseUrl + '/auth/user-info', async ({ request }) => {
          const token = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]
          const real = await fetchVia(target.dispatcher, bypass(request), { redirect: 'manual' })
          if (real.status !== 401 || !token || !isJwt(token)) return real
          if ((await forgeryKind(token, target)) !== undefined) return real
          return HttpResponse.json({ sub: String(decodeJwt(token).sub) })
        }),
      ],
    },
  ],
  // one sabotage per sub-case that a server can break on its own
  'REV-04': [
    {
      how: 'revoking an inactive or unknown token is 400',
      expect: /^revocation of a garbage token: expected HTTP 200, got 400/,
      handlers: onForm(REVOKE, async ({ form, target, forward }) => {
        const check = new URLSearchParams(form)
        check.delete('token_type_hint')
        const probe = await globalThis.fetch(`${target.baseUrl}/auth/introspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: check.toString(),
          dispatcher: target.dispatcher,
        } as RequestInit)
        const state = (await probe.json()) as { active?: unknown }
        if (state.active === false)
          return HttpResponse.json(
            { error: 'invalid_request', error_description: 'the token is not active' },
            { status: 400 },
          )
        return forward()
      }),
    },
    {
      how: 'revocation answers 200 with an empty text/plain body',
      expect: /^revocation of a garbage token: expected Content-Type application\/json/,
      handlers: onForm(REVOKE, async ({ forward }) => {
        const real = await forward()
        return new HttpResponse('', {
          status: real.status,
          headers: { 'content-type': 'text/plain' },
        })
      }),
    },
    {
      how: 'revoking a token a second time is 400',
      expect: /^revocation of the access token \(time 2\): expected HTTP 200, got 400/,
      handlers: (target) => {
        const seen = new Set<string>()
        return onForm(REVOKE, async ({ form, forward }) => {
          const token = form.get('token') ?? ''
          if (!seen.has(token)) {
            seen.add(token)
            return forward()
          }
          return Promise.resolve(
            HttpResponse.json(
              { error: 'invalid_request', error_description: 'the token is already revoked' },
              { status: 400 },
            ),
          )
        })(target)
      },
    },
    {
      how: 'revoking a refresh token is acknowledged but does nothing',
      expect: /^introspection of the revoked refresh token: expected active false/,
      handlers: onForm(REVOKE, async ({ form, forward }) => {
        // refresh tokens are opaque, access tokens JWTs (three dot-separated parts)
        if ((form.get('token') ?? '').split('.').length === 3) return forward()
        return Promise.resolve(HttpResponse.json({ message: 'the token was revoked' }))
      }),
    },
  ],
  // one sabotage per way of failing to authenticate (each a sub-case), one for a refusal that
  // revokes all the same, and one for the challenge to a Basic header
  'REV-05': perPart([
    ...(
      ['no client credentials', 'a client_id without a secret', 'a wrong client secret'] as const
    ).map((way): Sabotage => ({
      how: `revocation with ${way} is carried out`,
      expect: new RegExp(`^revocation with ${way}: status: expected HTTP 400 or 401, got 200`),
      handlers: letsThrough(REVOKE, way),
    })),
    {
      how: 'a revocation without credentials is refused 400 invalid_request',
      expect:
        /^revocation with no client credentials: error=invalid_request \(HTTP 400\) where RFC 6749 §5\.2 says invalid_client/,
      handlers: onForm(REVOKE, async ({ form, request, target }) =>
        Promise.resolve(
          request.headers.has('authorization') ||
            authFailureOf(form, target) !== 'no client credentials'
            ? undefined
            : HttpResponse.json(
                {
                  error: 'invalid_request',
                  error_description: 'no client authentication mechanism provided',
                },
                { status: 400 },
              ),
        ),
      ),
    },
    {
      how: 'a revocation without credentials is refused 401 but carried out',
      expect:
        /^revocation with no client credentials: introspection of the token after a revocation with no client credentials: expected active true/,
      handlers: onForm(REVOKE, async ({ form, forward, request, target }) => {
        if (request.headers.has('authorization')) return undefined
        if (authFailureOf(form, target) !== 'no client credentials') return undefined
        const owner = assumedClient(form, target)
        await forward(replaced(form, { client_id: owner.id, client_secret: owner.secret }))
        return HttpResponse.json(
          { error: 'invalid_client', error_description: 'client authentication failed' },
          { status: 401 },
        )
      }),
    },
    {
      how: 'a Basic header is refused 401 without WWW-Authenticate',
      expect:
        /^\/auth\/revoke with an Authorization: Basic header instead of the body: 401 without WWW-Authenticate/,
      handlers: basicWithoutChallenge(REVOKE),
    },
  ]),
  // one sabotage per kind of token another client tries to revoke
  'REV-06': [
    {
      how: "another client's tokens are revoked as if it were their owner",
      expect:
        /^introspection of the access token after another client revoked it: expected active true/,
      handlers: asMainClient(REVOKE),
    },
    {
      how: "another client's refresh tokens are revoked as if it were their owner",
      expect:
        /^introspection of the refresh token after another client revoked it: expected active true/,
      handlers: onForm(REVOKE, async ({ form, forward, target }) => {
        if (form.get('client_id') !== target.clients.other?.id || isJwt(form.get('token')))
          return undefined
        const main = target.clients.main
        return forward(replaced(form, { client_id: main.id, client_secret: main.secret }))
      }),
    },
    {
      // an answer in the wrong shape must not hide that the token was revoked
      how: "another client's revocation revokes the access token and answers an empty 200",
      expect:
        /^introspection of the access token after another client revoked it: expected active true/,
      handlers: onForm(REVOKE, async ({ form, forward, target }) => {
        if (form.get('client_id') !== target.clients.other?.id) return undefined
        const main = target.clients.main
        await forward(replaced(form, { client_id: main.id, client_secret: main.secret }))
        return new HttpResponse(null, { status: 200 })
      }),
    },
  ],
  // one sabotage per request of the check (each a sub-case) and per assertion its answer meets
  'REV-07': perPart([
    {
      how: 'a revocation without a token is answered 200',
      expect: /^revocation without a token: status: expected HTTP 400, got 200/,
      handlers: onForm(REVOKE, ({ form }) =>
        Promise.resolve(form.has('token') ? undefined : swallowed()),
      ),
    },
    {
      how: 'a revocation without a token is refused unsupported_token_type',
      expect:
        /^revocation without a token: error: expected invalid_request, got "unsupported_token_type"/,
      handlers: onForm(REVOKE, ({ form }) =>
        Promise.resolve(
          form.has('token')
            ? undefined
            : HttpResponse.json(
                { error: 'unsupported_token_type', error_description: 'no token' },
                { status: 400 },
              ),
        ),
      ),
    },
    {
      how: 'GET /auth/revoke is served as the POST its query would be',
      expect:
        /^GET \/auth\/revoke \(RFC 7009 §2\.1: POST\): status: expected HTTP 400 or 404 or 405, got 200/,
      handlers: getServedAsPost(REVOKE),
    },
    {
      how: 'revoking an ID token is refused invalid_request',
      expect:
        /^an ID token: revocation of the ID token: error: expected unsupported_token_type, got "invalid_request"/,
      handlers: onForm(REVOKE, ({ form }) =>
        Promise.resolve(
          isIdToken(form.get('token'))
            ? HttpResponse.json(
                { error: 'invalid_request', error_description: 'not a revocable token' },
                { status: 400 },
              )
            : undefined,
        ),
      ),
    },
    {
      how: 'revoking an ID token revokes the access token it came with',
      expect: /^an ID token: revoking the ID token revoked the access token of the same grant/,
      handlers: (target) => {
        // the access token each ID token was issued with, as the token endpoint answered them
        const accessOf = new Map<string, string>()
        return [
          ...onForm(TOKEN, async ({ forward }) => {
            const real = await forward()
            const body = (await real.clone().json()) as Record<string, unknown>
            if (typeof body.id_token === 'string' && typeof body.access_token === 'string')
              accessOf.set(body.id_token, body.access_token)
            return real
          })(target),
          ...onForm(REVOKE, async ({ form, forward }) => {
            const access = accessOf.get(form.get('token') ?? '')
            return access === undefined ? undefined : forward(replaced(form, { token: access }))
          })(target),
        ]
      },
    },
    {
      how: 'an unknown token_type_hint is refused and the token left active',
      expect:
        /^an unknown hint: revocation of the access token with hint no_such_hint: expected HTTP 200, got 400/,
      handlers: onForm(REVOKE, ({ form }) =>
        Promise.resolve(
          knownHint(form)
            ? undefined
            : HttpResponse.json(
                { error: 'unsupported_token_type', error_description: 'unknown hint' },
                { status: 400 },
              ),
        ),
      ),
    },
    {
      how: 'a revocation with an unknown token_type_hint answers 200 and revokes nothing',
      expect:
        /^an unknown hint: introspection of the access token revoked with hint no_such_hint: expected active false/,
      handlers: onForm(REVOKE, ({ form }) =>
        Promise.resolve(knownHint(form) ? undefined : swallowed()),
      ),
    },
    {
      how: 'a refresh token hinted as an access token is refused',
      expect:
        /^the wrong hint: revocation of the refresh token hinted as an access token: expected HTTP 200, got 400/,
      handlers: onForm(REVOKE, ({ form }) =>
        Promise.resolve(
          hintedAsAccess(form)
            ? HttpResponse.json(
                { error: 'unsupported_token_type', error_description: 'not an access token' },
                { status: 400 },
              )
            : undefined,
        ),
      ),
    },
    {
      how: 'a refresh token hinted as an access token is answered 200 and left active',
      expect:
        /^the wrong hint: introspection of the refresh token revoked with the wrong hint: expected active false/,
      handlers: onForm(REVOKE, ({ form }) =>
        Promise.resolve(hintedAsAccess(form) ? swallowed() : undefined),
      ),
    },
  ]),
}
