import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { jwks as catalogue } from '../catalogue/jwks.ts'
import { expectJsonObject, expectStatus, expectThat } from '../harness/expect.ts'
import { clientCredentials, refresh, serviceClient, tokensFor } from '../harness/flows.ts'
import { verifySignature } from '../harness/jwt.ts'

const BASE64URL = /^[A-Za-z0-9_-]+$/

async function jwks({ http }: CheckContext): Promise<Record<string, unknown>[]> {
  const res = await http.get('/.well-known/jwks.json')
  expectStatus(res, 200, 'JWKS')
  const type = res.headers.get('content-type') ?? ''
  expectThat(
    /^application\/(jwk-set\+)?json\b/i.test(type),
    `JWKS: expected application/json or application/jwk-set+json, got ${JSON.stringify(type)}`,
  )
  const body = expectJsonObject(res, 'JWKS')
  const keys = body.keys
  expectThat(
    Array.isArray(keys) && keys.length > 0,
    `JWKS: expected a non-empty "keys" array, got ${JSON.stringify(keys)}`,
  )
  for (const k of keys)
    expectThat(
      k !== null && typeof k === 'object' && !Array.isArray(k),
      `JWKS: every key must be an object, got ${JSON.stringify(k)}`,
    )
  return keys as Record<string, unknown>[]
}

const JWKS_01 = check(async (ctx) => {
  await jwks(ctx)
})

const JWKS_02 = check(async (ctx) => {
  const keys = await jwks(ctx)
  const kids = new Set<string>()
  for (const k of keys) {
    const label = `key ${JSON.stringify(k.kid)}`
    expectThat(k.kty === 'RSA', `${label}: kty must be RSA, got ${JSON.stringify(k.kty)}`)
    expectThat(k.use === 'sig', `${label}: use must be sig, got ${JSON.stringify(k.use)}`)
    expectThat(k.alg === 'RS256', `${label}: alg must be RS256, got ${JSON.stringify(k.alg)}`)
    expectThat(
      typeof k.kid === 'string' && k.kid.length > 0,
      `${label}: kid must be a non-empty string`,
    )
    // RFC 7515 §2: base64url without padding
    for (const m of ['n', 'e'] as const) {
      expectThat(
        typeof k[m] === 'string' && BASE64URL.test(k[m]),
        `${label}: ${m} must be base64url without padding`,
      )
    }
    expectThat(!kids.has(k.kid), `duplicate kid ${JSON.stringify(k.kid)}`)
    kids.add(k.kid)
  }
})

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

const JWKS_03 = check(async (ctx) => {
  const keys = await jwks(ctx)
  for (const k of keys) {
    const label = `key ${JSON.stringify(k.kid)}`
    expectThat(k.kty !== 'oct', `${label}: a symmetric key is published`)
    for (const m of PRIVATE_MEMBERS)
      expectThat(!(m in k), `${label}: private member "${m}" is published`)
    if (k.kty === 'RSA' && typeof k.n === 'string') {
      const modulus = Buffer.from(k.n, 'base64url')
      const bits = modulus.length * 8 - Math.clz32(modulus[0] ?? 0) + 24
      expectThat(bits >= 2048, `${label}: RSA modulus has ${bits} bits, fewer than 2048`)
    }
  }
})

const JWKS_04 = check(async (ctx) => {
  const { main } = ctx.target.clients
  const { body } = await tokensFor(ctx, { scope: 'openid offline_access', offline: true })
  const tokens: [string, unknown][] = [
    ['access token (authorization_code)', body.access_token],
    ['ID token (authorization_code)', body.id_token],
  ]
  if (typeof body.refresh_token === 'string') {
    const refreshed = await refresh(ctx, main, body.refresh_token)
    tokens.push(['access token (refresh_token)', refreshed.access_token])
  } else {
    ctx.note('no refresh_token was issued, so no refreshed access token was cross-checked')
  }
  const machine = serviceClient(ctx)
  tokens.push([
    `access token (client_credentials, ${machine.id})`,
    (await clientCredentials(ctx, machine)).access_token,
  ])
  // OIDC Core §10.1: the kid names exactly one published key, which verifies with RS256 pinned;
  // each token is its own sub-case (named as its messages begin)
  for (const [what, token] of tokens)
    await ctx.subcase(what, async () => {
      await verifySignature(ctx, token, what)
    })
  ctx.note(`cross-checked against the JWKS: ${tokens.map(([what]) => what).join(', ')}`)
})

/** The jwks checks, one per row of catalogue/jwks.ts. */
export const jwksChecks: AreaChecks<typeof catalogue> = {
  'JWKS-01': JWKS_01,
  'JWKS-02': JWKS_02,
  'JWKS-03': JWKS_03,
  'JWKS-04': JWKS_04,
}
