import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { discovery as catalogue } from '../catalogue/discovery.ts'
import {
  expectEqual,
  expectJsonObject,
  expectSameSet,
  expectStatus,
  expectThat,
} from '../harness/expect.ts'
import { DISCOVERY, DISCOVERY_ENDPOINTS } from '../harness/requests.ts'

/** Fetches the discovery document and checks DISC-01's basics on the way. */
async function discovery({ http }: CheckContext): Promise<Record<string, unknown>> {
  const res = await http.get(DISCOVERY)
  expectStatus(res, 200, 'discovery')
  return expectJsonObject(res, 'discovery document')
}

const DISC_01 = check(async (ctx) => {
  await discovery(ctx)
})

const DISC_02 = check(async (ctx) => {
  const doc = await discovery(ctx)
  // OIDC Discovery §4.3: exact string comparison; a trailing slash is a different issuer
  expectEqual(doc.issuer, ctx.target.baseUrl, 'issuer')
  const url = new URL(String(doc.issuer))
  expectEqual(url.protocol, 'https:', 'issuer scheme')
  expectThat(
    !url.search &&
      !url.hash &&
      !String(doc.issuer).includes('#') &&
      !String(doc.issuer).includes('?'),
    'issuer has a query or fragment',
  )
})

const ENDPOINTS = DISCOVERY_ENDPOINTS

const ARRAYS = [
  'response_types_supported',
  'subject_types_supported',
  'id_token_signing_alg_values_supported',
] as const

/** Each member is its own sub-case (named as its message begins): one wrong hides no other. */
const member = (ctx: CheckContext, name: string, expectation: () => void): Promise<void> =>
  ctx.subcase(name, expectation)

const DISC_03 = check(async (ctx) => {
  const doc = await discovery(ctx)
  await member(ctx, 'issuer', () =>
    expectThat(typeof doc.issuer === 'string', 'issuer: missing or not a string'),
  )
  for (const [name, path] of Object.entries(ENDPOINTS))
    await member(ctx, name, () => expectEqual(doc[name], ctx.target.baseUrl + path, name))
  for (const name of ARRAYS) {
    const value = doc[name]
    await member(ctx, name, () =>
      expectThat(
        Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string'),
        `${name}: must be a non-empty array of strings, got ${JSON.stringify(value)}`,
      ),
    )
  }
  for (const [name, value] of Object.entries(doc)) {
    if (name.endsWith('_supported') && !ARRAYS.includes(name as (typeof ARRAYS)[number])) {
      const ok = Array.isArray(value) || typeof value === 'boolean'
      await member(ctx, name, () =>
        expectThat(ok, `${name}: must be an array or a boolean, got ${JSON.stringify(value)}`),
      )
    }
  }
})

const DISC_04 = check(async (ctx) => {
  const doc = await discovery(ctx)
  for (const [name, only] of [
    ['response_types_supported', 'code'],
    ['subject_types_supported', 'public'],
  ] as const)
    await member(ctx, name, () => expectSameSet(doc[name], [only], name))
  const algs = doc.id_token_signing_alg_values_supported
  const signing = 'id_token_signing_alg_values_supported'
  await member(ctx, signing, () => {
    expectThat(
      Array.isArray(algs) && algs.includes('RS256'),
      `${signing}: must list RS256, got ${JSON.stringify(algs)}`,
    )
    expectThat(!algs.includes('none'), `${signing}: lists "none"`)
  })
})

const DISC_05 = check(async (ctx) => {
  const doc = await discovery(ctx)
  expectSameSet(
    doc.grant_types_supported,
    ['authorization_code', 'refresh_token', 'client_credentials'],
    'grant_types_supported',
  )
})

// RFC 6749 App. A.4: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/
const USER_CLAIMS = ['sub', 'name', 'picture', 'updated_at', 'email', 'email_verified']

const DISC_06 = check(async (ctx) => {
  const doc = await discovery(ctx)
  await member(ctx, 'scopes_supported', () => {
    const scopes = doc.scopes_supported
    expectThat(
      Array.isArray(scopes),
      `scopes_supported: must be an array, got ${JSON.stringify(scopes)}`,
    )
    for (const s of ['openid', 'profile', 'email', 'offline_access'])
      expectThat(scopes.includes(s), `scopes_supported: lacks ${s}`)
    for (const s of scopes)
      expectThat(
        typeof s === 'string' && SCOPE_TOKEN.test(s),
        `scopes_supported: holds an invalid scope token ${JSON.stringify(s)}`,
      )
  })
  await member(ctx, 'claims_supported', () => {
    const claims = doc.claims_supported
    expectThat(
      Array.isArray(claims),
      `claims_supported: must be an array, got ${JSON.stringify(claims)}`,
    )
    for (const c of USER_CLAIMS) expectThat(claims.includes(c), `claims_supported: lacks ${c}`)
  })
})

const DISC_07 = check(async (ctx) => {
  const doc = await discovery(ctx)
  expectSameSet(
    doc.token_endpoint_auth_methods_supported,
    ['client_secret_post'],
    'token_endpoint_auth_methods_supported',
  )
  // what the document declares, not what the endpoint does: TOK-04 sends a Basic request and
  // states the one finding about HTTP Basic (accepted or refused) in the same report
  ctx.note(
    "discovery declares client_secret_post only (INTERFACE.md §1, §5.3); whether the token endpoint accepts HTTP Basic anyway (RFC 6749 §2.3.1: the AS MUST support it) is TOK-04's finding",
  )
})

const DISC_08 = check(async (ctx) => {
  const doc = await discovery(ctx)
  expectSameSet(doc.code_challenge_methods_supported, ['S256'], 'code_challenge_methods_supported')
})

const DISC_09 = check(async (ctx) => {
  const doc = await discovery(ctx)
  // OIDC Discovery §3: an absent request_uri_parameter_supported means true
  const byReference = 'request_uri_parameter_supported'
  await member(ctx, byReference, () =>
    expectEqual(doc.request_uri_parameter_supported, false, byReference),
  )
  for (const name of ['request_parameter_supported', 'claims_parameter_supported'])
    await member(ctx, name, () =>
      expectThat(
        doc[name] === undefined || doc[name] === false,
        `${name}: must be false or absent, got ${JSON.stringify(doc[name])}`,
      ),
    )
  if (doc.response_modes_supported === undefined) {
    ctx.note('response_modes_supported is absent; its default is [query, fragment]')
  }
  // the MUST is truthfulness (OIDC Discovery §3): the code flow's own mode, query, is listed;
  // a provider that really offers more modes (fragment, form_post) may say so
  const modes = doc.response_modes_supported
  expectThat(
    Array.isArray(modes) && modes.includes('query'),
    `response_modes_supported: expected an array that lists "query", got ${JSON.stringify(modes)}`,
  )
  const extra = (modes as unknown[]).filter((m) => m !== 'query')
  if (extra.length > 0)
    ctx.note(`response_modes_supported also lists ${extra.join(', ')} (not verified here)`)
})

const DISC_10 = check(async (ctx) => {
  const doc = await discovery(ctx)
  for (const name of [
    'end_session_endpoint',
    'introspection_endpoint',
    'revocation_endpoint',
  ] as const)
    await member(ctx, name, () =>
      expectEqual(doc[name], ctx.target.baseUrl + ENDPOINTS[name], name),
    )
  // RFC 8414 §2: absent auth-method members default to client_secret_basic. REQUIREMENTS.md
  // makes naming them a SHOULD: a note here, never this MUST check's failure
  for (const name of [
    'introspection_endpoint_auth_methods_supported',
    'revocation_endpoint_auth_methods_supported',
  ] as const) {
    const value = doc[name]
    const ok = Array.isArray(value) && value.length === 1 && value[0] === 'client_secret_post'
    if (!ok) ctx.note(`${name} is ${JSON.stringify(value)}, not ["client_secret_post"] (SHOULD)`)
  }
})

const DISC_11 = check(async (ctx) => {
  const doc = await discovery(ctx)
  const res = await ctx.http.get('/.well-known/oauth-authorization-server')
  if (res.status !== 200) {
    ctx.note(`RFC 8414 document not served (HTTP ${res.status})`)
    expectThat(
      res.status >= 400 && res.status < 500,
      `an unserved well-known path must answer 4xx, got ${res.status}`,
    )
    return
  }
  const oauth = expectJsonObject(res, 'RFC 8414 document')
  for (const name of ['issuer', ...Object.keys(ENDPOINTS)]) {
    const what = `RFC 8414 ${name}`
    if (oauth[name] !== undefined)
      await member(ctx, what, () => expectEqual(oauth[name], doc[name], what))
  }
})

/** The discovery checks, one per row of catalogue/discovery.ts. */
export const discoveryChecks: AreaChecks<typeof catalogue> = {
  'DISC-01': DISC_01,
  'DISC-02': DISC_02,
  'DISC-03': DISC_03,
  'DISC-04': DISC_04,
  'DISC-05': DISC_05,
  'DISC-06': DISC_06,
  'DISC-07': DISC_07,
  'DISC-08': DISC_08,
  'DISC-09': DISC_09,
  'DISC-10': DISC_10,
  'DISC-11': DISC_11,
}
