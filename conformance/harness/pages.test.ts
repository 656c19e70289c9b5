import { describe, expect, test } from 'vitest'
import { CheckFailure } from './expect.ts'
import type { HttpResponse } from './http.ts'
import { expectErrorRedirect } from './pages.ts'

const redirect = (location: string): HttpResponse => ({
  status: 302,
  headers: new Headers({ location }),
  text: '',
  json: undefined,
  url: 'https://idp.test/connect/authorize?client_id=app',
})

const failure = (f: () => unknown): string => {
  try {
    f()
  } catch (err) {
    expect(err).toBeInstanceOf(CheckFailure)
    return (err as Error).message
  }
  return expect.fail('expected a CheckFailure')
}

const client = 'https://client.example/callback'

// blind round 6d, S4: a hash-routed sign-in page's address (/signin#/login?uid=…) was read as
// "the redirect carries a fragment"; only a redirect to the client is an authorization response
describe('expectErrorRedirect', () => {
  test("a redirect to the IdP's own page (with a script page's fragment) is the request accepted, not a fragment of a response", () => {
    const message = failure(() =>
      expectErrorRedirect(
        redirect('/signin#/login?uid=abc'),
        client,
        'a 42-character challenge',
        ['invalid_request'],
        'st',
      ),
    )
    expect(message).toMatch(
      /^a 42-character challenge: redirect target: expected "https:\/\/client\.example\/callback", got "https:\/\/idp\.test\/signin" \(a page of the IdP's own: the request was accepted/,
    )
    expect(message).not.toMatch(/fragment/)
  })

  test('a redirect to the client that carries a fragment still fails on the fragment', () => {
    expect(
      failure(() =>
        expectErrorRedirect(
          redirect(`${client}?error=invalid_request&state=st#x`),
          client,
          'x',
          ['invalid_request'],
          'st',
        ),
      ),
    ).toMatch(/^x: the redirect carries a fragment/)
  })

  test('an error redirect to the client is read', () => {
    const params = expectErrorRedirect(
      redirect(`${client}?error=invalid_request&state=st`),
      client,
      'x',
      ['invalid_request'],
      'st',
    )
    expect(params.get('error')).toBe('invalid_request')
  })
})
