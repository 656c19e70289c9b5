import { http, HttpResponse } from 'msw'
import { describe, expect, test } from 'vitest'
import { registeredChecks } from '../runner.ts'
import { judge } from './judge.ts'
import { proveSabotages } from './prove.ts'
import { partsOf, sabotage } from './sabotage.ts'
import { rotatingRefreshTokens } from './sabotage/refresh.ts'
import {
  appendToBody,
  DISCOVERY,
  extendAll,
  firstUnknownUserStalled,
  knownUserAnsweredLate,
  onAuthorize,
  paramsOf,
  rewriteLoginPage,
  unknownUserRefusedBeforeHashing,
  USER_INFO,
  type BrokenTarget,
} from './sabotage/kit.ts'
import { windowFromNow } from '../../server/test-helpers.ts'

// half of the sabotages; self-test-2.test.ts, a process of its own, runs the other half beside
// (the judge's own tests below use the same target)
const withSabotage = proveSabotages(1, 2)

test('every sabotage of a check says what it breaks in its own words', () => {
  for (const id of registeredChecks()) {
    const hows = partsOf(sabotage[id]).map((s) => s.how)
    expect(new Set(hows).size, `${id}: ${hows.join(' | ')}`).toBe(hows.length)
  }
})

// The judge at work on real runs: DISC-02 broken in ways that make it fail, but not by the
// assertion its sabotage names (the issuer comparison), proves nothing.
describe('self-test: a check failing for the wrong reason is rejected', () => {
  const disc02 = partsOf(sabotage['DISC-02'])[0]
  const wrongReasons: [string, BrokenTarget, RegExp][] = [
    [
      'the target cannot be reached (a network error)',
      { handlers: (t) => [http.get(t.baseUrl + DISCOVERY, () => HttpResponse.error())] },
      /not an assertion|does not match/,
    ],
    [
      'the check fails by another of its assertions (an HTML discovery answer)',
      {
        handlers: (t) => [
          http.get(t.baseUrl + DISCOVERY, () => HttpResponse.html('<p>maintenance</p>')),
        ],
      },
      /does not match the expected assertion/,
    ],
  ]
  test.each(wrongReasons)('DISC-02 failing because %s is rejected', async (_, broken, why) => {
    const result = await withSabotage('DISC-02', broken)
    // the check did fail, yet the self-test must not count it as proof
    expect(result.verdict).not.toBe('pass')
    const problems = judge(result, 'MUST', disc02?.expect ?? /^$/)
    expect(problems.join('; ')).toMatch(why)
  })

  test('DISC-02 failing by its own assertion is accepted (the control)', async () => {
    const result = await withSabotage('DISC-02', disc02 as BrokenTarget)
    expect(judge(result, 'MUST', disc02?.expect ?? /^$/)).toEqual([])
  })
})

// A check with nothing to assert is no pass: RT-10 says nothing of refresh tokens that rotate.
describe('self-test: a check with nothing to assert does not pass', () => {
  test('RT-10 against refresh tokens that rotate is skipped with the reason', async () => {
    const result = await withSabotage('RT-10', rotatingRefreshTokens)
    expect(result.verdict, result.message).toBe('skip')
    expect(result.message).toMatch(/refresh tokens rotate/)
  })
})

// An early throttle is a server's right (OWASP lets an account lock after a few failures):
// LOGIN-07 compares what it could sample and neither warns nor fails for the throttle itself.
describe('self-test: a legitimate early throttle is not a deviation', () => {
  const generous = { limit: 100_000, window: 60 }
  test('LOGIN-07 against a login form that throttles at the third failure is no warning', async () => {
    const result = await withSabotage('LOGIN-07', {
      config: {
        rateLimits: {
          token: generous,
          introspect: generous,
          revoke: generous,
          userinfo: generous,
          // its window starts now: the samples never straddle two windows
          login: windowFromNow(2, 600),
          loginaddress: generous,
          public: generous,
        },
      },
    })
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(/timing not judged: the IdP throttled \(HTTP 429\)/)
  })
})

// A loaded machine stalls a request now and then: one stalled answer of the faster side must not
// hide a real timing gap (it blurs the 4-times rule of the first samples; more samples decide).
describe('self-test: one stalled sample does not hide a timing gap', () => {
  test("LOGIN-07 against a known user answered 4 s late, the first unknown user's answer stalled 2.5 s, warns after more samples", async () => {
    const result = await withSabotage('LOGIN-07', {
      verifyPassword: unknownUserRefusedBeforeHashing,
      extend: extendAll(knownUserAnsweredLate(4000), firstUnknownUserStalled(2500)),
    })
    expect(result.verdict, result.message).toBe('warn')
    expect(result.message).toMatch(/^timing: it tells an unknown user from a wrong password/)
    expect(result.notes.join('\n')).toMatch(/3 more of each kind taken/)
  })
})

// A script of the page that holds the request, encoded, is no injection: LOGIN-06 judges what
// became markup or ran, not where the payload's text appears.
describe('self-test: a login page that embeds the request safely is no injection', () => {
  test('LOGIN-06 against a login page with the request as JSON in a script passes', async () => {
    // the request as a page script would read it: JSON with every < encoded, so that nothing
    // in it ends the script element
    const requestJson = rewriteLoginPage((html, request) => {
      const { client_id: clientId, state } = paramsOf(request)
      const json = JSON.stringify({ client_id: clientId, state: state ?? null })
      return appendToBody(
        html,
        `<script type="application/json" id="request">${json.replace(/</g, '\\u003c')}</script>`,
      )
    })
    const result = await withSabotage('LOGIN-06', { extend: requestJson })
    expect(result.verdict, result.message).toBe('pass')
  })
})

/** A redirect to `location` (msw's own Response class, as the kit's handlers answer). */
const redirectTo = (location: string): Response =>
  new HttpResponse(null, { status: 302, headers: { location } })

/** Every real error redirect, with its query changed by `edit`. */
const errorRedirectEdited = (edit: (p: URLSearchParams) => void): BrokenTarget => ({
  handlers: onAuthorize({
    respond: (real) => {
      const location = real.headers.get('location')
      if (!location?.includes('error=')) return undefined
      const url = new URL(location)
      edit(url.searchParams)
      return redirectTo(url.toString())
    },
  }),
})

// Each check is exactly as strict as its source (issue #29): what the source allows passes
describe('self-test: what the source allows is no deviation', () => {
  test('AUTHZ-03 against an error page served with HTTP 200 passes, noted', async () => {
    const result = await withSabotage('AUTHZ-03', {
      handlers: onAuthorize({
        respond: (real) =>
          real.status >= 400 && real.status < 500
            ? new HttpResponse(real.body, { status: 200, headers: real.headers })
            : undefined,
      }),
    })
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /unknown client_id: the error page was served with HTTP 200, not 4xx/,
    )
  })

  test('AUTHZ-07 against unauthorized_client for an unsupported response_type passes', async () => {
    const result = await withSabotage(
      'AUTHZ-07',
      errorRedirectEdited((p) => {
        if (p.get('error') === 'unsupported_response_type') p.set('error', 'unauthorized_client')
      }),
    )
    expect(result.verdict, result.message).toBe('pass')
  })

  test('AUTHZ-18 against error redirects without the OPTIONAL error_description passes, noted', async () => {
    const result = await withSabotage(
      'AUTHZ-18',
      errorRedirectEdited((p) => p.delete('error_description')),
    )
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(/no error_description \(OPTIONAL\)/)
  })
})

// A negative check proves its positive control first: without it, no pass
describe('self-test: a negative check without its positive control is inconclusive', () => {
  test('UI-08 against a user-info that refuses every token is inconclusive, not a pass', async () => {
    const result = await withSabotage('UI-08', {
      handlers: (t) => [
        http.get(t.baseUrl + USER_INFO, () =>
          HttpResponse.json(
            { error: 'invalid_token', error_description: 'refused' },
            { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } },
          ),
        ),
      ],
    })
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /positive control failed.*user-info refused an access token with openid/,
    )
  })
})
