import { describe, expect, test } from 'vitest'
import type { CheckResult, Exchange } from '../harness/types.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import { bodyExcerpt, causeDetail, configNames } from './cause-detail.ts'
import { groupByCause } from './summary.ts'

const exchange = (over: Partial<Exchange>): Exchange => ({
  method: 'POST',
  url: 'https://idp.test/auth/token',
  requestHeaders: {},
  requestBody: 'grant_type=authorization_code&client_id=app-1&client_secret=%5Bredacted%5D',
  status: 401,
  responseHeaders: { 'content-type': 'application/json' },
  responseBody: '{"error":"invalid_client","error_description":"client authentication failed"}',
  error: undefined,
  durationMs: 3,
  ...over,
})

const failed = (id: RequirementId, cause: string, exchanges: Exchange[]): CheckResult => ({
  id,
  ...requirements[id],
  verdict: 'fail',
  message: cause,
  cause,
  notes: [],
  exchanges,
  screenshots: [],
  durationMs: 10,
})

const names = configNames({
  clients: { main: { id: 'app-1' }, service: { id: 'svc' }, other: undefined },
  users: { primary: { username: 'alice' } },
})

const detailOf = (results: CheckResult[]) => {
  const [group] = groupByCause(results)
  if (!group) throw new Error('no group')
  return causeDetail(group, names)
}

describe('the detail under a cause line', () => {
  const refused = 'POST /auth/token answered HTTP 401 error=invalid_client'

  test('a refused client: the status and the error body, and the setting to fix, by its name', () => {
    const d = detailOf([
      failed('TOK-01', refused, [
        exchange({ url: 'https://idp.test/.well-known/jwks.json', method: 'GET', status: 200 }),
        exchange({}),
      ]),
      failed('TOK-02', refused, [exchange({})]),
    ])
    expect(d.answer).toBe(
      'HTTP 401: {"error":"invalid_client","error_description":"client authentication failed"}',
    )
    expect(d.setting).toMatch(
      /^clients\.main\.secret or clients\.main\.id in the target configuration/,
    )
    expect(d.setting).toContain('client_id app-1')
  })

  test('a client the configuration does not name is not given a name it does not have', () => {
    const d = detailOf([
      failed('TOK-01', refused, [exchange({ requestBody: 'client_id=stranger&client_secret=x' })]),
    ])
    expect(d.setting).toMatch(/^clients\.<name>\.secret/)
  })

  test('an assertion about the content of an answer shows the answer but names no setting', () => {
    const cause = `${refused}: expected WWW-Authenticate, got null`
    const d = detailOf([failed('TOK-01', cause, [exchange({})])])
    expect(d.answer).toMatch(/^HTTP 401: /)
    expect(d.setting).toBeUndefined()
  })

  test('a scope refused for client_credentials points at the client scope', () => {
    const cause = 'POST /auth/token answered HTTP 400 error=invalid_scope'
    const x = exchange({
      status: 400,
      requestBody: 'grant_type=client_credentials&client_id=svc&scope=api%3Areports',
      responseBody: '{"error":"invalid_scope"}',
    })
    const d = detailOf([failed('CC-01', cause, [x])])
    expect(d.answer).toBe('HTTP 400: {"error":"invalid_scope"}')
    expect(d.setting).toMatch(/^clients\.service\.scope/)
  })

  test('an error page about the redirect URI shows its text and points at redirectUri', () => {
    const cause = 'GET /auth/authorize answered HTTP 400'
    const x = exchange({
      method: 'GET',
      url: 'https://idp.test/auth/authorize?client_id=app-1&redirect_uri=https%3A%2F%2Fx',
      requestBody: undefined,
      status: 400,
      responseHeaders: { 'content-type': 'text/html' },
      responseBody:
        "<!doctype html><html><head><title>oops</title><style>p{}</style></head><body><h1>oops! something went wrong</h1><script>var a</script><pre>error: invalid_redirect_uri\nerror_description: redirect_uri did not match any of the client's registered redirect_uris</pre></body></html>",
    })
    const d = detailOf([failed('AUTHZ-01', cause, [x])])
    expect(d.answer).toBe(
      "HTTP 400: oops! something went wrong error: invalid_redirect_uri error_description: redirect_uri did not match any of the client's registered redirect_uris",
    )
    expect(d.setting).toMatch(/^clients\.main\.redirectUri/)
  })

  test('an untrusted certificate points at the CA', () => {
    const cause =
      'GET /.well-known/openid-configuration got no answer (UNABLE_TO_VERIFY_LEAF_SIGNATURE)'
    const x = exchange({
      method: 'GET',
      url: 'https://idp.test/.well-known/openid-configuration',
      status: undefined,
      responseBody: undefined,
      error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate',
    })
    const d = detailOf([failed('DISC-01', cause, [x])])
    expect(d.answer).toBe(
      'no answer: UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate',
    )
    expect(d.setting).toMatch(/^ca \(--ca\)/)
  })

  test("a sign-in that came back to the login page points at the users' passwords", () => {
    const cause =
      'the IdP never redirected to https://client.example/cb (page at https://idp.test/login: the IdP showed its login page again after the sign-in: Invalid password)'
    const d = detailOf([failed('CODE-01', cause, [])])
    expect(d.answer).toBeUndefined()
    expect(d.setting).toMatch(/username or password of users\.primary/)
  })

  test('a cause that names no answer and no setting has no detail', () => {
    expect(detailOf([failed('CODE-01', 'scope: openid missing', [exchange({})])])).toEqual({})
  })

  test('a long body is cut, an empty one said so', () => {
    const long = bodyExcerpt({ responseBody: 'x '.repeat(500), responseHeaders: {} })
    expect(long.length).toBeLessThanOrEqual(241)
    expect(long.endsWith('…')).toBe(true)
    expect(bodyExcerpt({ responseBody: '', responseHeaders: {} })).toBe('empty body')
  })
})
