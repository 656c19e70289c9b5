import type { JsonWebKey } from 'node:crypto'
import fc from 'fast-check'
import { exportJWK, generateKeyPair } from 'jose'
import { type AreaChecks, check } from '../harness/check.ts'
import type { robustness as catalogue } from '../catalogue/robustness.ts'
import { expectInactive } from '../harness/expect.ts'
import { BRANDING, credentials, INTROSPECT, REVOKE, TOKEN, USER_INFO } from '../harness/requests.ts'
import { holds, propertyBudget } from '../harness/fuzz/property.ts'
import {
  type Endpoint,
  expectRegisteredError,
  malformed,
  showMalformed,
  toRequest,
} from '../harness/fuzz/requests.ts'
import { type Forge, mutate, mutationArb } from '../harness/fuzz/jwt.ts'
import { expectAccepted, realTokens, userInfoRefuses } from '../harness/fuzz/tokens.ts'

const ROBUST_01 = check(async (ctx) => {
  const { runs, seed } = propertyBudget(ctx)
  const endpoints: Endpoint[] = [TOKEN, INTROSPECT, REVOKE, USER_INFO, BRANDING]
  const each = Math.max(1, Math.ceil(runs / endpoints.length))
  for (const path of endpoints) {
    await holds(
      path,
      malformed(path, ctx.target.clients.main),
      async (m) => expectRegisteredError(await ctx.http.request(path, toRequest(m)), path),
      each,
      seed,
      showMalformed(path),
    )
  }
})

const ROBUST_02 = check(async (ctx) => {
  const { runs, seed } = propertyBudget(ctx)
  const { tokens, idToken } = await realTokens(ctx)
  await expectAccepted(ctx, tokens, 'before the mutations')
  const jwks = (await ctx.http.get('/.well-known/jwks.json')).json as { keys?: JsonWebKey[] }
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  const forge: Forge = {
    attacker: { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'attacker' } },
    published: jwks.keys ?? [],
    others: [idToken, ...tokens.map((t) => t.token)],
  }
  const arb = fc.record({ base: fc.nat(tokens.length - 1), m: mutationArb })
  await holds(
    'a mutated access token',
    arb,
    async ({ base, m }) => {
      const real = tokens[base] ?? tokens[0]
      if (!real) return
      const token = await mutate(m, real.token, forge)
      if (token === real.token) return
      await userInfoRefuses(ctx, token)
      // RFC 7662 §2.2: as the client it was issued to, still exactly {"active":false}
      const res = await ctx.http.postForm(INTROSPECT, { token, ...credentials(real.client) })
      expectInactive(res, 'the mutated token')
    },
    runs,
    seed,
    ({ base, m }) => `${tokens[base]?.name ?? '?'} with ${JSON.stringify(m)}`,
  )
  await expectAccepted(ctx, tokens, 'after the mutations')
})

/** The robustness checks, one per row of catalogue/robustness.ts. */
export const robustnessChecks: AreaChecks<typeof catalogue> = {
  'ROBUST-01': ROBUST_01,
  'ROBUST-02': ROBUST_02,
}
