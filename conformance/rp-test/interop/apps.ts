import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { randomBytes, createHash } from 'node:crypto'
import { rootCertificates } from 'node:tls'
import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import { custom as customV5, generators, Issuer } from 'openid-client-v5'
import { Agent } from 'undici'

/**
 * Relying-party web apps for the RP tests, each a small HTTP server on 127.0.0.1 with
 * `/login?issuer=` (starts a sign-in at that issuer) and `/callback` (finishes it, calls
 * user-info, and answers a page titled `signed-in` or `refused`: refused whenever the library
 * threw; `error` when the app itself broke, which a driver reports as could-not-run), and, for
 * a library that offers RP-initiated logout, `/logout` (to the issuer's end_session_endpoint)
 * and `/logged-out` (titled `logged-out` when the state is the one the logout sent), and, for a
 * library that refreshes, `/refresh` (redeems the refresh token of the sign-in and calls user-info
 * with the new access token: titled `refreshed`, `refused`, or `no-refresh` when it cannot). Two are built on widely used
 * libraries with separate protocol cores (openid-client v6 on oauth4webapi; openid-client v5,
 * its own core); the third is deliberately careless, the control that must be judged failing.
 */

export interface RpClientSettings {
  readonly clientId: string
  readonly clientSecret: string
  /** The reference server's CA (PEM), trusted beside the public roots; TLS checks stay on. */
  readonly caPem: string | undefined
}

/**
 * A finished sign-in: the user-info sub, the ID token a logout names as its hint, and the refresh
 * token a refresh redeems (when the token response had one).
 */
export interface RpSignedIn {
  readonly sub: string
  readonly idToken: string
  readonly refreshToken?: string | undefined
}

/** One library's sign-in: what to keep between /login and /callback is its own business. */
export interface RpLibrary {
  readonly name: string
  begin(issuer: string, redirectUri: string): Promise<{ url: string; session: unknown }>
  /** Resolves to the user-info sub when the sign-in is accepted; throws when refused. */
  finish(
    issuer: string,
    redirectUri: string,
    callback: URL,
    session: unknown,
  ): Promise<string | RpSignedIn>
  /**
   * The URL of an RP-initiated logout at the issuer's end_session_endpoint (rp-init-logout),
   * for a library that offers one; without it the app offers no logout.
   */
  logoutUrl?(
    issuer: string,
    params: { idToken: string; postLogoutRedirectUri: string; state: string },
  ): Promise<string>
  /**
   * Redeems the refresh token of a sign-in (oidcc-client-test-refresh-token) and calls user-info
   * with the new access token; resolves to that user-info sub, throws when refused. Without it the
   * app offers no refresh.
   */
  refresh?(issuer: string, signedIn: { refreshToken: string; sub: string }): Promise<string>
}

const SCOPE = 'openid profile email offline_access'

/**
 * openid-client v6 (oauth4webapi core), used as its README shows; `clientAuth: 'basic'` makes it
 * authenticate with HTTP Basic, as many libraries do by default (the issuers refuse that).
 */
export function openidClientV6(
  settings: RpClientSettings,
  clientAuth: 'post' | 'basic' = 'post',
): RpLibrary {
  const dispatcher = new Agent({
    connect: { ca: settings.caPem ? [...rootCertificates, settings.caPem] : undefined },
  })
  const configs = new Map<string, Promise<oidc.Configuration>>()
  const configOf = (issuer: string): Promise<oidc.Configuration> => {
    let config = configs.get(issuer)
    if (!config) {
      config = oidc.discovery(
        new URL(issuer),
        settings.clientId,
        undefined,
        clientAuth === 'basic'
          ? oidc.ClientSecretBasic(settings.clientSecret)
          : oidc.ClientSecretPost(settings.clientSecret),
        {
          [oidc.customFetch]: (url, options) =>
            fetch(url, { ...options, dispatcher } as RequestInit),
        },
      )
      configs.set(issuer, config)
      config.catch(() => configs.delete(issuer))
    }
    return config
  }
  return {
    name: 'openid-client v6',
    async begin(issuer, redirectUri) {
      const config = await configOf(issuer)
      const verifier = oidc.randomPKCECodeVerifier()
      const state = oidc.randomState()
      const nonce = oidc.randomNonce()
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: SCOPE,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      })
      return { url: url.href, session: { verifier, state, nonce } }
    },
    async finish(issuer, _redirectUri, callback, session) {
      const { verifier, state, nonce } = session as Record<string, string>
      const config = await configOf(issuer)
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      })
      const sub = tokens.claims()?.sub
      if (!sub) throw new Error('no ID token claims')
      const info = await oidc.fetchUserInfo(config, tokens.access_token, sub)
      return tokens.id_token
        ? { sub: info.sub, idToken: tokens.id_token, refreshToken: tokens.refresh_token }
        : info.sub
    },
    async refresh(issuer, { refreshToken, sub }) {
      const config = await configOf(issuer)
      const tokens = await oidc.refreshTokenGrant(config, refreshToken)
      // fetchUserInfo compares the user-info sub with the one of the sign-in (Core §5.3.4)
      return (await oidc.fetchUserInfo(config, tokens.access_token, sub)).sub
    },
    async logoutUrl(issuer, { idToken, postLogoutRedirectUri, state }) {
      return oidc.buildEndSessionUrl(await configOf(issuer), {
        id_token_hint: idToken,
        post_logout_redirect_uri: postLogoutRedirectUri,
        state,
      }).href
    },
  }
}

/**
 * openid-client v5 (its own protocol core, not oauth4webapi), used as its README shows: by
 * default it discovers the issuer afresh for every sign-in; `keepIssuer` keeps the discovered
 * Issuer (and so its JWKS) for the app's life, as a long-running app does.
 */
export function openidClientV5(
  settings: RpClientSettings,
  options: { keepIssuer?: boolean } = {},
): RpLibrary {
  if (settings.caPem)
    customV5.setHttpOptionsDefaults({ ca: [...rootCertificates, settings.caPem], timeout: 10_000 })
  const kept = new Map<string, Promise<Issuer>>()
  const discover = (issuer: string): Promise<Issuer> => {
    if (!options.keepIssuer) return Issuer.discover(issuer)
    let found = kept.get(issuer)
    if (!found) {
      found = Issuer.discover(issuer)
      kept.set(issuer, found)
      found.catch(() => kept.delete(issuer))
    }
    return found
  }
  const clientOf = async (issuer: string, redirectUri: string) => {
    const discovered = await discover(issuer)
    return new discovered.Client({
      client_id: settings.clientId,
      client_secret: settings.clientSecret,
      redirect_uris: [redirectUri],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    })
  }
  return {
    name: 'openid-client v5',
    async begin(issuer, redirectUri) {
      const client = await clientOf(issuer, redirectUri)
      const verifier = generators.codeVerifier()
      const state = generators.state()
      const nonce = generators.nonce()
      const url = client.authorizationUrl({
        scope: SCOPE,
        redirect_uri: redirectUri,
        code_challenge: generators.codeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      })
      return { url, session: { verifier, state, nonce } }
    },
    async finish(issuer, redirectUri, callback, session) {
      const { verifier, state, nonce } = session as Record<string, string>
      const client = await clientOf(issuer, redirectUri)
      const params = client.callbackParams(callback.href)
      const tokenSet = await client.callback(redirectUri, params, {
        code_verifier: verifier,
        state,
        nonce,
      })
      const info = await client.userinfo(tokenSet)
      return tokenSet.id_token
        ? { sub: info.sub, idToken: tokenSet.id_token, refreshToken: tokenSet.refresh_token }
        : info.sub
    },
    async refresh(issuer, { refreshToken, sub }) {
      const client = await clientOf(issuer, 'http://127.0.0.1/callback')
      const tokenSet = await client.refresh(refreshToken)
      // userinfo compares the sub only with an ID token in the set, and a refresh answers none
      const info = await client.userinfo(tokenSet.access_token ?? '')
      if (info.sub !== sub) throw new Error(`user-info sub ${info.sub} is not ${sub}`)
      return info.sub
    },
    async logoutUrl(issuer, { idToken, postLogoutRedirectUri, state }) {
      const client = await clientOf(issuer, `${new URL(postLogoutRedirectUri).origin}/callback`)
      return client.endSessionUrl({
        id_token_hint: idToken,
        post_logout_redirect_uri: postLogoutRedirectUri,
        state,
      })
    },
  }
}

/**
 * The control: a client that does everything a careless integration does. It sends state and
 * nonce but never compares them, decodes the ID token without verifying anything, ignores
 * token_type and iss, and trusts user-info. A correct judge must fail it.
 */
export function carelessClient(settings: RpClientSettings): RpLibrary {
  const dispatcher = new Agent({
    connect: { ca: settings.caPem ? [...rootCertificates, settings.caPem] : undefined },
  })
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await fetch(url, { headers, dispatcher } as RequestInit)
    return (await res.json()) as Record<string, unknown>
  }
  /** The access token of each sign-in, by its refresh token (what a failed refresh falls back to). */
  const refreshing = new Map<string, string>()
  return {
    name: 'careless client',
    async begin(issuer, redirectUri) {
      const doc = await get(`${issuer}/.well-known/openid-configuration`)
      const verifier = randomBytes(32).toString('base64url')
      const url = new URL(String(doc.authorization_endpoint))
      url.search = new URLSearchParams({
        client_id: settings.clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: SCOPE,
        state: randomBytes(8).toString('hex'),
        nonce: randomBytes(8).toString('hex'),
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString()
      return { url: url.href, session: { verifier, doc } }
    },
    async finish(_issuer, redirectUri, callback, session) {
      const { verifier, doc } = session as { verifier: string; doc: Record<string, unknown> }
      const res = await fetch(String(doc.token_endpoint), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code') ?? '',
          redirect_uri: redirectUri,
          code_verifier: verifier,
          client_id: settings.clientId,
          client_secret: settings.clientSecret,
        }).toString(),
        dispatcher,
      } as RequestInit)
      const tokens = (await res.json()) as Record<string, string>
      if (!tokens.access_token) throw new Error(`token endpoint: ${JSON.stringify(tokens)}`)
      // deliberately careless: no signature, iss, aud, exp, nonce or at_hash check
      decodeJwt(tokens.id_token ?? '')
      const info = await get(String(doc.userinfo_endpoint), {
        authorization: `Bearer ${tokens.access_token}`,
      })
      refreshing.set(tokens.refresh_token ?? '', tokens.access_token)
      return {
        sub: String(info.sub),
        idToken: tokens.id_token ?? '',
        refreshToken: tokens.refresh_token,
      }
    },
    async refresh(issuer, { refreshToken }) {
      // deliberately careless: a refresh without client authentication (RFC 6749 §6 requires it
      // of a confidential client), its error ignored, and the old access token used on
      const doc = await get(`${issuer}/.well-known/openid-configuration`)
      const res = await fetch(String(doc.token_endpoint), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: settings.clientId,
        }).toString(),
        dispatcher,
      } as RequestInit)
      const tokens = (await res.json()) as Record<string, string>
      const access = tokens.access_token ?? refreshing.get(refreshToken) ?? ''
      const info = await get(String(doc.userinfo_endpoint), { authorization: `Bearer ${access}` })
      return String(info.sub)
    },
    async logoutUrl(issuer, { postLogoutRedirectUri, state }) {
      // deliberately careless: logs out by client_id, without the ID token as id_token_hint
      const doc = await get(`${issuer}/.well-known/openid-configuration`)
      const url = new URL(String(doc.end_session_endpoint))
      url.search = new URLSearchParams({
        client_id: settings.clientId,
        post_logout_redirect_uri: postLogoutRedirectUri,
        state,
      }).toString()
      return url.href
    },
  }
}

const page = (res: ServerResponse, status: number, title: string, body: string): void => {
  const esc = body.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
  res.end(`<!doctype html><title>${title}</title><p id="result">${esc}</p>`)
}

/** Serves one library as a web app on 127.0.0.1 (a free port); `stop` closes it. */
export async function startRpApp(
  library: RpLibrary,
): Promise<{ url: string; stop(): Promise<void> }> {
  const sessions = new Map<string, { issuer: string; state: unknown }>()
  /** Signed-in sessions, for the logout: the issuer, the ID token, the logout's state. */
  const signedIn = new Map<
    string,
    { issuer: string; idToken: string; sub: string; refreshToken?: string; logoutState?: string }
  >()
  let origin = ''
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin)
      const redirectUri = `${origin}/callback`
      if (url.pathname === '/login') {
        const issuer = url.searchParams.get('issuer') ?? ''
        let begun: { url: string; session: unknown }
        try {
          begun = await library.begin(issuer, redirectUri)
        } catch (err) {
          return page(res, 502, 'refused', `${library.name} refused: ${(err as Error).message}`)
        }
        const { url: authorize, session } = begun
        const sid = randomBytes(16).toString('hex')
        sessions.set(sid, { issuer, state: session })
        res.writeHead(302, {
          location: authorize,
          'set-cookie': `sid=${sid}; HttpOnly; SameSite=Lax; Path=/`,
        })
        res.end()
        return
      }
      const sid = /(?:^|;\s*)sid=([0-9a-f]+)/.exec(req.headers.cookie ?? '')?.[1] ?? ''
      if (url.pathname === '/callback') {
        const session = sessions.get(sid)
        sessions.delete(sid)
        if (!session) return page(res, 400, 'refused', 'no sign-in in progress')
        let done: string | RpSignedIn
        try {
          done = await library.finish(session.issuer, redirectUri, url, session.state)
        } catch (err) {
          return page(res, 401, 'refused', `${library.name} refused: ${(err as Error).message}`)
        }
        if (typeof done === 'string') return page(res, 200, 'signed-in', `signed in as ${done}`)
        signedIn.set(sid, {
          issuer: session.issuer,
          idToken: done.idToken,
          sub: done.sub,
          ...(done.refreshToken ? { refreshToken: done.refreshToken } : {}),
        })
        return page(res, 200, 'signed-in', `signed in as ${done.sub}`)
      }
      if (url.pathname === '/refresh') {
        // the refresh token of the sign-in redeemed, and user-info called with the new token
        const session = signedIn.get(sid)
        if (!library.refresh || !session?.refreshToken)
          return page(res, 404, 'no-refresh', `${library.name}: no refresh token to redeem`)
        let sub: string
        try {
          sub = await library.refresh(session.issuer, {
            refreshToken: session.refreshToken,
            sub: session.sub,
          })
        } catch (err) {
          return page(res, 401, 'refused', `${library.name} refused: ${(err as Error).message}`)
        }
        return page(res, 200, 'refreshed', `refreshed; user-info says ${sub}`)
      }
      if (url.pathname === '/logout') {
        // RP-initiated logout: to the issuer's end_session_endpoint, back to /logged-out
        const session = signedIn.get(sid)
        if (!library.logoutUrl || !session)
          return page(res, 404, 'no-logout', `${library.name}: no signed-in session to log out`)
        const state = randomBytes(16).toString('hex')
        session.logoutState = state
        const to = await library.logoutUrl(session.issuer, {
          idToken: session.idToken,
          postLogoutRedirectUri: `${origin}/logged-out`,
          state,
        })
        res.writeHead(302, { location: to, 'cache-control': 'no-store' })
        res.end()
        return
      }
      if (url.pathname === '/logged-out') {
        // the redirect back is this app's only if it carries the state its logout sent
        const session = signedIn.get(sid)
        signedIn.delete(sid)
        const state = url.searchParams.get('state')
        if (!session?.logoutState || state !== session.logoutState)
          return page(
            res,
            400,
            'refused',
            `logged-out redirect with state ${String(state)}, not ours`,
          )
        return page(res, 200, 'logged-out', 'logged out')
      }
      page(res, 404, 'not found', 'no such page')
    })().catch((err: unknown) => page(res, 500, 'error', `error: ${(err as Error).message}`))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  origin = `http://127.0.0.1:${address.port}`
  return {
    url: origin,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
