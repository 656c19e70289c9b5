import { createExampleApi } from '../../server/resource-server/example-api.ts'
import {
  createVerifier,
  VerifyError,
  type Verifier,
} from '../../server/resource-server/verifier.ts'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { resourceServer as catalogue } from '../catalogue/resource-server.ts'
import { fetchVia } from '../harness/target.ts'
import {
  CheckFailure,
  expectEqual,
  expectJsonObject,
  expectStatus,
  expectThat,
} from '../harness/expect.ts'
import { tokensFor } from '../harness/flows.ts'
import { endpointUrl } from '../harness/endpoints.ts'
import { JWKS } from '../harness/requests.ts'

/**
 * A verifier for the target exactly as INTERFACE.md §5.6 describes, fetching its JWKS from the
 * jwks_uri discovery advertises (the interface's path only when the run could not read it):
 * endpoints come from discovery, DISC-03 alone judges their paths.
 */
function verifierFor(ctx: CheckContext, audience: string): Verifier {
  return createVerifier({
    issuer: ctx.target.baseUrl,
    audience,
    jwksUri: endpointUrl(ctx.target, 'jwks_uri'),
    fetch: (url, options) => fetchVia(ctx.target.dispatcher, url, options),
  })
}

async function refused(verifier: Verifier, token: string): Promise<string | undefined> {
  try {
    await verifier.verify(token)
    return undefined
  } catch (err) {
    if (err instanceof VerifyError) return err.code
    throw err
  }
}

const RS_01 = check(async (ctx) => {
  const main = ctx.target.clients.main
  const { body } = await tokensFor(ctx, { scope: 'openid' })
  const access = String(body.access_token)
  // a key set that cannot be fetched says nothing of the token (JWKS-01 judges the key set): the
  // verifier read a JWKS answered 404 as "the access token is malformed" (blind round 5)
  const jwksUri = endpointUrl(ctx.target, 'jwks_uri')
  const unfetched = (why: string): Error =>
    new Error(
      `the key set at ${jwksUri} could not be fetched (${why}), so the access token cannot be verified (JWKS-01 judges the key set)`,
    )
  const jwks = await ctx.http.request(JWKS)
  const keys = (jwks.json as { keys?: unknown } | undefined)?.keys
  if (jwks.status !== 200 || !Array.isArray(keys))
    throw unfetched(
      jwks.status !== 200 ? `HTTP ${jwks.status}` : 'the answer is not a JSON key set',
    )
  const verifier = verifierFor(ctx, main.id)
  const claims = await verifier.verify(access).catch((err: unknown) => {
    // the verifier's typed refusal is about the token the IdP issued: a conformance failure;
    // anything else (the JWKS unreachable, a bug) leaves the check inconclusive
    if (err instanceof VerifyError && err.code === 'jwks_unavailable') throw unfetched(err.message)
    if (err instanceof VerifyError)
      throw new CheckFailure(`a §5.6 resource server refused the access token: ${err.message}`)
    throw err
  })
  expectThat(claims.sub.length > 0, 'the verified access token has no sub')
  // RFC 9068 §4, RFC 8725 §3.11: an ID token must never pass as an access token
  const idToken = body.id_token
  expectThat(typeof idToken === 'string', 'no id_token for scope openid')
  const asAccess = await refused(verifier, idToken)
  expectThat(
    asAccess !== undefined,
    'a §5.6 resource server accepted the ID token as an access token',
  )
  const other = ctx.target.clients.other
  if (!other) {
    ctx.note('no other client configured: the audience part was not checked')
    return
  }
  const wrongAudience = await refused(verifierFor(ctx, other.id), access)
  expectEqual(wrongAudience, 'wrong_audience', 'verifying with another client as audience')
})

const RS_02 = check(
  { embeddedOnly: 'needs the fixtures’ users and roles (embedded reference server only)' },
  async (ctx) => {
    // the expectations below are the fixtures' users, roles and organisations
    if (!ctx.target.embedded)
      ctx.skip('needs the fixtures’ users and roles (embedded reference server only)')
    const secondary = ctx.target.users.secondary
    if (!secondary) ctx.skip('no secondary user configured')
    const scope = 'openid read:documents write:documents'
    const alice = String((await tokensFor(ctx, { scope })).body.access_token)
    const aliceRead = String(
      (await tokensFor(ctx, { scope: 'openid read:documents' })).body.access_token,
    )
    const bob = String((await tokensFor(ctx, { scope, user: secondary })).body.access_token)
    const api = await createExampleApi({ verifier: verifierFor(ctx, ctx.target.clients.main.id) })
    await api.start()
    try {
      const base = `http://127.0.0.1:${String(api.info.port)}`
      const call = (method: string, path: string, token?: string) =>
        ctx.http.request(base + path, {
          method,
          headers: token ? { authorization: `Bearer ${token}` } : {},
        })
      // each rule is its own sub-case (named as its message begins): one not enforced does not
      // hide another; the deletions come last, as they change the documents
      const rule = (what: string, expectation: () => Promise<void>) =>
        ctx.subcase(what, expectation)
      await rule('no token', async () => {
        const none = await call('GET', '/documents')
        expectStatus(none, 401, 'no token')
        expectThat(
          none.headers.get('www-authenticate')?.startsWith('Bearer'),
          'no token: a 401 without a Bearer challenge (RFC 6750 §3)',
        )
      })
      const ids = async (token: string) => {
        const res = await call('GET', '/documents', token)
        expectStatus(res, 200, 'GET /documents')
        return (expectJsonObject(res).documents as { id: string }[]).map((d) => d.id).join(',')
      }
      // tenant check: each user sees only their organisation
      const seen = async (what: string, token: string, expected: string) =>
        rule(what, async () => expectEqual(await ids(token), expected, what))
      await seen('documents alice (org-1) sees', alice, 'doc-1,doc-2')
      await seen('documents bob (org-2) sees', bob, 'doc-3')
      const answered = (
        what: string,
        method: string,
        path: string,
        token: string,
        status: number,
      ) => rule(what, async () => expectStatus(await call(method, path, token), status, what))
      await answered('bob reading an org-1 document', 'GET', '/documents/doc-1', bob, 403)
      // role check
      await answered('bob (viewer) at the admin route', 'GET', '/admin/users', bob, 403)
      await answered('alice (admin) at the admin route', 'GET', '/admin/users', alice, 200)
      // scope check
      await rule('deleting with a read-only token', async () => {
        const readOnly = await call('DELETE', '/documents/doc-1', aliceRead)
        expectStatus(readOnly, 403, 'deleting with a read-only token')
        expectEqual(
          expectJsonObject(readOnly).error,
          'insufficient_scope',
          'deleting with a read-only token: error',
        )
      })
      // ownership: the owner may delete; an admin may delete another's document
      await answered('bob deleting his own document', 'DELETE', '/documents/doc-3', bob, 204)
      await answered(
        'alice (admin) deleting another’s document',
        'DELETE',
        '/documents/doc-2',
        alice,
        204,
      )
    } finally {
      await api.stop()
    }
  },
)

/** The resourceServer checks, one per row of catalogue/resource-server.ts. */
export const resourceServerChecks: AreaChecks<typeof catalogue> = {
  'RS-01': RS_01,
  'RS-02': RS_02,
}
