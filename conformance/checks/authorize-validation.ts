import { browse } from '../harness/browser.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { authorize as catalogue } from '../catalogue/authorize.ts'
import { oidc } from '../harness/oidc.ts'
import {
  ERROR_CHARS,
  expectEqual,
  expectThat,
  scopeList,
  scopeTokens,
  show,
} from '../harness/expect.ts'
import {
  authorize,
  expectNotThrottled,
  noteThrottleWaits,
  codeOf,
  mainClient,
  pkcePair,
  redeemCode,
  tokensFor,
  validParams,
} from '../harness/flows.ts'
import { authorizeRaw, authorizeUrl } from '../harness/requests.ts'
import { unsignedRequestObject } from '../harness/jwt.ts'
import { accessTokenFacts } from '../harness/access-token.ts'
import {
  AUTHORIZATION_ERRORS,
  expectErrorPage,
  expectErrorRedirect,
  expectLoginPage,
  isRedirect,
  redirectVariants,
} from '../harness/pages.ts'

const AUTHZ_03 = check(async (ctx) => {
  const base = await validParams(ctx)
  const { client_id: _omitted, ...withoutClient } = base
  // RFC 6749 §4.1.2.1: the authorization server "SHOULD inform the resource owner of the error
  // and MUST NOT automatically redirect the user-agent to the invalid redirection URI". The MUST
  // is no redirect; no source names the page's status, so one served 200 is only noted (as for
  // AUTHZ-04/05/06). The cases are sub-cases: every client taken for another is reported
  await ctx.subcase('no client_id', async () => {
    await expectErrorPage(ctx, await authorizeRaw(ctx, withoutClient), 'no client_id')
  })
  const unknown = { ...base, client_id: `unknown-${oidc.randomState().slice(0, 12)}` }
  await ctx.subcase('unknown client_id', async () => {
    await expectErrorPage(ctx, await authorizeRaw(ctx, unknown), 'unknown client_id')
  })
  const service = ctx.target.clients.service
  if (!service) {
    ctx.note('no service (client_credentials-only) client configured: that case was not run')
    return
  }
  // the service client has no redirect URI of its own, so no redirect is safe (RFC 6749
  // §4.1.2.1): not to the main client's URI, which it does not own
  const res = await authorizeRaw(ctx, { ...base, client_id: service.id })
  if (isRedirect(res) && service.redirectUri) {
    const location = res.headers.get('location') ?? ''
    if (location.startsWith(service.redirectUri)) {
      expectErrorRedirect(
        res,
        service.redirectUri,
        'client without the code flow',
        ['unauthorized_client'],
        undefined,
      )
      return
    }
  }
  await expectErrorPage(ctx, res, `client ${service.id} (client_credentials only)`)
})

const AUTHZ_04 = check(async (ctx) => {
  const base = await validParams(ctx)
  // RFC 6749 §3.1.2.4: never redirect to an unverified URI (a sub-case: the next still runs)
  await ctx.subcase('redirect_uri https://evil.example/cb', async () => {
    await expectErrorPage(
      ctx,
      await authorizeRaw(ctx, { ...base, redirect_uri: 'https://evil.example/cb' }),
      'redirect_uri https://evil.example/cb',
    )
  })
  const third = ctx.target.clients.third
  if (!third?.redirectUri)
    return ctx.skip(
      'the unregistered-URI case passed; the cross-client case needs a third client whose redirect URI differs from the main one',
    )
  expectThat(
    third.redirectUri !== base.redirect_uri,
    'the third client must have a redirect URI different from the main client',
  )
  // a URI registered for another client is just as unregistered for this one
  await expectErrorPage(
    ctx,
    await authorizeRaw(ctx, { ...base, redirect_uri: third.redirectUri }),
    `redirect_uri ${third.redirectUri} (registered only for ${third.id})`,
  )
})

const AUTHZ_05 = check(async (ctx) => {
  const base = await validParams(ctx)
  // each variant is its own sub-case: every one accepted is reported, not only the first
  for (const variant of redirectVariants(base.redirect_uri)) {
    const what = `redirect_uri ${variant}`
    // RFC 9700 §2.1: exact string matching, so each variant is an unregistered URI
    await ctx.subcase(what, async () => {
      await expectErrorPage(ctx, await authorizeRaw(ctx, { ...base, redirect_uri: variant }), what)
    })
  }
})

const AUTHZ_06 = check(async (ctx) => {
  const { redirect_uri: _omitted, ...params } = await validParams(ctx)
  // OIDC Core §3.1.2.1: redirect_uri REQUIRED; guessing one would redirect unverified
  await expectErrorPage(ctx, await authorizeRaw(ctx, params), 'no redirect_uri')
})

const AUTHZ_07 = check(async (ctx) => {
  const base = await validParams(ctx)
  const { response_type: _omitted, ...missing } = base
  const cases: [string, Record<string, string>][] = [
    ['no response_type', missing],
    ...['token', 'id_token', 'code id_token', 'code token', 'code id_token token'].map(
      (rt): [string, Record<string, string>] => [
        `response_type=${rt}`,
        { ...base, response_type: rt },
      ],
    ),
  ]
  // each response_type is its own sub-case: every one accepted is reported, not only the first
  for (const [what, params] of cases)
    await ctx.subcase(what, async () => {
      const state = oidc.randomState()
      const res = await authorizeRaw(ctx, { ...params, state })
      // RFC 6749 §4.1.2.1: an error about the request goes back to the verified redirect URI,
      // with one of its codes: invalid_request ("missing a required parameter"),
      // unsupported_response_type ("does not support obtaining an authorization code using this
      // method") or unauthorized_client ("the client is not authorized to request an
      // authorization code using this method", for a response type it is not registered for)
      expectErrorRedirect(
        res,
        base.redirect_uri,
        what,
        ['unsupported_response_type', 'invalid_request', 'unauthorized_client'],
        state,
        { fragmentAllowed: params.response_type !== undefined && params.response_type !== 'code' },
      )
    })
})

const CLAIMS_REQUEST = JSON.stringify({
  userinfo: { name: { essential: true } },
  id_token: { auth_time: { essential: true } },
})

const AUTHZ_08 = check(async (ctx) => {
  const base = await validParams(ctx)
  // RFC 6749 §3.1: unknown parameters MUST be ignored; OIDC Core §15.1: these are understood
  const optional: Record<string, string>[] = [
    { extra: 'foobar' },
    { display: 'page' },
    { display: 'popup' },
    { ui_locales: 'fr-CA fr en' },
    { claims_locales: 'fr-CA en' },
    { login_hint: ctx.target.users.primary.username },
    { acr_values: 'urn:mace:incommon:iap:silver' },
    { claims: CLAIMS_REQUEST },
  ]
  // each request is its own sub-case (named as its messages begin): one refused hides no other
  for (const extra of optional) {
    const what = Object.entries(extra)
      .map(([k, v]) => `${k}=${v}`)
      .join('&')
    await ctx.subcase(what, async () => {
      await expectLoginPage(ctx, await authorizeRaw(ctx, { ...base, ...extra }), what)
    })
  }

  // RFC 6749 §3.1: parameters MUST NOT be included more than once
  const twice = 'two state parameters'
  await ctx.subcase(twice, async () => {
    const dup = await authorizeRaw(ctx, { ...base, state: [base.state, 'second'] })
    expectErrorRedirect(dup, base.redirect_uri, twice, ['invalid_request'], undefined)
  })

  // order of parameters and of scope tokens does not matter (RFC 6749 §3.3). Its own browser:
  // the reversed request is sent as built, and prompt=none with id_token_hint needs the session
  // of the sign-in that issued the hint
  const context = await ctx.newBrowserContext()
  const forward = await tokensFor(ctx, { context, scope: 'openid profile email' })
  const idToken = forward.body.id_token
  expectThat(typeof idToken === 'string', 'the token response has no id_token')
  const { verifier, challenge } = await pkcePair()
  const state = oidc.randomState()
  const reversed: [string, string][] = [
    ['code_challenge_method', 'S256'],
    ['code_challenge', challenge],
    ['state', state],
    ['scope', 'email profile openid'],
    ['response_type', 'code'],
    ['redirect_uri', base.redirect_uri],
    ['client_id', base.client_id],
  ]
  const outcome = await browse(context, ctx.target, authorizeUrl(ctx, reversed), ctx.http, {
    user: ctx.target.users.primary,
    timeLeftMs: () => ctx.timeLeftMs(),
  })
  noteThrottleWaits(ctx, outcome)
  if (!outcome.callback) expectNotThrottled(outcome, 'the client')
  expectThat(outcome.callback, 'the reversed-order request never came back to the client')
  const callback = new URL(outcome.callback)
  const code = callback.searchParams.get('code')
  expectThat(
    code,
    `the reversed-order request failed: error=${callback.searchParams.get('error') ?? 'none'}`,
  )
  expectEqual(callback.searchParams.get('state'), state, 'state of the reversed-order request')
  const body = await redeemCode(ctx, code, verifier, mainClient(ctx), 'reversed order')
  const [a, b] = [new Set(scopeList(forward.body.scope)), new Set(scopeList(body.scope))]
  expectThat(
    a.size === b.size && [...a].every((s) => b.has(s)),
    `reversed order granted "${String(body.scope)}", the usual order "${String(forward.body.scope)}"`,
  )

  // OIDC Core §3.1.2.1: id_token_hint with prompt=none and a live session succeeds
  const hinted = await authorize(ctx, {
    context,
    params: { prompt: 'none', id_token_hint: idToken },
    user: null,
  })
  codeOf(hinted)
})

/**
 * AUTHZ-11's other application's scope: the one the configuration names
 * (`clients.main.foreignScope`), unless the configuration also says the main client holds it
 * (its client_credentials `scope`); undefined with why otherwise. A scope of the service
 * client's is no such scope: one deployment registers it for the main client too.
 */
function foreignScopeOf(ctx: CheckContext): { scope: string } | { why: string } {
  const main = mainClient(ctx)
  const foreign = main.foreignScope
  if (!foreign)
    return {
      why: "no clients.main.foreignScope in the target configuration (a scope another application is registered for and the main client is not), so another application's scope was not asked for",
    }
  if (scopeList(main.scope).includes(foreign))
    return {
      why: `clients.main.foreignScope ${show(foreign)} is also in clients.main.scope: as far as the configuration tells, the main client is registered for it, so another application's scope was not asked for`,
    }
  return { scope: foreign }
}

const AUTHZ_11 = check(async (ctx) => {
  const base = await validParams(ctx)
  const cases: [string, string][] = [['openid foo:bar', 'foo:bar']]
  const foreign = foreignScopeOf(ctx)
  if ('scope' in foreign) cases.push([`openid ${foreign.scope}`, foreign.scope])
  // an unknown scope and another application's are independent: each is its own sub-case
  for (const [scope, foreign] of cases) {
    const what = `scope="${scope}"`
    await ctx.subcase(what, async () => {
      const res = await authorizeRaw(ctx, { ...base, scope })
      if (isRedirect(res) && (res.headers.get('location') ?? '').startsWith(base.redirect_uri)) {
        expectErrorRedirect(res, base.redirect_uri, what, ['invalid_scope'], base.state)
        return
      }
      // OIDC Core §3.1.2.1: values not understood are ignored, so the grant must leave them out
      await expectLoginPage(ctx, res, `${what} (neither refused nor shown the login page)`)
      const { body } = await tokensFor(ctx, { scope })
      expectThat(
        !new Set(scopeList(body.scope)).has(foreign),
        `${what}: the token response grants ${foreign} ("${String(body.scope)}")`,
      )
      const at = body.access_token
      expectThat(typeof at === 'string', `${what}: no access_token`)
      // the grant is the subject: a token that is not a JWT is read through introspection
      const { claims, source } = await accessTokenFacts(ctx, at)
      const where =
        source === 'jwt' ? "the access token's scope claim" : "the access token's introspection"
      expectThat(
        !new Set(scopeList(claims.scope)).has(foreign),
        `${what}: ${where} grants ${foreign} ("${String(claims.scope)}")`,
      )
      ctx.note(`${what} was accepted and ${foreign} left out of the grant`)
    })
  }
  // half of the row unasked is no pass: the unknown scope's result stands in the notes, or as
  // the failure it found
  if ('why' in foreign) ctx.skip(`${foreign.why}; the unknown scope foo:bar was asked for`)
})

const AUTHZ_17 = check(async (ctx) => {
  const client = mainClient(ctx)
  const { verifier, challenge } = await pkcePair()
  const full = { ...(await validParams(ctx)), code_challenge: challenge, nonce: oidc.randomNonce() }
  const doc = (await ctx.http.get('/.well-known/openid-configuration')).json as
    Record<string, unknown> | undefined
  // state and PKCE travel only inside the object: a server that ignores it cannot succeed
  const outer = {
    client_id: full.client_id,
    redirect_uri: full.redirect_uri,
    response_type: 'code',
    scope: 'openid',
  }
  const object = unsignedRequestObject({
    ...full,
    iss: client.id,
    aud: ctx.target.baseUrl,
  })
  // by value and by reference are sub-cases: support for one says nothing of the other
  await ctx.subcase('request object by value', async () => {
    const byValue = await authorizeRaw(ctx, { ...outer, request: object })
    if (
      isRedirect(byValue) &&
      (byValue.headers.get('location') ?? '').startsWith(outer.redirect_uri)
    ) {
      const p = expectErrorRedirect(
        byValue,
        outer.redirect_uri,
        'request object by value',
        ['request_not_supported', 'invalid_request_object'],
        undefined,
      )
      if (p.get('error') === 'request_not_supported') {
        // OIDC Discovery §3: request_parameter_supported must not claim support
        expectThat(
          doc?.request_parameter_supported !== true,
          'request_not_supported, yet discovery says request_parameter_supported: true',
        )
      } else ctx.note('the unsigned request object was refused as invalid_request_object')
    } else {
      await expectLoginPage(ctx, byValue, 'request object by value')
      const outcome = await browse(
        await ctx.newBrowserContext(),
        ctx.target,
        authorizeUrl(ctx, Object.entries({ ...outer, request: object })),
        ctx.http,
        { user: ctx.target.users.primary, timeLeftMs: () => ctx.timeLeftMs() },
      )
      noteThrottleWaits(ctx, outcome)
      if (!outcome.callback) expectNotThrottled(outcome, 'the client')
      expectThat(outcome.callback, 'the request-object flow never came back to the client')
      const callback = new URL(outcome.callback)
      const code = callback.searchParams.get('code')
      expectThat(code, `the request-object flow failed: ${callback.search}`)
      expectEqual(callback.searchParams.get('state'), full.state, 'state from the request object')
      await redeemCode(ctx, code, verifier, client, 'request object')
    }
  })

  await ctx.subcase('request_uri', async () => {
    const byUri = await authorizeRaw(ctx, {
      ...outer,
      request_uri: `${new URL(outer.redirect_uri).origin}/request-objects/${oidc.randomState()}`,
    })
    const p = expectErrorRedirect(
      byUri,
      outer.redirect_uri,
      'request_uri',
      ['request_uri_not_supported', 'invalid_request_uri'],
      undefined,
    )
    if (p.get('error') === 'request_uri_not_supported') {
      // request_uri_parameter_supported defaults to true, so refusing it must be stated
      expectEqual(
        doc?.request_uri_parameter_supported ?? 'absent (defaults to true)',
        false,
        'discovery request_uri_parameter_supported while request_uri is refused',
      )
    } else ctx.note('request_uri answered invalid_request_uri: the harness hosts no request object')
  })
})

const AUTHZ_18 = check(async (ctx) => {
  const base = await validParams(ctx)
  const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = base
  const cases: [string, Record<string, string>][] = [
    ['response_type=token', { ...base, response_type: 'token' }],
    ['prompt=none without a session', { ...base, prompt: 'none' }],
    ['no code_challenge', noPkce],
    ['scope=openid foo:bar', { ...base, scope: 'openid foo:bar' }],
    ['prompt=bogus', { ...base, prompt: 'bogus' }],
  ]
  let examined = 0
  // each request is its own sub-case (named as its messages begin): one bad redirect hides none
  for (const [what, params] of cases)
    await ctx.subcase(what, async () => {
      const state = `s-${oidc.randomState()}`
      const res = await authorizeRaw(ctx, { ...params, state })
      if (!isRedirect(res) || !(res.headers.get('location') ?? '').startsWith(base.redirect_uri)) {
        ctx.note(`${what}: not an error redirect (HTTP ${res.status}); not examined here`)
        return
      }
      examined++
      const p = expectErrorRedirect(res, base.redirect_uri, what, AUTHORIZATION_ERRORS, state, {
        fragmentAllowed: params.response_type !== 'code',
      })
      const description = p.get('error_description')
      // RFC 6749 §4.1.2.1: error_description is OPTIONAL (INTERFACE.md §7's body shape is the
      // JSON error body's, and §4.1 leaves error redirects "not shown"); when present, App. A.8
      // limits it to %x20-21 / %x23-5B / %x5D-7E
      if (description === null) ctx.note(`${what}: no error_description (OPTIONAL)`)
      else
        expectThat(
          ERROR_CHARS.test(description),
          `${what}: error_description has characters outside RFC 6749 App. A.8: ${JSON.stringify(description)}`,
        )
      // RFC 9207 §2: iss, when present, is the issuer identifier exactly
      const iss = p.get('iss')
      if (iss !== null) expectEqual(iss, ctx.target.baseUrl, `${what}: iss`)
      const expected = new Set(['error', 'error_description', 'error_uri', 'state', 'iss'])
      const extra = [...p.keys()].filter((k) => !expected.has(k))
      if (extra.length > 0) ctx.note(`${what}: unexpected parameters ${extra.join(', ')}`)
    })
  expectThat(examined > 0, 'none of the invalid requests produced an error redirect')
})

const AUTHZ_20 = check(async (ctx) => {
  const base = await validParams(ctx)
  const unknown = 'no-such:scope'
  const scope = `openid ${unknown}`
  const res = await authorizeRaw(ctx, { ...base, scope })
  const what = `scope="${scope}"`
  // INTERFACE.md §7: invalid_scope is the answer to an unknown scope
  if (isRedirect(res) && (res.headers.get('location') ?? '').startsWith(base.redirect_uri)) {
    expectErrorRedirect(res, base.redirect_uri, what, ['invalid_scope'], base.state)
    return
  }
  // RFC 6749 §3.3: "The authorization server MAY fully or partially ignore the scope requested
  // by the client ... If the issued access token scope is different from the one requested by
  // the client, the authorization server MUST include the "scope" response parameter to inform
  // the client of the actual scope granted." A drop the token response's scope tells is not
  // silent, so it passes; one it does not tell (no scope, or the unknown value still listed)
  // is what this SHOULD is about. Whether the unknown value is granted is AUTHZ-11's subject.
  await expectLoginPage(ctx, res, `${what} (neither refused nor shown the login page)`)
  const { body } = await tokensFor(ctx, { scope })
  const granted = scopeTokens(body.scope)
  expectThat(
    granted !== undefined && !granted.includes(unknown),
    `${what}: the unknown scope was not refused with invalid_scope, and the token response ${granted === undefined ? 'has no scope member' : `still lists it (scope ${show(body.scope)})`}, so the client is not told it was dropped (RFC 6749 §3.3; see AUTHZ-11 for what is granted)`,
  )
  ctx.note(
    `${what} was accepted and ${unknown} ignored; the token response's scope ${show(body.scope)} tells the client what was granted (RFC 6749 §3.3: the server MAY ignore requested scope, and MUST then include scope)`,
  )
})

/**
 * The authorize checks of request validation: the client and its redirect URI, the response
 * type, the parameters, scopes and request objects, and the error redirect (the other rows of
 * catalogue/authorize.ts: authorize-success.ts, authorize-session.ts; checks/index.ts joins them).
 */
export const authorizeValidationChecks = {
  'AUTHZ-03': AUTHZ_03,
  'AUTHZ-04': AUTHZ_04,
  'AUTHZ-05': AUTHZ_05,
  'AUTHZ-06': AUTHZ_06,
  'AUTHZ-07': AUTHZ_07,
  'AUTHZ-08': AUTHZ_08,
  'AUTHZ-11': AUTHZ_11,
  'AUTHZ-17': AUTHZ_17,
  'AUTHZ-18': AUTHZ_18,
  'AUTHZ-20': AUTHZ_20,
} satisfies Partial<AreaChecks<typeof catalogue>>
