import { randomBytes } from 'node:crypto'
import { type AreaChecks, check } from '../harness/check.ts'
import type { security as catalogue } from '../catalogue/security.ts'
import type { HttpResponse } from '../harness/http.ts'
import { expectThat, show } from '../harness/expect.ts'
import {
  authorizeRaw,
  credentials,
  INTROSPECT,
  REVOKE,
  TOKEN,
  USER_INFO,
} from '../harness/requests.ts'

/** Referrer policies that send at most the origin to another site (W3C Referrer Policy §3). */
const SAFE_POLICIES = new Set([
  'no-referrer',
  'same-origin',
  'origin',
  'strict-origin',
  'origin-when-cross-origin',
  'strict-origin-when-cross-origin',
])

/** The policy in force: the last recognised token of the header, else a meta referrer. */
function referrerPolicy(res: HttpResponse): string | undefined {
  const tokens = (res.headers.get('referrer-policy') ?? '')
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '')
  const header = tokens.at(-1)
  if (header) return header
  return /<meta[^>]+name=["']?referrer["']?[^>]*content=["']?([\w-]+)/i
    .exec(res.text)?.[1]
    ?.toLowerCase()
}

const SEC_08 = check(async (ctx) => {
  // RFC 9700 §4.2.4: suppress the Referer header with a Referrer Policy on these pages
  const client = ctx.target.clients.main
  const valid = {
    client_id: client.id,
    redirect_uri: client.redirectUri ?? '',
    response_type: 'code',
    scope: 'openid',
    state: randomBytes(8).toString('hex'),
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbqGJSstw-cM',
    code_challenge_method: 'S256',
  }
  const pages: [string, HttpResponse][] = [
    ['login page', await authorizeRaw(ctx, valid)],
    ['error page', await authorizeRaw(ctx, { ...valid, client_id: `unknown-${valid.state}` })],
    [
      'logged-out page',
      await ctx.http.request('/auth/logout', { headers: { accept: 'text/html' } }),
    ],
  ]
  let checked = 0
  // each page is its own sub-case: a leak from one page does not hide another's
  for (const [what, res] of pages)
    await ctx.subcase(what, () => {
      if (res.status >= 300 && res.status < 400) {
        ctx.note(`${what}: a ${res.status} redirect, no page to examine`)
        return
      }
      if (!/text\/html/i.test(res.headers.get('content-type') ?? '')) {
        ctx.note(`${what}: not an HTML page (${res.status})`)
        return
      }
      checked++
      const policy = referrerPolicy(res)
      if (policy !== undefined && SAFE_POLICIES.has(policy)) return
      // RFC 9700 §4.2.4's other countermeasure: a page that loads and links nothing of another
      // origin sends no Referer to a third party whatever its policy
      const origin = new URL(ctx.target.baseUrl).origin
      const foreign = [
        ...res.text.matchAll(/(?:src|href|action)\s*=\s*["']?(https?:\/\/[^"'\s>]+)/gi),
      ]
        .map((m) => m[1] ?? '')
        .filter((u) => !u.startsWith(`${origin}/`) && u !== origin)
      if (foreign.length === 0) {
        ctx.note(
          `${what}: Referrer-Policy ${show(policy ?? null)}, but the page loads and links nothing of another origin`,
        )
        return
      }
      expectThat(
        false,
        `${what}: Referrer-Policy ${show(policy ?? null)} lets the URL of the authorization request leak in the Referer to ${show(foreign[0])} (RFC 9700 §4.2.4); expected no-referrer, same-origin or an origin-only policy`,
      )
    })
  expectThat(checked > 0, 'neither the login page nor the error page was served as HTML')
})

/** What an error body must not show: stack frames, source paths, SQL and driver errors. */
const INTERNALS: readonly [string, RegExp][] = [
  ['a stack trace', /\bat (?:async )?[\w$.<>[\] ]+ \(?[^()\s]+:\d+:\d+\)?|\n\s+at \S/],
  ['a source file path', /(?:\/[\w.@-]+){2,}\.(?:[cm]?[jt]s|py|java|rb|go|php)\b|node_modules/],
  ['a file system path', /(?:^|[\s"'(])(?:\/home|\/usr|\/srv|\/opt|\/var|\/app|[A-Z]:\\)[\\/]/],
  [
    'SQL or a database error',
    /\b(?:SELECT\s.+\sFROM|INSERT INTO|UPDATE\s\S+\sSET|SQLITE_\w+|syntax error at or near|duplicate key value|ER_\w+|knex:)/i,
  ],
  ['a runtime error name', /\b(?:TypeError|ReferenceError|RangeError|ECONNREFUSED|ENOENT):/],
]

const SEC_09 = check(async (ctx) => {
  const client = ctx.target.clients.main
  const junk = 'x'.repeat(5000)
  const requests: [string, () => Promise<HttpResponse>][] = [
    [
      'token, a JSON body',
      () =>
        ctx.http.request(TOKEN, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"grant_type":',
        }),
    ],
    [
      'token, bad percent-encoding',
      () =>
        ctx.http.request(TOKEN, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=%zz&client_id=%E0%A4%A',
        }),
    ],
    [
      'token, a NUL in the code',
      () =>
        ctx.http.postForm(TOKEN, {
          grant_type: 'authorization_code',
          code: 'a\u0000b',
          code_verifier: junk,
          redirect_uri: 'https://x/\u0000',
          ...credentials(client),
        }),
    ],
    [
      'token, repeated parameters',
      () =>
        ctx.http.postForm(TOKEN, {
          grant_type: ['client_credentials', 'refresh_token'],
          ...credentials(client),
        }),
    ],
    [
      'token, a quote in the refresh token',
      () =>
        ctx.http.postForm(TOKEN, {
          grant_type: 'refresh_token',
          refresh_token: `' OR 1=1 --`,
          ...credentials(client),
        }),
    ],
    [
      'token, a huge client_id',
      () =>
        ctx.http.postForm(TOKEN, {
          grant_type: 'client_credentials',
          client_id: junk,
          client_secret: junk,
        }),
    ],
    [
      'introspection, a bad content type',
      () =>
        ctx.http.request(INTROSPECT, {
          method: 'POST',
          headers: { 'content-type': 'text/xml' },
          body: '<token/>',
        }),
    ],
    [
      'introspection, a quote in the token',
      () => ctx.http.postForm(INTROSPECT, { token: `'";--`, ...credentials(client) }),
    ],
    [
      'revocation, an array token',
      () => ctx.http.postForm(REVOKE, { token: ['a', 'b'], ...credentials(client) }),
    ],
    [
      'user-info, a malformed JWT',
      () => ctx.http.request(USER_INFO, { headers: { authorization: 'Bearer eyJ.eyJ.%%%' } }),
    ],
    [
      'user-info, a broken scheme',
      () =>
        ctx.http.request(USER_INFO, { headers: { authorization: `Bearer ${'a'.repeat(9000)}` } }),
    ],
    [
      'branding, a strange client_id',
      () => ctx.http.get('/auth/branding', { client_id: `'; DROP TABLE clients; --` }),
    ],
    [
      'authorize, bad percent-encoding',
      () =>
        ctx.http.request('/auth/authorize?client_id=%zz&redirect_uri=%E0%A4', {
          headers: { accept: 'text/html' },
        }),
    ],
    [
      'logout, a garbage id_token_hint',
      () =>
        ctx.http.get('/auth/logout', {
          id_token_hint: 'eyJhbGciOiJub25lIn0.%%%.',
          post_logout_redirect_uri: 'javascript:alert(1)',
        }),
    ],
  ]
  // each request is its own sub-case: a leak at one endpoint does not hide another's
  for (const [what, send] of requests)
    await ctx.subcase(what, async () => {
      const res = await send()
      for (const [leak, pattern] of INTERNALS) {
        const m = pattern.exec(res.text)
        expectThat(
          !m,
          `${what}: the ${res.status} answer reveals ${leak}: ${show(res.text.slice(Math.max(0, (m?.index ?? 0) - 40), (m?.index ?? 0) + 80))}`,
        )
      }
    })
})

/**
 * The security checks of what pages and error bodies let out: the authorization request in a
 * Referer, internals in an error (the other rows of catalogue/security.ts: security-throttling.ts, security-tokens.ts, security-sessions.ts).
 */
export const securityLeakChecks = {
  'SEC-08': SEC_08,
  'SEC-09': SEC_09,
} satisfies Partial<AreaChecks<typeof catalogue>>
