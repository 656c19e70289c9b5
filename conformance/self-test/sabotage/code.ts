import { http, HttpResponse, type HttpHandler } from 'msw'
import type { code } from '../../catalogue/code.ts'
import {
  codesNeverExpire,
  codesRepeatPerSignIn,
  codesSpentByAnyRequest,
  corruptTokenJson,
  escapeRegExp,
  forgeTokens,
  forward,
  headerPairs,
  type Answer,
  type Json,
  keepsFirstAnswer,
  perPart,
  rewriteTokenForm,
  type Sabotage,
  shortCode,
  showCodesAs,
  weakCode,
  type Sabotages,
  type Target,
  TOKEN,
} from './kit.ts'

/**
 * A token endpoint that remembers codes: `onRepeat` decides how a code seen before is answered
 * (given the first answer), which is how a non-atomic, non-single-use code store looks.
 */
function rememberCodes(onRepeat: (first: Answer) => Answer) {
  return (target: Target): HttpHandler[] => {
    const first = new Map<string, Promise<Answer>>()
    return [
      http.post(target.baseUrl + TOKEN, async ({ request }) => {
        const text = await request.text()
        const form = new URLSearchParams(text)
        const code = form.get('grant_type') === 'authorization_code' ? form.get('code') : null
        const earlier = code === null ? undefined : first.get(code)
        if (earlier) {
          const answer = onRepeat(await earlier)
          return new HttpResponse(answer.body, answer)
        }
        const pending = forward(target, request, { body: text }).then(
          async (real): Promise<Answer> => ({
            status: real.status,
            headers: headerPairs(real.headers),
            body: await real.text(),
          }),
        )
        if (code !== null) first.set(code, pending)
        const answer = await pending
        return new HttpResponse(answer.body, answer)
      }),
    ]
  }
}

/** A second redemption of a code gets the first one's 200 again. */
const replayGetsFirstAnswer = rememberCodes((first) => first)

/** An OAuth error answer (INTERFACE.md §7) as a remembered code's store replays it. */
const errorAnswer = (status: number, error: string, description: string): Answer => ({
  status,
  headers: [
    ['content-type', 'application/json'],
    ['cache-control', 'no-store'],
    ['pragma', 'no-cache'],
  ],
  body: JSON.stringify({ error, error_description: description }),
})

/** Token requests of `client` for the code grant that the real server refuses invalid_grant. */
const codeRefusalOf =
  (who: (form: URLSearchParams, target: Target) => boolean, error: string) =>
  (target: Target): HttpHandler[] =>
    corruptTokenJson((b, answer) => {
      if (
        answer.form.get('grant_type') === 'authorization_code' &&
        b.error === 'invalid_grant' &&
        who(answer.form, target)
      )
        b.error = error
    })(target)

/** How to break the target for each CODE-* check. */
export const codeSabotage: Record<keyof typeof code, Sabotages> = {
  // one sabotage per member of the code grant's response the check asserts
  'CODE-01': perPart([
    {
      how: 'the code grant returns no id_token',
      expect: /^id_token: expected a JWT for scope openid/,
      handlers: corruptTokenJson((b) => {
        delete b.id_token
      }),
    },
    ...(
      [
        [
          'an empty access_token',
          /^access_token: expected a non-empty string, got ""/,
          (b) => (b.access_token = ''),
        ],
        [
          'token_type "mac"',
          /^token_type: expected Bearer, got "mac"/,
          (b) => (b.token_type = 'mac'),
        ],
        ['expires_in 7200', /^expires_in: expected 3600, got 7200/, (b) => (b.expires_in = 7200)],
        ['no scope', /^scope: expected a string, got undefined/, (b) => delete b.scope],
        [
          'a scope without openid',
          /^scope: openid missing from /,
          (b) => (b.scope = String(b.scope).replace(/\bopenid\b ?/, '')),
        ],
        [
          'offline_access granted without a refresh_token',
          /^offline_access was granted but no refresh_token came back/,
          (b) => delete b.refresh_token,
        ],
      ] as const satisfies readonly (readonly [string, RegExp, (b: Json) => unknown])[]
    ).map(([what, expected, change]): Sabotage => ({
      how: `the code grant answers ${what}`,
      expect: expected,
      handlers: corruptTokenJson((b, { form }) => {
        if (form.get('grant_type') === 'authorization_code' && b.access_token !== undefined)
          change(b)
      }),
    })),
    {
      how: 'the ID token of the code grant carries another nonce',
      expect: /^ID token nonce: expected /,
      handlers: forgeTokens({
        id: (jwt, ex) => {
          if (ex.form.get('grant_type') === 'authorization_code') jwt.payload.nonce = 'other-nonce'
          else jwt.keep = true
        },
      }),
    },
  ]),
  'CODE-02': {
    how: 'a second redemption is answered 200 with the first tokens',
    expect: /^the code was redeemed a second time/,
    handlers: replayGetsFirstAnswer,
  },
  // one sabotage per token that a replay must revoke: the refresh token, and the access token
  // as user-info and as introspection see it
  'CODE-03': [
    {
      how: 'a replayed code is refused without revoking its tokens',
      expect: /^the refresh token still works after the code replay/,
      // the replay never reaches the server, so nothing is revoked
      handlers: rememberCodes((first) =>
        errorAnswer(
          400,
          'invalid_grant',
          first.status === 200 ? 'code already used' : 'invalid code',
        ),
      ),
    },
    {
      how: 'user-info keeps accepting an access token revoked by a code replay',
      expect: /^user-info with the access token after the code replay: expected 401, got 200/,
      handlers: keepsFirstAnswer('/auth/user-info', (res) => res.status !== 200),
    },
    {
      how: 'introspection keeps calling an access token revoked by a code replay active',
      expect: /^introspection active after the replay: expected false, got true/,
      handlers: keepsFirstAnswer('/auth/introspect', (_res, body) => body.active === false),
    },
  ],
  // one sabotage for the race lost (more than one win), one per part of the losers' refusal
  'CODE-04': [
    {
      how: 'concurrent redemptions of one code all get the winning tokens',
      expect: /^successful redemptions of 5 concurrent ones: expected 1, got [2-5]/,
      handlers: replayGetsFirstAnswer,
    },
    {
      how: 'the redemptions that lose the race crash on the used code (500)',
      expect: /^a losing concurrent redemption: status: expected HTTP 400, got 500 from /,
      handlers: rememberCodes(() => errorAnswer(500, 'server_error', 'duplicate key')),
    },
    {
      how: 'the redemptions that lose the race are refused invalid_request',
      expect:
        /^a losing concurrent redemption: error: expected invalid_grant, got "invalid_request"/,
      handlers: rememberCodes(() => errorAnswer(400, 'invalid_request', 'code already used')),
    },
  ],
  'CODE-05': [
    {
      how: 'the token request redirect_uri is normalised to the registered one',
      expect: /^redirect_uri with a trailing slash: the code was redeemed/,
      handlers: rewriteTokenForm((form, target) => {
        if (form.get('grant_type') === 'authorization_code' && target.clients.main.redirectUri)
          form.set('redirect_uri', target.clients.main.redirectUri)
      }),
    },
    {
      how: 'a token request without redirect_uri is taken as the registered one',
      expect: /^redirect_uri omitted: the code was redeemed/,
      handlers: rewriteTokenForm((form, target) => {
        const registered = target.clients.main.redirectUri
        if (form.get('grant_type') === 'authorization_code' && !form.has('redirect_uri'))
          form.set('redirect_uri', registered ?? '')
      }),
    },
  ],
  // one sabotage for the code redeemed, one for the refusal's error code
  'CODE-06': [
    {
      how: 'a code is redeemed for whichever client presents it',
      expect: /^client other-client redeemed a code issued to conformance-client/,
      handlers: rewriteTokenForm((form, target) => {
        const { main, other } = target.clients
        if (other && form.get('client_id') === other.id) {
          form.set('client_id', main.id)
          form.set('client_secret', main.secret)
        }
      }),
    },
    {
      how: "another client's code is refused unauthorized_client",
      expect:
        /^client other-client presenting the code: error: expected invalid_grant, got "unauthorized_client"/,
      handlers: codeRefusalOf(
        (form, target) => form.get('client_id') === target.clients.other?.id,
        'unauthorized_client',
      ),
    },
  ],
  // one sabotage for the expiry, one for the refusal's error code
  'CODE-07': [
    {
      how: 'the code expiry is not checked',
      expect: /^a code was still accepted 601 s after issue/,
      store: codesNeverExpire,
    },
    {
      how: 'an expired code is refused invalid_request',
      expect: /^a code 601 s after issue: error: expected invalid_grant, got "invalid_request"/,
      handlers: codeRefusalOf(() => true, 'invalid_request'),
    },
  ],
  // one sabotage per malformed code and for the missing one (each a sub-case)
  'CODE-08': perPart([
    {
      how: 'an unknown code crashes the token endpoint (500)',
      expect: /^a random code: status: expected HTTP 400, got 500 from \S+\/auth\/token/,
      handlers: corruptTokenJson((b, answer) => {
        if (b.error !== 'invalid_grant') return
        b.error = 'server_error'
        answer.status = 500
      }),
    },
    ...(
      [
        ['a code with spaces and symbols', (code: string) => code.includes(' ')],
        ['a 4096-character code', (code: string) => code.length >= 4096],
      ] as const
    ).map(([what, matches]): Sabotage => ({
      how: `${what} crashes the token endpoint (500)`,
      expect: new RegExp(`^${escapeRegExp(what)}: status: expected HTTP 400, got 500 from `),
      handlers: corruptTokenJson((b, answer) => {
        if (!matches(answer.form.get('code') ?? '') || answer.status === 200) return
        b.error = 'server_error'
        answer.status = 500
      }),
    })),
    {
      how: 'a token request without code is answered invalid_grant',
      expect: /^no code parameter: error: expected invalid_request, got "invalid_grant"/,
      handlers: corruptTokenJson((b, answer) => {
        if (!answer.form.has('code') && b.error === 'invalid_request') b.error = 'invalid_grant'
      }),
    },
  ]),
  // one sabotage per place the widened scope may show: the response, the access token, the ID token
  'CODE-09': [
    {
      how: 'the token endpoint grants the scope parameter of the token request',
      expect: /^a code for scope=openid came back with scope=/,
      handlers: corruptTokenJson((b, answer) => {
        const scope = answer.form.get('scope')
        if (answer.status === 200 && scope !== null) b.scope = scope
      }),
    },
    {
      how: "the access token carries the token request's scope; the response reports the code's",
      expect: /^the access token scope was widened to /,
      handlers: forgeTokens({
        access: (jwt, { form }) => {
          const scope = form.get('scope')
          if (scope === null) jwt.keep = true
          else jwt.payload.scope = scope
        },
      }),
    },
    {
      how: "the ID token carries the claims of the token request's scope",
      expect: /^the ID token carries email, which scope=openid does not allow/,
      handlers: forgeTokens({
        id: (jwt, { form }) => {
          if (!(form.get('scope') ?? '').split(' ').includes('email')) jwt.keep = true
          else jwt.payload.email = 'someone@example.com'
        },
      }),
    },
  ],
  // one sabotage per property of the codes (each a sub-case)
  'CODE-10': [
    {
      how: 'codes carry 32 random bits behind a fixed prefix',
      expect: /^code entropy: codes carry an estimated \d+ bits of entropy \(< 96\)/,
      extend: showCodesAs(weakCode),
    },
    {
      how: 'codes are 15 characters (88 random bits)',
      expect: /^code length: a code of 15 characters \(at least 16 expected\)/,
      extend: showCodesAs(shortCode),
    },
    {
      how: 'every authorization of one sign-in gets the same code',
      expect: /^distinct codes among 20: expected 20, got 1/,
      ...codesRepeatPerSignIn(),
    },
  ],
  'CODE-11': {
    how: 'a token request with a wrong redirect_uri spends the code',
    expect:
      /^after a token request with a wrong redirect_uri, the rightful redemption was refused \(HTTP 400, invalid_grant\): the refused request spent the code/,
    store: codesSpentByAnyRequest,
  },
}
