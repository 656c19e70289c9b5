import { createHash, randomBytes } from 'node:crypto'
import { type AreaChecks, check, type CheckContext } from '../harness/check.ts'
import type { pkce as catalogue } from '../catalogue/pkce.ts'
import type { HttpResponse } from '../harness/http.ts'
import {
  about,
  aside,
  expectControl,
  expectJsonObject,
  expectOAuthError,
  expectStatus,
  expectThat,
} from '../harness/expect.ts'
import { authorize, codeOf, mainClient, redirectUriOf } from '../harness/flows.ts'
import { authorizeRaw, redeemRaw } from '../harness/requests.ts'
import { expectErrorRedirect } from '../harness/pages.ts'

/** RFC 7636 §4.1: the characters a code_verifier may use. */
const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~'

/** A random string of `length` unreserved characters (a syntactically valid verifier). */
export function randomVerifier(length = 64): string {
  const bytes = randomBytes(length)
  return Array.from(bytes, (b) => UNRESERVED[b % UNRESERVED.length]).join('')
}

/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)); UTF-8 so that non-ASCII test verifiers hash too. */
export const s256 = (verifier: string): string =>
  createHash('sha256').update(verifier, 'utf8').digest('base64url')

/** The parameters of a valid authorization request for the main client, without PKCE. */
function baseRequest(ctx: CheckContext): {
  params: Record<string, string>
  redirectUri: string
  state: string
} {
  const client = mainClient(ctx)
  const redirectUri = redirectUriOf(ctx, client)
  const state = randomBytes(12).toString('base64url')
  return {
    params: {
      client_id: client.id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
      state,
    },
    redirectUri,
    state,
  }
}

/** Whether a raw authorize response is a redirect to the client URI. */
function redirectToClient(res: HttpResponse, redirectUri: string): URL | undefined {
  const location = res.headers.get('location')
  if (res.status < 300 || res.status > 399 || location === null) return undefined
  if (!location.startsWith(redirectUri)) return undefined
  // what follows the registered URI must start its query, not extend its path or host
  if (!['?', '&', undefined].includes(location[redirectUri.length])) return undefined
  return new URL(location)
}

/**
 * The control of the authorize refusals: the same request with a valid S256 challenge must be
 * accepted (login page, or a redirect that is not an error at the client), so a refusal seen
 * by the check is due to PKCE and nothing else.
 */
async function expectAcceptedControl(ctx: CheckContext): Promise<void> {
  const { params, redirectUri } = baseRequest(ctx)
  const res = await authorizeRaw(ctx, {
    ...params,
    code_challenge: s256(randomVerifier()),
    code_challenge_method: 'S256',
  })
  const url = redirectToClient(res, redirectUri)
  expectControl(
    res.status < 400 && !url?.searchParams.has('error'),
    `control: a valid S256 authorization request was refused (HTTP ${res.status}${
      url ? `, error=${url.searchParams.get('error') ?? ''}` : ''
    }), so the PKCE refusals below prove nothing`,
  )
}

const PKCE_01 = check(async (ctx) => {
  await expectAcceptedControl(ctx)
  const { params, redirectUri, state } = baseRequest(ctx)
  // RFC 7636 §4.4.1, INTERFACE.md §5.2: PKCE is mandatory, so no challenge is invalid_request
  const res = await authorizeRaw(ctx, params)
  expectErrorRedirect(res, redirectUri, 'no code_challenge', ['invalid_request'], state)
})

/**
 * A challenge that is well-formed as S256 (43 base64url characters, RFC 7636 §4.2) and a valid
 * verifier too (§4.1): sent with another method, only the method can make it refused, never
 * its syntax, so the verdict is the same on every run.
 */
const s256Shaped = (): string => randomBytes(32).toString('base64url')

const PKCE_02 = check(async (ctx) => {
  await expectAcceptedControl(ctx)
  const verifier = s256Shaped()
  const variants: { what: string; challenge: string; method?: string }[] = [
    // RFC 7636 §4.2 allows plain; INTERFACE.md §1, §5.2 and RFC 9700 §2.1.1 allow S256 only
    { what: 'code_challenge_method=plain', challenge: verifier, method: 'plain' },
    // RFC 7636 §4.3: an omitted method defaults to plain, which must not be read as S256
    { what: 'code_challenge_method omitted', challenge: s256(verifier) },
    // method names are case-sensitive (RFC 7636 §4.2 registers "S256")
    { what: 'code_challenge_method=s256', challenge: s256(verifier), method: 's256' },
    // an unregistered method: the challenge is S256-shaped so only the method is wrong
    { what: 'code_challenge_method=S512', challenge: s256Shaped(), method: 'S512' },
  ]
  for (const v of variants) {
    const { params, redirectUri, state } = baseRequest(ctx)
    const res = await authorizeRaw(ctx, {
      ...params,
      code_challenge: v.challenge,
      ...(v.method !== undefined ? { code_challenge_method: v.method } : {}),
    })
    expectErrorRedirect(res, redirectUri, v.what, ['invalid_request'], state)
  }
})

const PKCE_03 = check(async (ctx) => {
  await expectAcceptedControl(ctx)
  const valid = s256(randomVerifier())
  // RFC 7636 §4.2: "code-challenge = 43*128unreserved" (unreserved = ALPHA / DIGIT / "-" / "." /
  // "_" / "~"). Each variant breaks that ABNF: too short, or a character outside unreserved. A
  // longer challenge of unreserved characters (44 and up) is well formed by the ABNF, even if no
  // S256 verifier can match it, so refusing it early is not asked for and it is not tried.
  const variants = [
    { what: 'a 42-character challenge', challenge: valid.slice(0, 42) },
    { what: 'a challenge containing +', challenge: `${valid.slice(0, 20)}+${valid.slice(21)}` },
    { what: 'a challenge containing /', challenge: `${valid.slice(0, 20)}/${valid.slice(21)}` },
    { what: 'a challenge ending in =', challenge: `${valid.slice(0, 42)}=` },
    {
      what: 'a challenge containing a space',
      challenge: `${valid.slice(0, 20)} ${valid.slice(21)}`,
    },
  ]
  // each malformed challenge is its own sub-case: every one accepted is reported
  for (const v of variants)
    await ctx.subcase(v.what, async () => {
      const { params, redirectUri, state } = baseRequest(ctx)
      const res = await authorizeRaw(ctx, {
        ...params,
        code_challenge: v.challenge,
        code_challenge_method: 'S256',
      })
      expectErrorRedirect(res, redirectUri, v.what, ['invalid_request'], state)
    })
})

/** RFC 7636 Appendix B. */
const APPENDIX_B = {
  verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
}

const PKCE_04 = check(async (ctx) => {
  // guards the constants themselves: the vector must hash as the RFC says
  expectThat(s256(APPENDIX_B.verifier) === APPENDIX_B.challenge, 'the App. B vector is mistyped')
  const auth = await authorize(ctx, { params: { code_challenge: APPENDIX_B.challenge } })
  const res = await redeemRaw(ctx, {
    code: codeOf(auth),
    verifier: APPENDIX_B.verifier,
    client: auth.client,
    redirectUri: auth.redirectUri,
  })
  // RFC 7636 §4.6: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge → tokens
  expectStatus(res, 200, 'redeeming with the RFC 7636 App. B verifier')
  const body = expectJsonObject(res, 'token response')
  expectThat(
    typeof body.access_token === 'string' && body.access_token.length > 0,
    `token response without an access_token: ${res.text.slice(0, 200)}`,
  )
})

const PKCE_05 = check(async (ctx) => {
  const auth = await authorize(ctx)
  const res = await redeemRaw(ctx, {
    code: codeOf(auth),
    client: auth.client,
    redirectUri: auth.redirectUri,
  })
  // RFC 7636 §4.5, §4.6: a code bound to a challenge is not redeemable without the verifier;
  // the verifier is then a missing required parameter, which RFC 6749 §5.2 calls invalid_request
  expectThat(res.status !== 200, 'a token request without code_verifier redeemed the code')
  about('a token request without code_verifier', () =>
    expectOAuthError(res, 400, ['invalid_grant', 'invalid_request']),
  )
})

const PKCE_06 = check(async (ctx) => {
  const wrongVerifiers = [
    { what: 'a random well-formed verifier', verifier: () => randomVerifier(64) },
    // RFC 9700 §4.8: a server that also accepts plain would take the challenge as the verifier
    { what: 'the code_challenge sent as the verifier', verifier: (c: string) => c },
  ]
  // each wrong verifier is its own sub-case: every one accepted is reported
  for (const w of wrongVerifiers)
    await ctx.subcase(w.what, async () => {
      const auth = await authorize(ctx)
      const res = await redeemRaw(ctx, {
        code: codeOf(auth),
        verifier: w.verifier(auth.challenge),
        client: auth.client,
        redirectUri: auth.redirectUri,
      })
      expectThat(res.status !== 200, `${w.what}: redeemed the code (HTTP 200)`)
      // RFC 7636 §4.6: a mismatch is invalid_grant
      about(w.what, () => expectOAuthError(res, 400, 'invalid_grant'))
    })
})

const PKCE_07 = check(async (ctx) => {
  const insert = (c: string): string => `${randomVerifier(25)}${c}${randomVerifier(25)}`
  // RFC 7636 §4.1: code-verifier = 43*128unreserved
  const cases = [
    { what: 'a 43-character verifier', verifier: randomVerifier(43), valid: true },
    { what: 'a 128-character verifier', verifier: randomVerifier(128), valid: true },
    { what: 'a 42-character verifier', verifier: randomVerifier(42), valid: false },
    { what: 'a 129-character verifier', verifier: randomVerifier(129), valid: false },
    { what: 'a verifier containing +', verifier: insert('+'), valid: false },
    { what: 'a verifier containing /', verifier: insert('/'), valid: false },
    { what: 'a verifier containing =', verifier: insert('='), valid: false },
    { what: 'a verifier containing a space', verifier: insert(' '), valid: false },
    { what: 'a verifier containing é', verifier: insert('é'), valid: false },
  ]
  // each verifier is its own sub-case: every one misjudged is reported
  for (const c of cases)
    await ctx.subcase(c.what, async () => {
      // a matching challenge, so only the syntax rule can make the redemption fail
      const auth = await authorize(ctx, { params: { code_challenge: s256(c.verifier) } })
      const res = await redeemRaw(ctx, {
        code: codeOf(auth),
        verifier: c.verifier,
        client: auth.client,
        redirectUri: auth.redirectUri,
      })
      if (c.valid) {
        expectStatus(res, 200, `${c.what}: redeeming with its matching S256 challenge`)
        return
      }
      expectThat(res.status !== 200, `${c.what}: accepted with its matching challenge (HTTP 200)`)
      about(c.what, () => expectOAuthError(res, 400, ['invalid_grant', 'invalid_request']))
    })
})

/** How many wrong verifiers PKCE-08 tries on one code before the right one. */
const GUESSES = 10

const PKCE_08 = check(async (ctx) => {
  // the codes to guess on are preconditions: an authorization that fails says nothing of the
  // verifier's guessing (the threat table counts no such failure against PKCE downgrade)
  const first = await authorize(ctx)
  const code = aside('precondition', () => codeOf(first))
  const redeemWith = (verifier: string) =>
    redeemRaw(ctx, { code, verifier, client: first.client, redirectUri: first.redirectUri })
  const wrong = await redeemWith(randomVerifier(64))
  expectThat(wrong.status !== 200, 'a wrong code_verifier redeemed the code (see PKCE-06)')
  const retry = await redeemWith(first.verifier)
  if (retry.status !== 200) {
    ctx.note(
      `after one failed verifier the code was invalidated: the correct verifier got HTTP ${retry.status}`,
    )
    return
  }
  ctx.note('the correct verifier still redeemed the code after one failed attempt')
  // RFC 9700 §4.8, RFC 6749 §10.10: guessing on one code must be bounded
  const second = await authorize(ctx)
  const code2 = aside('precondition', () => codeOf(second))
  for (let i = 0; i < GUESSES; i++) {
    const res = await redeemRaw(ctx, {
      code: code2,
      verifier: randomVerifier(64),
      client: second.client,
      redirectUri: second.redirectUri,
    })
    expectThat(res.status !== 200, `wrong verifier ${i + 1} redeemed the code`)
  }
  const last = await redeemRaw(ctx, {
    code: code2,
    verifier: second.verifier,
    client: second.client,
    redirectUri: second.redirectUri,
  })
  expectThat(
    last.status !== 200,
    `${GUESSES} wrong verifiers on one code were all processed: the correct one then still redeemed it (unbounded guessing)`,
  )
})

/** The pkce checks, one per row of catalogue/pkce.ts. */
export const pkceChecks: AreaChecks<typeof catalogue> = {
  'PKCE-01': PKCE_01,
  'PKCE-02': PKCE_02,
  'PKCE-03': PKCE_03,
  'PKCE-04': PKCE_04,
  'PKCE-05': PKCE_05,
  'PKCE-06': PKCE_06,
  'PKCE-07': PKCE_07,
  'PKCE-08': PKCE_08,
}
