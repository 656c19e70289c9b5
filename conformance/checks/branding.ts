import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { branding as catalogue } from '../catalogue/branding.ts'
import type { TargetClient } from '../harness/target.ts'
import {
  about,
  expectJsonObject,
  expectOAuthError,
  expectSameSet,
  expectStatus,
  expectThat,
  show,
} from '../harness/expect.ts'
import { BRANDING } from '../harness/requests.ts'

/** INTERFACE.md §2.6: the record's fields, no more and no fewer. */
const FIELDS = [
  'logo_url',
  'brand_color',
  'application_name',
  'privacy_policy_url',
  'terms_of_service_url',
] as const
const URL_FIELDS = ['logo_url', 'privacy_policy_url', 'terms_of_service_url'] as const

/** Every client of the target configuration (each has a branding record). */
const configuredClients = (ctx: CheckContext): TargetClient[] =>
  Object.values(ctx.target.clients as Record<string, TargetClient | undefined>).filter(
    (c): c is TargetClient => c !== undefined,
  )

async function brandingOf(ctx: CheckContext, client: TargetClient) {
  const res = await ctx.http.get(BRANDING, { client_id: client.id })
  expectStatus(res, 200, `branding of ${client.id}`)
  return { res, body: expectJsonObject(res, `branding of ${client.id}`) }
}

/** Each client's record is its own sub-case (named as its messages begin). */
const eachClient = async (
  ctx: CheckContext,
  judge: (client: TargetClient, what: string) => Promise<void>,
): Promise<void> => {
  for (const client of configuredClients(ctx)) {
    const what = `branding of ${client.id}`
    await ctx.subcase(what, () => judge(client, what))
  }
}

const BRAND_01 = check(async (ctx) => {
  await eachClient(ctx, async (client, what) => {
    const { body } = await brandingOf(ctx, client)
    // INTERFACE.md §2.6: exactly these fields, each a string
    expectSameSet(Object.keys(body), FIELDS, `${what}: fields`)
    for (const field of FIELDS)
      expectThat(
        typeof body[field] === 'string' && body[field] !== '',
        `${what}: ${field} must be a non-empty string, got ${show(body[field])}`,
      )
  })
})

const BRAND_02 = check(async (ctx) => {
  await eachClient(ctx, async (client) => {
    const { body } = await brandingOf(ctx, client)
    // INTERFACE.md §2.6: hex color, #RRGGBB
    expectThat(
      typeof body.brand_color === 'string' && /^#[0-9A-Fa-f]{6}$/.test(body.brand_color),
      `branding of ${client.id}: brand_color must be #RRGGBB, got ${show(body.brand_color)}`,
    )
    // OIDC Dynamic Client Registration §2 (logo_uri, policy_uri, tos_uri): SHOULD, so a note
    for (const field of URL_FIELDS) {
      const value = body[field]
      let url: URL | undefined
      try {
        url = typeof value === 'string' ? new URL(value) : undefined
      } catch {
        url = undefined
      }
      if (url?.protocol !== 'https:')
        ctx.note(
          `branding of ${client.id}: ${field} is not an absolute https URL: ${show(value)} (OIDC Dynamic Client Registration §2)`,
        )
    }
  })
})

const BRAND_03 = check(async (ctx) => {
  // INTERFACE.md §7 error shape; a missing required parameter is invalid_request (RFC 6749 §5.2)
  // each request is its own sub-case: every one answered outside the shape is reported
  await ctx.subcase('no client_id', async () => {
    const missing = await ctx.http.get(BRANDING)
    expectOAuthError(missing, 400, 'invalid_request')
  })
  for (const [what, clientId] of [
    ['an empty client_id', ''],
    ['an unknown client_id', `no-such-client-${Date.now()}`],
    ['an overlong client_id', 'x'.repeat(4000)],
    ['a client_id with markup', '"><script>alert(1)</script>'],
  ] as const)
    await ctx.subcase(what, async () => {
      const res = await ctx.http.get(BRANDING, { client_id: clientId })
      // never 5xx or an HTML page: a 4xx in the JSON error shape
      about(what, () => expectOAuthError(res, [400, 404]))
    })
})

/** Names that would betray confidential or internal data in a public record. */
const FORBIDDEN_KEY = /secret|password|redirect|^id$|_id$|internal|hash|digest|key/i

const BRAND_04 = check(async (ctx) => {
  const records: { client: TargetClient; text: string }[] = []
  await eachClient(ctx, async (client) => {
    const { res, body } = await brandingOf(ctx, client)
    for (const key of Object.keys(body))
      expectThat(
        !FORBIDDEN_KEY.test(key),
        `branding of ${client.id}: carries ${show(key)}: a public record holds no secret, redirect URI or internal identifier`,
      )
    const secrets = [client.secret, client.redirectUri, client.postLogoutRedirectUri]
    for (const secret of secrets)
      if (secret)
        expectThat(
          !res.text.includes(secret),
          `branding of ${client.id}: reveals its ${secret === client.secret ? 'client secret' : 'registered URI'}`,
        )
    // a record any cache may keep must not set a cookie with it
    const cacheControl = res.headers.get('cache-control') ?? ''
    const shared =
      /\bpublic\b|s-maxage/i.test(cacheControl) && !/no-store|private/i.test(cacheControl)
    if (shared)
      expectThat(
        res.headers.get('set-cookie') === null,
        `branding of ${client.id}: is publicly cacheable (${cacheControl}) yet sets a cookie`,
      )
    records.push({ client, text: JSON.stringify(body) })
  })
  // cached or not, each client_id gets its own record (ARCHITECTURE.md: each client has one)
  const [first, second] = records
  if (first && second)
    expectThat(
      first.text !== second.text,
      `${first.client.id} and ${second.client.id} get the same branding record: it does not depend on client_id`,
    )
  else ctx.note('only one client is configured: records of two clients were not compared')
})

/** The branding checks, one per row of catalogue/branding.ts. */
export const brandingChecks: AreaChecks<typeof catalogue> = {
  'BRAND-01': BRAND_01,
  'BRAND-02': BRAND_02,
  'BRAND-03': BRAND_03,
  'BRAND-04': BRAND_04,
}
