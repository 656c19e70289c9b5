import { describe, expect, test } from 'vitest'
import { authorizationIsSubject, classify } from './check.ts'
import { codeOf, type AuthorizeResult } from './flows.ts'

// A flow that ended on the provider's error page instead of the client (what a shared session
// used by two checks at once once gave: "interaction session and authentication session
// mismatch"), as `authorize` returns it.
const stuckOnErrorPage = (beforeSubject: boolean, status = 400): AuthorizeResult =>
  ({
    via: 'browser',
    redirectUri: 'https://client.example/callback',
    url: 'https://idp.example/auth/authorize?client_id=c',
    callback: undefined,
    beforeSubject,
    outcome: {
      page: { url: () => 'https://idp.example/auth/authorize/uid' },
      stopped: {
        kind: 'error-page',
        status,
        title: 'oops',
        text: 'interaction session and authentication session mismatch',
      },
    },
  }) as unknown as AuthorizeResult

const thrown = (fn: () => unknown): unknown => {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('nothing was thrown')
}

describe('codeOf: a flow stuck before the check reached its subject', () => {
  test("before the subject (the token endpoint's checks): inconclusive, saying where it stopped", () => {
    const err = thrown(() => codeOf(stuckOnErrorPage(true)))
    expect(classify(err).kind).toBe('harness')
    expect((err as Error).message).toMatch(
      /^stuck before the check's subject: the authorization step never reached https:\/\/client\.example\/callback \(.*HTTP 400.*mismatch/,
    )
  })

  test('when the authorization is the subject: the error page stays a failure', () => {
    const err = thrown(() => codeOf(stuckOnErrorPage(false)))
    expect(classify(err).kind).toBe('failure')
    expect((err as Error).message).toMatch(/^the IdP never redirected to /)
  })

  test('a throttled or unavailable IdP (429, 503) judges nothing, even when the authorization is the subject', () => {
    for (const status of [429, 503])
      for (const beforeSubject of [true, false]) {
        const err = thrown(() => codeOf(stuckOnErrorPage(beforeSubject, status)))
        expect(classify(err).kind).toBe('harness')
        expect((err as Error).message).toMatch(
          new RegExp(
            `^the IdP answered HTTP ${String(status)} on the way to https://client\\.example/callback .*: a throttled or unavailable sign-in judges nothing$`,
          ),
        )
      }
  })

  test('the authorization endpoint and its login page are the subject of AUTHZ-* and LOGIN-* only', () => {
    expect(authorizationIsSubject('AUTHZ-01')).toBe(true)
    expect(authorizationIsSubject('LOGIN-03')).toBe(true)
    for (const id of ['PKCE-05', 'TOK-02', 'SEC-06', 'CODE-09'] as const)
      expect(authorizationIsSubject(id)).toBe(false)
  })
})
