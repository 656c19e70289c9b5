import { createHash, randomBytes } from 'node:crypto'
import { http, type HttpHandler } from 'msw'
import type { pkce } from '../../catalogue/pkce.ts'
import {
  answerFrom,
  AUTHORIZE,
  forward,
  rewriteTokenForm,
  type Sabotages,
  type Target,
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

/** How to break the target for each PKCE-* check. */
export const pkceSabotage: Record<keyof typeof pkce, Sabotages> = {
  'PKCE-01': {
    how: 'an authorization request without code_challenge is accepted',
    expect:
      /^no code_challenge: expected a redirect to .* with error=invalid_request, got HTTP 200/,
    handlers: rewriteAuthorizeQuery((q) => {
      if (q.has('code_challenge')) return
      q.set('code_challenge', validChallenge())
      q.set('code_challenge_method', 'S256')
    }),
  },
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
  'PKCE-03': {
    how: 'a malformed code_challenge is accepted',
    expect: /^a 42-character challenge: expected a redirect to .* with error=invalid_request/,
    handlers: rewriteAuthorizeQuery((q) => {
      const challenge = q.get('code_challenge')
      if (challenge !== null && !/^[A-Za-z0-9_-]{43}$/.test(challenge))
        q.set('code_challenge', validChallenge())
    }),
  },
  'PKCE-04': {
    how: 'the server hashes a different string than the verifier sent (rotated by one)',
    expect: /^redeeming with the RFC 7636 App\. B verifier: expected HTTP 200, got 400/,
    handlers: rewriteTokenForm((form) => {
      const verifier = form.get('code_verifier')
      if (verifier) form.set('code_verifier', `${verifier.slice(1)}${verifier.charAt(0)}`)
    }),
  },
  'PKCE-05': {
    how: 'a token request without code_verifier skips PKCE',
    expect: /^a token request without code_verifier redeemed the code/,
    faults: ['pkce-verifier-optional'],
  },
  'PKCE-06': {
    how: 'the code_challenge itself is accepted as a plain verifier',
    expect: /^the code_challenge sent as the verifier redeemed the code/,
    faults: ['pkce-plain-fallback'],
  },
  'PKCE-07': {
    how: 'the verifier syntax (43-128 unreserved characters) is not checked',
    expect: /^a 42-character verifier with its matching challenge was accepted/,
    faults: ['pkce-verifier-syntax-unchecked'],
  },
  'PKCE-08': {
    how: 'a code whose redemption failed on PKCE stays redeemable',
    expect:
      /wrong verifiers on one code were all processed: the correct one then still redeemed it/,
    faults: ['pkce-failure-keeps-code'],
  },
}
