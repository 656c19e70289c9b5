import { createHash, randomBytes } from 'node:crypto'
import { http, HttpResponse, type HttpHandler } from 'msw'
import type { pkce } from '../../catalogue/pkce.ts'
import {
  answerFrom,
  AUTHORIZE,
  corruptTokenJson,
  escapeRegExp,
  failedRedemptionsKeepCodes,
  forward,
  perPart,
  pkcePlainFallback,
  pkceVerifierOptional,
  pkceVerifierSyntaxUnchecked,
  rewriteTokenForm,
  type Sabotage,
  type Sabotages,
  type Target,
  TOKEN,
} from './kit.ts'

const validChallenge = (): string =>
  createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url')

/**
 * Rewrites the query of raw authorization requests before the real server sees them, so the
 * server behaves as one that fills in or repairs what PKCE parameters the client sent.
 */
function rewriteAuthorizeQuery(mutate: (query: URLSearchParams) => void) {
  return (target: Target): HttpHandler[] => [
    http.get(target.baseUrl + AUTHORIZE, async ({ request }) => {
      const url = new URL(request.url)
      mutate(url.searchParams)
      return answerFrom(await forward(target, request, { url: url.toString() }))
    }),
  ]
}

/**
 * A code redemption with a code_verifier that `accepted` picks, refused by the real server, is
 * answered with tokens instead: the server does not judge that verifier (the tokens are the
 * ones a server that did not would issue; the checks read only that the redemption succeeded).
 */
function redeemsWhenRefused(accepted: (verifier: string) => boolean) {
  return (target: Target): HttpHandler[] => [
    http.post(target.baseUrl + TOKEN, async ({ request }) => {
      const text = await request.text()
      const form = new URLSearchParams(text)
      const verifier = form.get('code_verifier')
      const real = await forward(target, request, { body: text })
      if (verifier === null || real.status !== 400 || !accepted(verifier)) return answerFrom(real)
      return HttpResponse.json(
        { access_token: 'sabotage-token', token_type: 'Bearer', expires_in: 60 },
        { headers: { 'cache-control': 'no-store' } },
      )
    }),
  ]
}

/**
 * The error redirects of raw authorization requests without code_challenge, with their query
 * changed by `change`.
 */
function noChallengeRedirect(change: (params: URLSearchParams) => void) {
  return (target: Target): HttpHandler[] => [
    http.get(target.baseUrl + AUTHORIZE, async ({ request }) => {
      const real = await forward(target, request)
      const location = real.headers.get('location')
      if (new URL(request.url).searchParams.has('code_challenge') || !location?.includes('error='))
        return answerFrom(real)
      const url = new URL(location)
      change(url.searchParams)
      return new HttpResponse(null, {
        status: real.status,
        headers: { location: url.toString(), 'cache-control': 'no-store' },
      })
    }),
  ]
}

/** How to break the target for each PKCE-* check. */
export const pkceSabotage: Record<keyof typeof pkce, Sabotages> = {
  // one sabotage per part of the refusal: a redirect, its error code, its state
  'PKCE-01': [
    {
      how: 'an authorization request without code_challenge is accepted',
      expect:
        /^no code_challenge: expected a redirect to .* with error=invalid_request, got HTTP 200/,
      handlers: rewriteAuthorizeQuery((q) => {
        if (q.has('code_challenge')) return
        q.set('code_challenge', validChallenge())
        q.set('code_challenge_method', 'S256')
      }),
    },
    {
      how: 'an authorization request without code_challenge is refused access_denied',
      expect: /^no code_challenge: expected error=invalid_request, got error=access_denied/,
      handlers: noChallengeRedirect((p) => p.set('error', 'access_denied')),
    },
    {
      how: 'the refusal of a request without code_challenge leaves state out',
      expect: /^no code_challenge: state: expected "[^"]+", got null/,
      handlers: noChallengeRedirect((p) => p.delete('state')),
    },
  ],
  'PKCE-02': [
    {
      how: 'code_challenge_method=plain is accepted',
      expect:
        /^code_challenge_method=plain: expected a redirect to .* with error=invalid_request, got HTTP 200/,
      handlers: rewriteAuthorizeQuery((q) => {
        if (q.get('code_challenge_method') === 'plain') q.set('code_challenge_method', 'S256')
      }),
    },
    {
      how: 'an omitted code_challenge_method is read as S256',
      expect:
        /^code_challenge_method omitted: expected a redirect to .* with error=invalid_request, got HTTP 200/,
      handlers: rewriteAuthorizeQuery((q) => {
        if (!q.has('code_challenge_method')) q.set('code_challenge_method', 'S256')
      }),
    },
    {
      how: 'the method is compared case-insensitively (s256 read as S256)',
      expect:
        /^code_challenge_method=s256: expected a redirect to .* with error=invalid_request, got HTTP 200/,
      handlers: rewriteAuthorizeQuery((q) => {
        if (q.get('code_challenge_method')?.toUpperCase() === 'S256')
          q.set('code_challenge_method', 'S256')
      }),
    },
    {
      how: 'an unknown method is read as S256',
      expect:
        /^code_challenge_method=S512: expected a redirect to .* with error=invalid_request, got HTTP 200/,
      handlers: rewriteAuthorizeQuery((q) => {
        const method = q.get('code_challenge_method')
        if (method !== null && !['plain', 's256'].includes(method))
          q.set('code_challenge_method', 'S256')
      }),
    },
  ],
  // one sabotage per malformed challenge (each a sub-case): the server repairs that one only
  'PKCE-03': perPart(
    (
      [
        ['a 42-character challenge', (c) => /^[\w-]{42}$/.test(c)],
        ['a challenge containing +', (c) => c.includes('+')],
        ['a challenge containing /', (c) => c.includes('/')],
        ['a challenge ending in =', (c) => c.endsWith('=')],
        ['a challenge containing a space', (c) => c.includes(' ')],
      ] as const satisfies readonly (readonly [string, (c: string) => boolean])[]
    ).map(([what, malformed]): Sabotage => ({
      how: `${what} is accepted`,
      expect: new RegExp(
        `^${escapeRegExp(what)}: expected a redirect to .* with error=invalid_request`,
      ),
      handlers: rewriteAuthorizeQuery((q) => {
        const challenge = q.get('code_challenge')
        if (challenge !== null && malformed(challenge)) q.set('code_challenge', validChallenge())
      }),
    })),
  ),
  // one sabotage for the verifier refused, one for a 200 that carries no token
  'PKCE-04': [
    {
      how: 'the server hashes a different string than the verifier sent (rotated by one)',
      expect: /^redeeming with the RFC 7636 App\. B verifier: expected HTTP 200, got 400/,
      handlers: rewriteTokenForm((form) => {
        const verifier = form.get('code_verifier')
        if (verifier) form.set('code_verifier', `${verifier.slice(1)}${verifier.charAt(0)}`)
      }),
    },
    {
      how: 'the redemption with the App. B verifier answers 200 without an access_token',
      expect: /^token response without an access_token: /,
      handlers: corruptTokenJson((b, { form }) => {
        if (form.get('code_verifier') === 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')
          delete b.access_token
      }),
    },
  ],
  // one sabotage for the code redeemed, one for a refusal outside the error shape
  'PKCE-05': [
    {
      how: 'a token request without code_verifier skips PKCE',
      expect: /^a token request without code_verifier redeemed the code/,
      ...pkceVerifierOptional(),
    },
    {
      how: 'a token request without code_verifier crashes the token endpoint',
      expect: /^a token request without code_verifier: status: expected HTTP 400, got 500/,
      handlers: corruptTokenJson((b, answer) => {
        if (answer.form.get('grant_type') !== 'authorization_code') return
        if (answer.form.has('code_verifier') || answer.status === 200) return
        b.error = 'server_error'
        answer.status = 500
      }),
    },
  ],
  // one sabotage per wrong verifier (each a sub-case)
  'PKCE-06': [
    {
      how: 'the verifier is not compared with the challenge',
      expect: /^a random well-formed verifier: redeemed the code \(HTTP 200\)/,
      handlers: redeemsWhenRefused(() => true),
    },
    {
      how: 'the code_challenge itself is accepted as a plain verifier',
      expect: /^the code_challenge sent as the verifier: redeemed the code/,
      ...pkcePlainFallback(),
    },
  ],
  // one sabotage per verifier (each a sub-case): the whole rule unchecked, each malformed
  // verifier accepted on its own, and each boundary length refused
  'PKCE-07': perPart([
    {
      how: 'the verifier syntax (43-128 unreserved characters) is not checked',
      expect: /^a 42-character verifier: accepted with its matching challenge/,
      ...pkceVerifierSyntaxUnchecked(),
    },
    ...(
      [
        ['a 129-character verifier', (v) => /^[\w.~-]{129}$/.test(v)],
        ['a verifier containing +', (v) => v.includes('+')],
        ['a verifier containing /', (v) => v.includes('/')],
        ['a verifier containing =', (v) => v.includes('=')],
        ['a verifier containing a space', (v) => v.includes(' ')],
        ['a verifier containing é', (v) => v.includes('é')],
      ] as const satisfies readonly (readonly [string, (v: string) => boolean])[]
    ).map(([what, malformed]): Sabotage => ({
      how: `${what} is accepted when it matches its challenge`,
      expect: new RegExp(`^${escapeRegExp(what)}: accepted with its matching challenge`),
      handlers: redeemsWhenRefused(malformed),
    })),
    ...([43, 128] as const).map((length): Sabotage => ({
      how: `a ${String(length)}-character verifier is refused`,
      expect: new RegExp(
        `^a ${String(length)}-character verifier: redeeming with its matching S256 challenge: expected HTTP 200, got 400`,
      ),
      handlers: rewriteTokenForm((form) => {
        const verifier = form.get('code_verifier')
        // a wrong verifier of the right syntax: the server refuses it with invalid_grant
        if (verifier?.length === length) form.set('code_verifier', `${verifier.slice(1)}A`)
      }),
    })),
  ]),
  // one sabotage for a wrong verifier accepted, one for unbounded guessing
  'PKCE-08': [
    {
      how: 'a code whose redemption failed on PKCE stays redeemable',
      expect:
        /^\d+ wrong verifiers on one code were all processed: the correct one then still redeemed it/,
      store: failedRedemptionsKeepCodes(),
    },
    {
      how: 'a wrong code_verifier is not compared with the challenge',
      expect: /^a wrong code_verifier redeemed the code/,
      handlers: redeemsWhenRefused(() => true),
    },
  ],
}
