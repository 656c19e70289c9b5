import { describe, expect, test } from 'vitest'
import { answered, asideOf, causeOf, classify, cutAtWord } from './check.ts'
import { CheckFailure, ControlFailure } from './expect.ts'

describe('what a thrown error means for the verdict', () => {
  test('a CheckFailure is a conformance failure; a failed control is inconclusive', () => {
    expect(classify(new CheckFailure('x')).kind).toBe('failure')
    expect(classify(new ControlFailure('x')).kind).toBe('control')
  })

  test('a timeout, a network error or a bug of the harness is inconclusive, never a failure', () => {
    expect(classify(new TypeError("Cannot read properties of undefined (reading 'x')")).kind).toBe(
      'harness',
    )
    expect(
      classify(Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' })).kind,
    ).toBe('harness')
    expect(classify(new Error('page.goto: Timeout 15000ms exceeded')).kind).toBe('harness')
  })

  test("openid-client's and jose's errors about the target's answer stay failures, in plain words", () => {
    const challenge = Object.assign(new Error('server responded with a challenge'), {
      code: 'OAUTH_WWW_AUTHENTICATE_CHALLENGE',
      status: 401,
      cause: [{ scheme: 'bearer', parameters: { error: 'invalid_token' } }],
    })
    expect(classify(challenge)).toEqual({
      kind: 'failure',
      message:
        'the IdP refused the request with HTTP 401 and the challenge WWW-Authenticate: bearer error="invalid_token"',
    })
    const body = Object.assign(new Error('server responded with an error'), {
      code: 'OAUTH_RESPONSE_BODY_ERROR',
      status: 400,
      error: 'invalid_grant',
      error_description: 'grant request is invalid',
    })
    expect(classify(body)).toEqual({
      kind: 'failure',
      message: 'the IdP answered HTTP 400 with error=invalid_grant (grant request is invalid)',
    })
    const jose = Object.assign(new Error('signature verification failed'), {
      code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
    })
    expect(classify(jose).kind).toBe('failure')
  })
})

describe('the cause a failure comes down to', () => {
  const exchanges = [{ method: 'GET', url: 'https://idp.example/auth/user-info', status: 401 }]
  test('the same endpoint answering the same status is one cause, however the check said it', () => {
    const a = causeOf(
      'GET user-info: expected HTTP 200, got 401 from https://idp.example/auth/user-info',
      exchanges,
    )
    const b = causeOf(
      'the IdP refused the request with HTTP 401 and the challenge WWW-Authenticate: bearer',
      exchanges,
    )
    expect(a).toBe('GET /auth/user-info answered HTTP 401')
    expect(b).toBe(a)
  })

  test("the exchange the failed expectation judged is the cause, not the check's last one", () => {
    const revoke = {
      method: 'POST',
      url: 'https://idp.example/auth/revoke',
      status: 200,
      responseHeaders: { 'content-type': 'text/plain' },
      responseBody: 'OK',
    }
    const after = [
      revoke,
      { method: 'POST', url: 'https://idp.example/auth/introspect', status: 200 },
    ]
    const message =
      'revocation of the refresh token: revocation of the refresh token: expected Content-Type application/json, got "text/plain"'
    expect(causeOf(message, after, revoke)).toBe(
      'POST /auth/revoke answered HTTP 200: expected Content-Type application/json, got "text/plain"',
    )
    // without the judged exchange, a status names its request among the exchanges until then
    expect(
      causeOf('revocation: expected HTTP 200, got 400 from https://idp.example/auth/revoke', [
        { ...revoke, status: 400, responseBody: '{"error":"unsupported_token_type"}' },
        { method: 'POST', url: 'https://idp.example/auth/introspect', status: 200 },
      ]),
    ).toBe('POST /auth/revoke answered HTTP 400 error=unsupported_token_type')
  })

  test('one request answered one way is one cause: method, path, status and error code', () => {
    const token = {
      method: 'POST',
      url: 'https://idp.example/auth/token',
      status: 400,
      responseBody: '{"error":"invalid_scope","error_description":"x"}',
    }
    const raw = causeOf(
      'access token: expected HTTP 200, got 400 from https://idp.example/auth/token',
      [],
      token,
    )
    const client = causeOf('the IdP answered HTTP 400 with error=invalid_scope (x)', [token])
    const code = causeOf('refresh: error: expected invalid_grant, got "invalid_scope"', [], token)
    expect(raw).toBe('POST /auth/token answered HTTP 400 error=invalid_scope (x)')
    expect(client).toBe(raw)
    expect(code).toBe(raw)
    // another error code is another answer
    expect(
      causeOf('the IdP answered HTTP 400 with error=invalid_grant', [
        { ...token, responseBody: '{"error":"invalid_grant"}' },
      ]),
    ).toBe('POST /auth/token answered HTTP 400 error=invalid_grant')
    // a Bearer challenge's error and an error redirect's error parameter are error codes too
    expect(
      answered({
        method: 'GET',
        url: 'https://idp.example/auth/user-info',
        status: 401,
        responseHeaders: { 'www-authenticate': 'Bearer error="invalid_token"' },
      }),
    ).toBe('GET /auth/user-info answered HTTP 401 error=invalid_token')
    expect(
      answered({
        method: 'GET',
        url: 'https://idp.example/auth/authorize?client_id=x',
        status: 302,
        responseHeaders: { location: 'https://client.example/cb?error=invalid_scope&state=s' },
      }),
    ).toBe('GET /auth/authorize answered HTTP 302 error=invalid_scope')
  })

  // blind round 5: UI-06's "no access token provided" and UI-11's "origin … not allowed" were
  // one cause, "GET /auth/user-info answered HTTP 400 error=invalid_request"
  test('two answers with one status and error code but different descriptions are two causes', () => {
    const at = (description: string) =>
      answered({
        method: 'GET',
        url: 'https://idp.example/auth/user-info',
        status: 400,
        responseBody: JSON.stringify({ error: 'invalid_request', error_description: description }),
      })
    expect(at('no access token provided')).toBe(
      'GET /auth/user-info answered HTTP 400 error=invalid_request (no access token provided)',
    )
    expect(at('origin https://rp.example not allowed for client')).not.toBe(
      at('no access token provided'),
    )
    // its volatile parts are not part of it: one description with two random values is one cause
    expect(at('unknown session 3f9a7c2e1b8d4f6a9c0e2b4d6f8a1c3e')).toBe(
      at('unknown session 9c0e2b4d6f8a1c3e3f9a7c2e1b8d4f6a'),
    )
  })

  test('a cause is cut at a space, never inside a URL', () => {
    const text = `${'word '.repeat(55)}the page "Signed in" at https://idp.example/signin/done`
    const cut = cutAtWord(text, 300)
    expect(cut.length).toBeLessThanOrEqual(302)
    expect(cut).not.toMatch(/https:\s*…?$/)
    expect(cut).toMatch(/ …$/)
    expect(causeOf(text)).not.toMatch(/at https:/)
  })

  test('the same assertion about the same answer is one cause, whatever request named it', () => {
    const revoke = { method: 'POST', url: 'https://idp.example/auth/revoke', status: 200 }
    expect(causeOf('revocation of a garbage token: expected JSON, got text', [], revoke)).toBe(
      causeOf('revocation of the refresh token: expected JSON, got text', [], revoke),
    )
  })

  test('an assertion about no answer is not pinned on the latest exchange, another request', () => {
    const userInfo = [{ method: 'GET', url: 'https://idp.example/auth/user-info', status: 401 }]
    expect(
      causeOf(
        'access token scope claim: expected a space-separated string, got undefined',
        userInfo,
      ),
    ).toBe('access token scope claim: expected a space-separated string, got undefined')
  })

  test('a refusal is a 4xx or an error code; a 5xx is the server failing, a missing 429 the throttle', () => {
    const at = (status: number, responseBody?: string) => ({
      method: 'POST',
      url: 'https://idp.example/auth/token',
      status,
      ...(responseBody ? { responseBody } : {}),
    })
    expect(
      asideOf('x: expected HTTP 400, got 401 from https://idp.example/auth/token', [], at(401)),
    ).toBe('refused')
    expect(
      asideOf(
        'x: expected HTTP 400, got 500 from https://idp.example/auth/token',
        [],
        at(500, '{"error":"server_error"}'),
      ),
    ).toBeUndefined()
    expect(
      asideOf('x: expected HTTP 429, got 401 from https://idp.example/auth/token', [], at(401)),
    ).toBeUndefined()
    expect(
      asideOf('x: expected HTTP 400, got 200 from https://idp.example/auth/token', [], at(200)),
    ).toBeUndefined()
    expect(asideOf('a claim: expected a string, got undefined', [at(401)])).toBeUndefined()
  })
})
