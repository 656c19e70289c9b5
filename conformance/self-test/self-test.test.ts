import { randomBytes } from 'node:crypto'
import { http, HttpResponse } from 'msw'
import { describe, expect, test } from 'vitest'
import { registeredChecks } from '../runner.ts'
import type { RequirementId } from '../requirements.ts'
import { judge } from './judge.ts'
import { proveSabotages } from './prove.ts'
import { partsOf, sabotage } from './sabotage.ts'
import { rotatingRefreshTokens } from './sabotage/refresh.ts'
import {
  appendToBody,
  DISCOVERY,
  extendAll,
  failedSignInRedirected,
  INTROSPECT,
  isJwt,
  LOGIN_FAILED,
  onAuthorize,
  onForm,
  onResponseOf,
  paramsOf,
  plantedSessionEndedAndKept,
  readableCookieAtSignIn,
  replaceJson,
  rewriteLoginPage,
  scriptSignIn,
  REVOKE,
  relay,
  rewriteSuccessRedirect,
  TOKEN,
  USER_INFO,
  withJson,
  type BrokenTarget,
} from './sabotage/kit.ts'
import { unknownScopesDropped } from './sabotage/authorize.ts'
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

// Against a deployment an access token is waited past its exp (accessTokenLifetime), not aged
// by the embedded clock: a sound server passes, its refusal seen after the wait.
describe('self-test: an expired access token is waited out against a deployment', () => {
  test('INTRO-03 against a sound server driven as a deployment with 20-s access tokens passes, after the wait', async () => {
    const result = await withSabotage('INTRO-03', {
      config: { accessTokenTtl: 20 },
      asDeployment: true,
    })
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /an expired access token: presented \d+ s after its expiry \(waited \d+ s; accessTokenLifetime 20 s\)/,
    )
  })
})

// OIDC Core §3.1.2.6: consent_required answers prompt=none for a signed-in user who must still
// consent: a session the logout checks see alive, not an unexpected error (blind round 4, S7)
describe('self-test: prompt=none answered consent_required shows a live session', () => {
  test('LOGOUT-07 against an OP answering prompt=none with consent_required while signed in passes, and notes it', async () => {
    const result = await withSabotage('LOGOUT-07', {
      extend: rewriteSuccessRedirect((params, request) => {
        const prompt = (request.query as Record<string, unknown>).prompt
        if (typeof prompt !== 'string' || !prompt.split(' ').includes('none')) return
        params.delete('code')
        params.set('error', 'consent_required')
      }),
    })
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /prompt=none answered error=consent_required, an answer for a signed-in user \(OIDC Core §3\.1\.2\.6\): the session is alive/,
    )
  })
})

// RFC 9207's MUSTs bind a server that supports it: one that neither sends iss nor advertises it
// is not judged by them at MUST, nor passed on a mix-up defense it does not have.
describe('self-test: a provider without RFC 9207 is skipped, not judged by it', () => {
  test('SEC-03 against a provider that neither sends iss nor advertises it is skipped with the reason', async () => {
    const result = await withSabotage('SEC-03', {
      extend: extendAll(
        rewriteSuccessRedirect((params) => params.delete('iss')),
        // the server builds a fresh document for each request: this one loses the member
        onResponseOf({ path: '/.well-known/openid-configuration' }, (response) => {
          delete (response.source as Record<string, unknown>)
            .authorization_response_iss_parameter_supported
        }),
      ),
    })
    expect(result.verdict, result.message).toBe('skip')
    expect(result.message).toMatch(/^the provider does not support RFC 9207/)
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

// A provider may answer a failed sign-in by a redirect to a page that shows the message (post,
// redirect, get): LOGIN-07 compares that page, and what changes on every try (a reference
// number, the redirect's one-time key) tells no user name from another (issue 30).
describe('self-test: one generic page after a redirect is not a deviation', () => {
  test('LOGIN-07 against failed sign-ins redirected to one message with a fresh reference each time passes', async () => {
    const result = await withSabotage('LOGIN-07', {
      extend: failedSignInRedirected(() => ({
        message: `${LOGIN_FAILED} Reference ${randomBytes(4).toString('hex')}.`,
      })),
    })
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /\(1 word\(s\) of the page, 1 part\(s\) of the redirect\): those were left out/,
    )
  })
})

// A login page that signs in by script (a JSON fetch) is judged on that request, replayed and
// tampered with as the browser sent it (issue 29): against a sound server behind it, the
// checks pass, and say they replayed the script's call, so the sabotages with a script sign-in
// prove the script's path and not the form's.
describe('self-test: a login page that signs in by script is judged on its own request', () => {
  const scriptCall =
    /the script's fetch\/XHR call to \/auth\/login-json|script's call to \S+\/auth\/login-json, answered HTTP 200/
  test.each(['LOGIN-03', 'LOGIN-04', 'LOGIN-05', 'LOGIN-07'] as const)(
    "%s against a sound server behind a script sign-in passes, on the script's request",
    async (id) => {
      const result = await withSabotage(id, { extend: scriptSignIn() })
      expect(result.verdict, result.message).toBe('pass')
      expect(result.notes.join('\n')).toMatch(scriptCall)
    },
  )
})

// SEC-07 judges the cookies that carry the session (issue 30): a provider that also sets, at
// sign-in, a cookie scripts must read (a double-submit CSRF token) is not failed for its flags.
describe('self-test: a readable cookie beside the session is not the session', () => {
  test('SEC-07 against a server that sets a non-HttpOnly CSRF cookie at sign-in passes', async () => {
    const result = await withSabotage('SEC-07', { extend: readableCookieAtSignIn })
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /the cookie XSRF-TOKEN is not HttpOnly \(it does not carry the session\)/,
    )
  })
  test('SEC-07 against a server that keeps the planted value but ends its session passes', async () => {
    const result = await withSabotage('SEC-07', { extend: plantedSessionEndedAndKept })
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /still holds the planted value of \S+, but the attacker's copy of it no longer carries a session: not fixation/,
    )
  })
})

// The harness asks for no interaction it does not need (issue 29, item 2): prompt=consent only
// where a check needs offline_access honoured (OIDC Core §11), and a consent page it then cannot
// answer leaves that check inconclusive, saying the suite asked for it.
describe('self-test: the harness sends prompt=consent only where a check needs it', () => {
  // a page no interaction answers, shown for every authorization request with prompt=consent
  const unanswerableConsent: BrokenTarget = {
    extend: (app) => {
      app.server.ext('onPreHandler', (request, h) =>
        request.path === '/auth/authorize' &&
        typeof request.query.prompt === 'string' &&
        /\bconsent\b/.test(request.query.prompt)
          ? h
              .response('<!doctype html><title>Pick a colour</title><p>Which colour?</p>')
              .type('text/html')
              .takeover()
          : h.continue,
      )
    },
  }
  test('CODE-01, which asks offline_access among other scopes, sends no prompt and passes', async () => {
    const result = await withSabotage('CODE-01', unanswerableConsent)
    expect(result.verdict, result.message).toBe('pass')
  })
  test('RT-01, which needs a refresh token, asks prompt=consent and is inconclusive at a page it cannot answer, saying why', async () => {
    const result = await withSabotage('RT-01', unanswerableConsent)
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /could not get past "Pick a colour" .*prompt=consent, which offline_access needs \(OIDC Core §11\)/,
    )
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

// blind round 5 (issue 29 item 11: endpoints come from discovery): RS-01 fetched the key set
// at INTERFACE.md's fixed path and FAILed 'the access token is malformed' when it was not there
describe('self-test: RS-01 verifies with the key set discovery advertises', () => {
  const moved = '/keys/moved-jwks.json'
  const jwksMoved: BrokenTarget = {
    handlers: (t) => [
      http.get(t.baseUrl + DISCOVERY, async ({ request }) =>
        withJson(await relay(t, request), (body) => {
          body.jwks_uri = t.baseUrl + moved
        }),
      ),
      http.get(t.baseUrl + moved, () =>
        relay(t, new Request(`${t.baseUrl}/.well-known/jwks.json`)),
      ),
      http.get(t.baseUrl + '/.well-known/jwks.json', () =>
        HttpResponse.json({ error: 'not_found' }, { status: 404 }),
      ),
    ],
  }
  test('RS-01 against a jwks_uri away from the interface path (which answers 404) passes', async () => {
    const result = await withSabotage('RS-01', jwksMoved)
    expect(result.verdict, result.message).toBe('pass')
  })
})

// blind round 6d, S3: TOK-06 failed on its control (third-client's credentials, tried at an
// introspection endpoint that took client_secret_basic only). The control now authenticates at
// the token endpoint, as the request it stands for; refused there, it is inconclusive, and the
// grant-type sub-cases before it still stand
describe('self-test: TOK-06 judges grant-type errors, and its unauthorized_client control is inconclusive when refused', () => {
  // the token endpoint refuses every request of third-client (TOK-06's clients.codeOnly)
  const thirdClientRefused = onForm(TOKEN, ({ form, forward }) =>
    form.get('client_id') === 'third-client'
      ? Promise.resolve(
          HttpResponse.json(
            { error: 'invalid_client', error_description: 'refused' },
            { status: 401 },
          ),
        )
      : forward(),
  )
  test('TOK-06 against an introspection refusing every client still passes (its control is at the token endpoint)', async () => {
    const result = await withSabotage('TOK-06', {
      handlers: onForm(INTROSPECT, () =>
        Promise.resolve(HttpResponse.json({ error: 'invalid_client' }, { status: 401 })),
      ),
    })
    expect(result.verdict, result.message).toBe('pass')
  })
  test("TOK-06 against a token endpoint refusing the code-only client's credentials is inconclusive, naming its control", async () => {
    const result = await withSabotage('TOK-06', { handlers: thirdClientRefused })
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /positive control failed.*control: third-client redeeming a code that was never issued: expected HTTP 400 invalid_grant/,
    )
  })
  test('TOK-06 with that control refused and an unsupported grant answered invalid_request fails on the grant, the rest inconclusive', async () => {
    const result = await withSabotage('TOK-06', {
      handlers: onForm(TOKEN, ({ form, forward }) =>
        form.get('client_id') === 'third-client'
          ? Promise.resolve(HttpResponse.json({ error: 'invalid_client' }, { status: 401 }))
          : form.get('grant_type') === 'password'
            ? Promise.resolve(
                HttpResponse.json(
                  { error: 'invalid_request', error_description: 'refused' },
                  { status: 400 },
                ),
              )
            : forward(),
      ),
    })
    expect(result.verdict, result.message).toBe('fail')
    expect(result.message).toMatch(/^grant_type=password: error: expected unsupported_grant_type/)
    expect(result.more?.join('\n')).toMatch(/the rest was inconclusive: control: third-client/)
  })
})

// RFC 6749 §3.3: the server MAY ignore a requested scope, and MUST then say what it granted in
// the token response's scope: a drop said so is no silent drop (blind round 6d)
test("AUTHZ-20 against a server that ignores unknown scopes and says so in the token response's scope passes, noting it", async () => {
  const result = await withSabotage('AUTHZ-20', { extend: unknownScopesDropped })
  expect(result.verdict, result.message).toBe('pass')
  expect(result.notes.join('\n')).toMatch(
    /scope="openid no-such:scope" was accepted and no-such:scope ignored; the token response's scope "openid" tells/,
  )
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
  // the blind provider's shape (issue 29 item 8): a user-info that refuses every token, an
  // introspection that calls every JWT access token inactive, a revocation that revokes but
  // answers 200 with an empty text/plain body (RFC 7009 §2.2 allows it; INTERFACE.md §4.5 does not)
  const refusesEveryToken: BrokenTarget = {
    handlers: (t) => [
      ...[http.get, http.post].map((method) =>
        method(t.baseUrl + USER_INFO, () =>
          HttpResponse.json(
            { error: 'invalid_token', error_description: 'refused' },
            { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } },
          ),
        ),
      ),
      ...onForm(INTROSPECT, async ({ form, forward }) =>
        isJwt(form.get('token')) ? HttpResponse.json({ active: false }) : forward(),
      )(t),
      ...onForm(REVOKE, async ({ forward }) => {
        await forward()
        return new HttpResponse('', { status: 200, headers: { 'content-type': 'text/plain' } })
      })(t),
    ],
  }
  const controls: [RequirementId, RegExp][] = [
    ['UI-07', /user-info with the genuine token: expected HTTP 200, got 401/],
    ['UI-09', /user-info with the access token: expected HTTP 200, got 401/],
    ['UI-10', /user-info with "Authorization: Bearer …": expected HTTP 200, got 401/],
    // blind round 5: UI-11 warned 'user-info with an Origin: expected 200, got 401' (UI-01's cause)
    ['UI-11', /user-info with the access token without an Origin: expected HTTP 200, got 401/],
    [
      'ROBUST-02',
      /user-info with the unmutated user token before the mutations: expected HTTP 200, got 401/,
    ],
    ['INTRO-03', /introspection of the genuine access token: expected active true/],
    ['INTRO-07', /introspection of a fresh token: expected active true/],
    [
      'REV-01',
      /the access token neither introspected active .* nor was accepted by user-info before revocation/,
    ],
    [
      'REV-03',
      /before the revocation the access token issued with the refresh token introspected inactive/,
    ],
  ]
  for (const [id, reason] of controls)
    test(`${id} against a user-info refusing every token and an introspection calling JWTs inactive is inconclusive, naming its control`, async () => {
      const result = await withSabotage(id, refusesEveryToken)
      expect(result.verdict, result.message).toBe('error')
      expect(result.message).toMatch(/positive control failed/)
      expect(result.message).toMatch(reason)
    })
  // blind round 4, S3: REV-07 failed "revoking the ID token revoked the access token" against an
  // introspection that never called that access token active
  test('REV-07 against an introspection calling JWTs inactive is inconclusive about the effects, naming its control', async () => {
    const result = await withSabotage('REV-07', {
      handlers: onForm(INTROSPECT, async ({ form, forward }) =>
        isJwt(form.get('token')) ? HttpResponse.json({ active: false }) : forward(),
      ),
    })
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(/positive control failed/)
    expect(result.message).toMatch(
      /introspection before any revocation: the access token did not introspect active/,
    )
  })
  // blind round 4, S8: the success answer's form is REV-02's subject, not REV-07's
  test('REV-07 against a revocation that revokes but answers 200 with an empty text/plain body passes, and notes it', async () => {
    const result = await withSabotage('REV-07', {
      handlers: onForm(REVOKE, async ({ forward }) => {
        const answer = await forward()
        return answer.status === 200
          ? new HttpResponse('', { status: 200, headers: { 'content-type': 'text/plain' } })
          : answer
      }),
    })
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /the revocation of the ID token answered 200 without a JSON message \(INTERFACE\.md §4\.5; judged by REV-02\)/,
    )
  })
  test('RT-09 against the same provider still judges its subject: the revoked refresh token is refused, so it passes', async () => {
    const result = await withSabotage('RT-09', refusesEveryToken)
    expect(result.verdict, result.message).toBe('pass')
    expect(result.notes.join('\n')).toMatch(
      /the revocation of the refresh token answered 200 without a JSON message/,
    )
  })
  // blind round 3 fault 7: the "revokes nothing" and "active with the right secret" parts need
  // a token that introspects active; INTRO-01 judges one that does not
  // an authenticated introspection of a JWT access token answers {active:false}; the real
  // server's answer otherwise (its 401 to a client that did not authenticate included)
  const jwtsInactive: BrokenTarget = {
    handlers: onForm(INTROSPECT, async ({ form, forward }) =>
      isJwt(form.get('token'))
        ? replaceJson(await forward(), (b) => (b.active === true ? { active: false } : b))
        : forward(),
    ),
  }
  test('REV-05 against an introspection calling JWTs inactive judges the refusals, then is inconclusive about what they revoked', async () => {
    const result = await withSabotage('REV-05', jwtsInactive)
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /positive control failed.*introspection of the token before any revocation: expected active true, got HTTP 200 \{"active":false\}/,
    )
  })
  // issue 29: a negative check proves its positive control first. An endpoint that calls every
  // token inactive shows nothing with the right secret that the refusals could differ from
  test('INTRO-04 against an introspection calling every token inactive (refusals left as they are) is inconclusive, never a pass', async () => {
    const result = await withSabotage('INTRO-04', {
      handlers: onForm(INTROSPECT, async ({ forward }) =>
        replaceJson(await forward(), (b) => ('active' in b ? { active: false } : b)),
      ),
    })
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /positive control failed.*introspection of the token with the right secret: expected active true, got HTTP 200 \{"active":false\}/,
    )
  })
  test('INTRO-04 against an introspection refusing every client is inconclusive, never a pass', async () => {
    const result = await withSabotage('INTRO-04', {
      handlers: onForm(INTROSPECT, () =>
        Promise.resolve(
          HttpResponse.json(
            { error: 'invalid_client', error_description: 'refused' },
            { status: 401, headers: { 'www-authenticate': 'Basic realm="introspect"' } },
          ),
        ),
      ),
    })
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /positive control failed.*introspection of the token with the right secret: expected active true, got HTTP 401/,
    )
  })
  test('INTRO-07 against an introspection calling a fresh refresh token inactive is inconclusive', async () => {
    const result = await withSabotage('INTRO-07', {
      handlers: onForm(INTROSPECT, async ({ form }) =>
        Promise.resolve(
          isJwt(form.get('token')) ? undefined : HttpResponse.json({ active: false }),
        ),
      ),
    })
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      /positive control failed.*introspection of a fresh token: expected active true/,
    )
  })
})
