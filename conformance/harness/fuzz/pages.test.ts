import { describe, expect, test } from 'vitest'
import type { Http, HttpResponse } from '../http.ts'
import {
  AUTHORIZE_ERRORS,
  encoded,
  expectPageAnswer,
  LONG_MIN,
  overLongEach,
  type PageRequest,
  pageRequest,
  refusable,
  dropped,
  untouched,
} from './pages.ts'

const IDP = 'https://idp.example'
const CLIENT = 'https://client.example/callback'

const answer = (
  status: number,
  headers: Record<string, string> = {},
  text = '',
  url = `${IDP}/auth/authorize`,
): HttpResponse => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status, headers: new Headers(headers), text, json, url }
}

/** An Http whose every request is answered with `next`, recording the URLs asked for. */
const httpAnswering = (next: HttpResponse, asked: string[] = []): Http =>
  ({
    request: (url: string) => {
      asked.push(url)
      return Promise.resolve(next)
    },
  }) as unknown as Http

const html = answer(200, { 'content-type': 'text/html; charset=utf-8' }, '<p>error</p>')
const none = httpAnswering(html)
const verified = { uri: CLIENT, errors: AUTHORIZE_ERRORS, why: 'test' }

describe('the spoilt requests of ROBUST-03', () => {
  const valid = [
    ['client_id', 'c'],
    ['state', 's'],
  ] as const
  const with_ = (spoils: PageRequest['spoils'], method = 'GET'): PageRequest => ({
    method,
    spoils,
    noise: [],
    body: 'form',
  })

  test('an over-long value is sent at its length, every other parameter as it was', () => {
    const raw = encoded(valid, with_([['state', { kind: 'long', length: 3000 }]]))
    const params = new URLSearchParams(raw)
    expect(params.get('client_id')).toBe('c')
    expect(params.get('state')?.length).toBe(3000)
  })

  test('repeated, dropped and empty parameters', () => {
    const raw = encoded(
      valid,
      with_([
        ['client_id', { kind: 'repeated', value: 'x' }],
        ['state', { kind: 'dropped' }],
      ]),
    )
    expect(new URLSearchParams(raw).getAll('client_id')).toEqual(['c', 'x'])
    expect(raw).not.toContain('state')
    expect(encoded(valid, with_([['state', { kind: 'empty' }]]))).toBe('client_id=c&state=')
  })

  test('an odd encoding is sent unescaped, without characters that would split it', () => {
    const raw = encoded(valid, with_([['state', { kind: 'odd-encoded', raw: '%zz&x=1 #' }]]))
    expect(raw).toBe('client_id=c&state=%zzx=1')
  })

  test('GET sends the query, POST a form body, and untouched tells a verified parameter', () => {
    const r = with_([['state', { kind: 'empty' }]], 'POST')
    const post = pageRequest('/auth/authorize', valid, r)
    expect(post.url).toBe('/auth/authorize')
    expect(post.options.body).toBe('client_id=c&state=')
    expect(pageRequest('/auth/authorize', valid, { ...r, method: 'GET' }).url).toBe(
      '/auth/authorize?client_id=c&state=',
    )
    expect(untouched(r, 'client_id')).toBe(true)
    expect(untouched(r, 'state')).toBe(false)
  })

  test('dropped tells a parameter left out altogether, not emptied or sent again as noise', () => {
    const r = with_([['state', { kind: 'dropped' }]], 'GET')
    expect(pageRequest('/auth/authorize', valid, r).url).toBe('/auth/authorize?client_id=c')
    expect(dropped(r, 'state')).toBe(true)
    expect(dropped(r, 'client_id')).toBe(false)
    expect(dropped(with_([['state', { kind: 'empty' }]], 'GET'), 'state')).toBe(false)
    expect(dropped({ ...r, noise: [['state', 'x']] }, 'state')).toBe(false)
  })

  test('every parameter gets over-long cases past 255, at 1,000 and past 2048 characters', () => {
    const cases = overLongEach(['a', 'b'], 'GET')
    const sent = cases.map(([c]) => {
      const [name, spoil] = c.spoils[0] ?? []
      return `${String(name)}:${spoil?.kind === 'long' ? String(spoil.length) : '?'}`
    })
    expect(sent).toEqual([
      'a:256',
      'a:1000',
      `a:${String(LONG_MIN + 2048)}`,
      'b:256',
      'b:1000',
      `b:${String(LONG_MIN + 2048)}`,
    ])
    expect(LONG_MIN).toBeGreaterThan(2048)
  })
})

describe('expectPageAnswer', () => {
  test('a 5xx fails, whatever its body', async () => {
    await expect(
      expectPageAnswer(none, answer(500, { 'content-type': 'text/html' }), IDP, verified, true),
    ).rejects.toThrow(/HTTP 500: a 5xx for a malformed request/)
  })

  test('an HTML page and the JSON error of INTERFACE.md §7 pass; a plain-text error does not', async () => {
    await expectPageAnswer(none, html, IDP, undefined, true)
    const json = answer(
      400,
      { 'content-type': 'application/json' },
      JSON.stringify({ error: 'invalid_request', error_description: 'state is too long' }),
    )
    await expectPageAnswer(none, json, IDP, undefined, true)
    await expect(
      expectPageAnswer(
        none,
        answer(400, { 'content-type': 'text/plain' }, 'Bad'),
        IDP,
        undefined,
        true,
      ),
    ).rejects.toThrow(/neither an HTML page for the user nor an error in the JSON shape/)
    // no page is owed to a method a browser never sends
    await expectPageAnswer(
      none,
      answer(404, { 'content-type': 'text/plain' }),
      IDP,
      undefined,
      false,
    )
  })

  test('a throttle (RFC 6585 §4) or an overload with Retry-After is not judged, never a pass', async () => {
    expect(await expectPageAnswer(none, answer(429), IDP, undefined, true)).toMatch(/HTTP 429/)
    // whatever refusals the request allowed
    expect(await expectPageAnswer(none, answer(429), IDP, undefined, true, [429])).toMatch(
      /HTTP 429/,
    )
    expect(
      await expectPageAnswer(none, answer(503, { 'retry-after': '30' }), IDP, undefined, true),
    ).toMatch(/HTTP 503 with Retry-After/)
    // at a later hop too
    const throttled = httpAnswering(answer(429, {}, '', `${IDP}/login`))
    expect(
      await expectPageAnswer(throttled, answer(302, { location: '/login' }), IDP, undefined, true),
    ).toMatch(/HTTP 429/)
    // a 503 without Retry-After is the server's error
    await expect(expectPageAnswer(none, answer(503), IDP, undefined, true)).rejects.toThrow(
      /HTTP 503: a 5xx/,
    )
    // an answer that judges the request says so
    expect(await expectPageAnswer(none, html, IDP, undefined, true)).toBeUndefined()
  })

  test('a refusal before reading passes only where it answers what was sent', async () => {
    const get = (spoils: PageRequest['spoils'], method = 'GET'): PageRequest => ({
      method,
      spoils,
      noise: [],
      body: 'form',
    })
    const long: PageRequest['spoils'] = [['state', { kind: 'long', length: 5000 }]]
    const empty: PageRequest['spoils'] = [['state', { kind: 'empty' }]]
    expect(refusable(get(long), ['GET', 'POST'])).toEqual([414, 431])
    expect(refusable(get(long, 'POST'), ['GET', 'POST'])).toEqual([413])
    expect(refusable(get(empty, 'PUT'), ['GET', 'POST'])).toEqual([405])
    expect(refusable(get(empty), ['GET', 'POST'])).toEqual([])
    for (const status of [414, 431])
      expect(
        await expectPageAnswer(none, answer(status), IDP, undefined, true, [414, 431]),
      ).toBeUndefined()
    // a bare 405, 413, 414, 415 or 431 to a request it does not answer is no page and no error
    for (const status of [405, 413, 414, 415, 431])
      await expect(
        expectPageAnswer(
          none,
          answer(status),
          IDP,
          undefined,
          true,
          refusable(get(empty), ['GET']),
        ),
      ).rejects.toThrow(/neither an HTML page for the user nor an error in the JSON shape/)
  })

  test('a redirect to an unverified client URI fails; to the verified one only with an error', async () => {
    const to = (location: string) => answer(302, { location })
    await expect(
      expectPageAnswer(none, to(`${CLIENT}?error=invalid_request`), IDP, undefined, true),
    ).rejects.toThrow(
      /redirected the browser to https:\/\/client\.example\/callback, which the request did not verify/,
    )
    await expectPageAnswer(none, to(`${CLIENT}?error=invalid_request&state=s`), IDP, verified, true)
    await expect(
      expectPageAnswer(none, to(`${CLIENT}?error=server_error`), IDP, verified, true),
    ).rejects.toThrow(/error="server_error", not one of/)
    await expect(
      expectPageAnswer(none, to(`${CLIENT}?code=abc`), IDP, verified, true),
    ).rejects.toThrow(/answered with a code or token/)
  })

  test("with the request as sent, a redirect off the IdP fails when the request named its origin or it is a client's, and is not judged otherwise (blind round 4, S1)", async () => {
    const to = (location: string) => answer(302, { location })
    const named = `redirect_uri=${encodeURIComponent('https://evil.example/cb')}&state=s`
    // the request's own URI: an open redirect (RFC 6749 §4.1.2.1)
    await expect(
      expectPageAnswer(none, to('https://evil.example/cb?error=x'), IDP, undefined, true, [], {
        sent: named,
      }),
    ).rejects.toThrow(/redirected the browser to https:\/\/evil\.example\/cb, which the request/)
    // a client's origin is never the IdP's, whatever the request named
    await expect(
      expectPageAnswer(none, to(`${CLIENT}?error=invalid_request`), IDP, undefined, true, [], {
        sent: 'state=s',
        clients: [new URL(CLIENT).origin],
      }),
    ).rejects.toThrow(/which the request did not verify/)
    // an origin nobody named (the provider's own login app, not declared): not judged, not passed
    expect(
      await expectPageAnswer(none, to('https://login.example/u/1'), IDP, undefined, true, [], {
        sent: named,
        clients: [new URL(CLIENT).origin],
      }),
    ).toMatch(
      /https:\/\/login\.example\/u\/1, an origin neither known as the IdP's nor named by the request/,
    )
    // one of the IdP's origins is followed as the IdP's own
    const login = httpAnswering(html)
    expect(
      await expectPageAnswer(
        login,
        to('https://login.example/u/1'),
        new Set([IDP, 'https://login.example']),
        undefined,
        true,
        [],
        { sent: named },
      ),
    ).toBeUndefined()
  })

  test("the IdP's own redirects are followed, a bounded number of hops, each answer judged", async () => {
    const asked: string[] = []
    const broken = httpAnswering(answer(503, {}, '', `${IDP}/login`), asked)
    await expect(
      expectPageAnswer(broken, answer(302, { location: '/login' }), IDP, undefined, true),
    ).rejects.toThrow(/HTTP 503/)
    expect(asked).toEqual([`${IDP}/login`])
    const loop = httpAnswering(answer(302, { location: '/again' }, '', `${IDP}/again`), asked)
    await expectPageAnswer(loop, answer(302, { location: '/again' }), IDP, undefined, true)
    expect(asked.length).toBe(3)
  })
})
