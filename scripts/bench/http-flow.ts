import { createHash, randomBytes } from 'node:crypto'
import { Agent } from 'undici'

export interface Http {
  (path: string, init?: RequestInit): Promise<Response>
}

/** fetch against the bench's server, trusting its dev CA (TLS verification on). */
export function httpTo(baseUrl: string, ca: string): Http {
  const dispatcher = new Agent({ connect: { ca }, connections: 64 })
  return (path, init = {}) =>
    globalThis.fetch(baseUrl + path, { ...init, redirect: 'manual', dispatcher } as RequestInit)
}

const form = (values: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(values).toString(),
})

export const CLIENT = { client_id: 'conformance-client', client_secret: 'conformance-secret' }
export const REDIRECT = 'https://client.example/callback'

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

const authorizeQuery = (challenge: string, scope: string) =>
  new URLSearchParams({
    client_id: CLIENT.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope,
    state: 'bench',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString()

/** Opens the login page of an authorization request and posts alice's sign-in with `password`. */
async function postLogin(
  http: Http,
  challenge: string,
  scope: string,
  password: string,
): Promise<Response> {
  const page = await http(`/auth/authorize?${authorizeQuery(challenge, scope)}`)
  const html = await page.text()
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? ''
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ')
  return http('/auth/login', {
    ...form({
      interaction: field('interaction'),
      csrf: field('csrf'),
      username: 'alice',
      password,
      action: 'login',
    }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
  })
}

/**
 * A failed sign-in over HTTP (the login page, then a wrong password): its password hash is the
 * sign-in flood's cost. Returns the login POST's status (401, or 503 when the hashing queue is
 * full, or 429 when a limit refuses it).
 */
export async function failedSignIn(http: Http): Promise<number> {
  const res = await postLogin(http, pkce().challenge, 'openid', 'not-the-password')
  await res.arrayBuffer()
  return res.status
}

/** A full sign-in over HTTP without a browser: authorize, login POST, token. Returns the tokens and the session cookie. */
export async function signIn(
  http: Http,
  scope = 'openid profile email offline_access read:documents',
) {
  const { verifier, challenge } = pkce()
  const login = await postLogin(http, challenge, scope, 'wonderland')
  await login.arrayBuffer()
  const location = login.headers.get('location') ?? ''
  const session =
    login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .find((c) => c?.startsWith('__Host-idp_session=')) ?? ''
  const code = new URL(location).searchParams.get('code') ?? ''
  const res = await http(
    '/auth/token',
    form({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      ...CLIENT,
    }),
  )
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`)
  return { tokens: (await res.json()) as Record<string, string>, session }
}

/** Mints a code from a live session (no login page): what the code-exchange scenario redeems. */
export async function mintCode(
  http: Http,
  session: string,
): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkce()
  const res = await http(`/auth/authorize?${authorizeQuery(challenge, 'openid')}`, {
    headers: { cookie: session },
  })
  await res.arrayBuffer()
  const code = new URL(res.headers.get('location') ?? '').searchParams.get('code')
  if (!code) throw new Error(`no code from a live session (${res.status})`)
  return { code, verifier }
}

export async function clientCredentials(http: Http): Promise<string> {
  const res = await http(
    '/auth/token',
    form({
      grant_type: 'client_credentials',
      client_id: 'service-client',
      client_secret: 'service-secret',
    }),
  )
  return ((await res.json()) as { access_token: string }).access_token
}

export { form }
