import type { CheckContext } from '../check.ts'
import {
  about,
  expectActive,
  expectBearerChallenge,
  expectControl,
  expectJsonObject,
  expectStatus,
  expectThat,
} from '../expect.ts'
import { idTokenOf, signIn } from '../flows.ts'
import { clientCredentialsRaw, credentials, INTROSPECT, USER_INFO } from '../requests.ts'
import type { TargetClient } from '../target.ts'

/** The real tokens ROBUST-02 mutates, and how the target must answer them and their mutations. */

/** RFC 6750 §2.1 b64token: what an Authorization header may carry as a bearer token. */
export const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

/** The base tokens: a user's (user-info answers it) and, when configured, a service token. */
export interface RealToken {
  readonly name: string
  readonly token: string
  readonly client: TargetClient
  readonly userInfoStatus: number
}

export async function realTokens(
  ctx: CheckContext,
): Promise<{ tokens: RealToken[]; idToken: string }> {
  const set = await signIn(ctx, { scope: 'openid' })
  const tokens: RealToken[] = [
    {
      name: 'user token',
      token: set.accessToken,
      client: ctx.target.clients.main,
      userInfoStatus: 200,
    },
  ]
  const service = ctx.target.clients.service
  if (service) {
    const res = await clientCredentialsRaw(ctx, service)
    expectStatus(res, 200, 'client_credentials token for the check')
    const token = expectJsonObject(res, 'client_credentials token').access_token
    if (typeof token === 'string')
      tokens.push({ name: 'service token', token, client: service, userInfoStatus: 0 })
  }
  return { tokens, idToken: idTokenOf(set) }
}

/**
 * The unmutated tokens must work, or refusing their mutations would prove nothing. Before the
 * mutations that is the positive control: refused then, the check is inconclusive (UI-01 and
 * INTRO-01 judge a refused genuine token). After them, a token refused is the mutations' doing.
 */
export async function expectAccepted(
  ctx: CheckContext,
  tokens: readonly RealToken[],
  when: string,
  control = false,
) {
  for (const t of tokens) {
    if (t.userInfoStatus > 0) {
      const res = await ctx.http.request(USER_INFO, {
        headers: { authorization: `Bearer ${t.token}` },
      })
      const what = `user-info with the unmutated ${t.name} ${when}`
      if (control)
        expectControl(
          res.status === t.userInfoStatus,
          `${what}: expected HTTP ${t.userInfoStatus}, got ${res.status}, so its refusal of mutated tokens shows nothing`,
        )
      else expectStatus(res, t.userInfoStatus, what)
    }
    const res = await ctx.http.postForm(INTROSPECT, { token: t.token, ...credentials(t.client) })
    if (control)
      expectControl(
        (res.json as { active?: unknown } | undefined)?.active === true,
        `introspection of the unmutated ${t.name} ${when}: not active (HTTP ${res.status}), so mutated tokens introspected inactive show nothing`,
      )
    else about(`the unmutated ${t.name} ${when}`, () => expectActive(res, t.name))
  }
}

export async function userInfoRefuses(ctx: CheckContext, token: string): Promise<void> {
  const header = B64TOKEN.test(token) && token.length <= 7000
  // a token the header cannot carry goes in the form body (RFC 6750 §2.2)
  const res = header
    ? await ctx.http.request(USER_INFO, { headers: { authorization: `Bearer ${token}` } })
    : await ctx.http.request(USER_INFO, { method: 'POST', form: { access_token: token } })
  expectThat(res.status < 500, `user-info answered HTTP ${String(res.status)} (never a 5xx)`)
  // RFC 6750 §3.1: invalid_token is 401; a token outside the b64token syntax may be invalid_request
  expectBearerChallenge(res, header ? 401 : [400, 401], undefined, 'user-info')
}
