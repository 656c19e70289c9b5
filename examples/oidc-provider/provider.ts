import { createServer, type Server } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'
import Provider, {
  interactionPolicy,
  type Configuration,
  type KoaContextWithOIDC,
} from 'oidc-provider'
import { createDevCertificate } from '../../server/tls.ts'
import {
  consentPage,
  continuePage,
  esc,
  html,
  LOGIN_SCRIPT,
  loginPage,
  readBody,
  scriptLoginPage,
} from './pages.ts'

/**
 * node-oidc-provider 8.8.1, a third-party OpenID-certified provider, configured as close to
 * INTERFACE.md as it allows: one confidential client (client_secret_post) with the three grants,
 * the two fixture users, PKCE S256 required, refresh tokens, client_credentials, introspection,
 * revocation, RP-initiated logout, and RS256 JWT access tokens through resource indicators (its
 * only way to issue JWT access tokens). The endpoints sit at INTERFACE.md's paths (`routes`).
 * The login page is ours (the provider leaves interactions to the deployment): a
 * username/password form at `/interaction/<uid>`, as its documentation's example has it.
 *
 * `ProviderFeatures` turns on, one at a time, what real deployments put in a client's way
 * (examples/oidc-provider-spa runs them all): a consent page, a login page built by a script
 * that signs in with fetch, a "continue" interstitial while a session is alive, and rotated
 * refresh tokens whose reuse revokes the grant and the session that issued them.
 */

export const CLIENT = {
  id: 'conformance-client',
  secret: 'conformance-secret-for-the-example-provider',
  redirectUri: 'https://client.example/callback',
  postLogoutRedirectUri: 'https://client.example/logged-out',
} as const

export const USERS = {
  primary: { username: 'alice', password: 'wonderland' },
  secondary: { username: 'bob', password: 'builder' },
} as const

interface Account {
  readonly sub: string
  readonly password: string
  readonly name: string
  readonly email: string
  readonly emailVerified: boolean
  readonly roles: readonly string[]
  readonly orgId: string
}

const ACCOUNTS: Readonly<Record<string, Account>> = {
  alice: {
    sub: 'usr_alice',
    password: USERS.primary.password,
    name: 'Alice Liddell',
    email: 'alice@example.com',
    emailVerified: true,
    roles: ['admin'],
    orgId: 'org-1',
  },
  bob: {
    sub: 'usr_bob',
    password: USERS.secondary.password,
    name: 'Bob Builder',
    email: 'bob@example.com',
    emailVerified: false,
    roles: ['viewer'],
    orgId: 'org-2',
  },
}
const bySub = new Map(Object.values(ACCOUNTS).map((a) => [a.sub, a]))

/** The resource server the JWT access tokens are for (resource indicators, RFC 8707). */
const RESOURCE = 'https://api.example'
const API_SCOPES = 'read:documents write:documents'
const UPDATED_AT = 1767225600

/**
 * What real deployments put between a client and its code, each on its own (all off: the
 * plain example). examples/oidc-provider-spa turns every one on.
 */
export interface ProviderFeatures {
  /** A consent page (Allow / Deny) whenever the grant lacks a scope asked for. */
  readonly consent?: boolean
  /**
   * The login page is built by a script: the served HTML has no form, and the script signs in
   * with a JSON POST (fetch) and then moves the window to where the answer says.
   */
  readonly scriptLogin?: boolean
  /** "Continue as …?" on every authorization while a session is alive (not with prompt=none). */
  readonly interstitial?: boolean
  /**
   * Refresh tokens rotate on every use, and a rotated one presented again revokes the grant
   * (the provider's default revokeGrantPolicy) and ends the session it was issued in (RFC 9700
   * §4.14.2: the server may revoke the active refresh token and the grant on reuse).
   */
  readonly revokeOnReuse?: boolean
}

/** The deployment's own interaction routes (login, continue, consent, cancel). */
async function interaction(
  provider: Provider,
  baseUrl: string,
  features: ProviderFeatures,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'https://localhost')
  const [, , uid, action] = url.pathname.split('/')
  const page = (status: number, body: string): void => html(res, status, body)
  const json = (status: number, body: Record<string, unknown>): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(JSON.stringify(body))
  }
  const login = (error?: string): string =>
    features.scriptLogin ? scriptLoginPage(uid ?? '') : loginPage(uid ?? '', error)
  try {
    const details = await provider.interactionDetails(req, res)
    if (!uid || details.uid !== uid) return page(400, '<p>unknown interaction</p>')
    const prompt = details.prompt.name
    if (req.method === 'GET' && action === undefined) {
      if (prompt === 'continue' && url.searchParams.get('switch') !== '1') {
        const account = bySub.get(details.session?.accountId ?? '')
        return page(200, continuePage(uid, account?.name ?? 'your account'))
      }
      if (prompt === 'consent' && features.consent) {
        const missing = details.prompt.details as {
          missingOIDCScope?: string[]
          missingResourceScopes?: Record<string, string[]>
        }
        const scopes = [
          ...(missing.missingOIDCScope ?? []),
          ...Object.values(missing.missingResourceScopes ?? {}).flat(),
        ]
        return page(200, consentPage(uid, String(details.params.client_id), scopes))
      }
      if (prompt === 'consent') return await giveConsent(provider, details, req, res)
      return page(200, login())
    }
    // login CSRF: a cross-site post is refused (the cookies' SameSite=Lax keeps a browser
    // from sending them cross-site; a client that sends them anyway meets this)
    const origin = req.headers.origin
    if (req.method === 'POST' && origin !== undefined && origin !== new URL(baseUrl).origin)
      return page(403, '<p>cross-origin sign-in refused</p>')
    if (req.method === 'POST' && action === 'login') {
      const form = new URLSearchParams(await readBody(req))
      const account = ACCOUNTS[form.get('username') ?? '']
      if (!account || account.password !== form.get('password'))
        return page(401, login('Wrong username or password.'))
      return await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account.sub } },
        { mergeWithLastSubmission: false },
      )
    }
    if (req.method === 'POST' && action === 'login-json' && features.scriptLogin) {
      let body: unknown
      try {
        body = JSON.parse(await readBody(req))
      } catch {
        return json(400, { error: 'the body is not JSON' })
      }
      const { username, password } = (body ?? {}) as { username?: unknown; password?: unknown }
      const account = typeof username === 'string' ? ACCOUNTS[username] : undefined
      if (!account || account.password !== password)
        return json(401, { error: 'Wrong username or password.' })
      const location = await provider.interactionResult(
        req,
        res,
        { login: { accountId: account.sub } },
        { mergeWithLastSubmission: false },
      )
      return json(200, { location })
    }
    if (req.method === 'POST' && action === 'continue' && prompt === 'continue')
      return await provider.interactionFinished(
        req,
        res,
        { continue: { confirmed: true } },
        { mergeWithLastSubmission: true },
      )
    if (req.method === 'POST' && action === 'confirm' && prompt === 'consent')
      return await giveConsent(provider, details, req, res)
    if (req.method === 'POST' && action === 'abort')
      return await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'End-User aborted interaction' },
        { mergeWithLastSubmission: false },
      )
    return page(405, '<p>method not allowed</p>')
  } catch (err) {
    // an expired or unknown interaction (its cookie is gone): the provider's own words
    return page(400, `<p>${esc((err as Error).message)}</p>`)
  }
}

/**
 * Gives the consent the interaction asks for (every missing scope, including offline_access
 * when prompt=consent asked for it), as the documentation's example of a consent interaction.
 */
async function giveConsent(
  provider: Provider,
  details: Awaited<ReturnType<Provider['interactionDetails']>>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { grantId, session, params } = details
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({
        accountId: session?.accountId ?? '',
        clientId: String(params.client_id),
      })
  if (!grant) return html(res, 400, '<p>unknown grant</p>')
  const missing = details.prompt.details as {
    missingOIDCScope?: string[]
    missingResourceScopes?: Record<string, string[]>
  }
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
    grant.addResourceScope(resource, scopes.join(' '))
  const id = await grant.save()
  return provider.interactionFinished(
    req,
    res,
    { consent: { grantId: id } },
    { mergeWithLastSubmission: true },
  )
}

/**
 * The "continue" interstitial as a prompt of the provider's interaction policy, after login:
 * asked on an authorization that found a session, unless this authorization signed the user in
 * or already continued, or asked for no interaction (prompt=none).
 */
function continuePrompt(): InstanceType<typeof interactionPolicy.Prompt> {
  const { Prompt, Check } = interactionPolicy
  return new Prompt(
    { name: 'continue', requestable: false },
    new Check('continue_required', 'the End-User confirms the account to continue with', (ctx) => {
      const { oidc } = ctx
      if (oidc.prompts.has('none') || !oidc.session?.accountId) return Check.NO_NEED_TO_PROMPT
      const result = oidc.result as { login?: unknown; continue?: unknown } | undefined
      return result?.login || result?.continue ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT
    }),
  )
}

/** First-party consent: every scope asked for is granted with the session's grant. */
async function loadExistingGrant(ctx: KoaContextWithOIDC) {
  const { client, session, params } = ctx.oidc
  if (!client || !session?.accountId) return undefined
  const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId)
  const grant = grantId
    ? await ctx.oidc.provider.Grant.find(grantId)
    : new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId })
  if (!grant) return undefined
  grant.addOIDCScope(typeof params?.scope === 'string' ? params.scope : 'openid')
  grant.addResourceScope(RESOURCE, API_SCOPES)
  await grant.save()
  return grant
}

/** The provider's default interaction policy with the "continue" interstitial after login. */
function withContinue(): ReturnType<typeof interactionPolicy.base> {
  const policy = interactionPolicy.base()
  policy.add(continuePrompt(), 1)
  return policy
}

/**
 * revokeOnReuse: when a rotated refresh token comes back (the provider has revoked its grant
 * and answered invalid_grant "refresh token already used"), the session it was issued in ends
 * too, as a provider that takes the reuse for a stolen token may do.
 */
async function endSessionOnReuse(ctx: KoaContextWithOIDC, next: () => Promise<void>) {
  await next()
  // the provider answers every invalid_grant with the same description; the refresh token it
  // found tells the reuse apart (it is the consumed one only when the reuse check refused it)
  const oidc = ctx.oidc as KoaContextWithOIDC['oidc'] | undefined
  const token = oidc?.entities.RefreshToken
  if (oidc?.route !== 'token' || ctx.status !== 400 || !token?.consumed) return
  const session = token.sessionUid
    ? await oidc.provider.Session.findByUid(token.sessionUid)
    : undefined
  await session?.destroy()
}

export interface ExampleProvider {
  readonly baseUrl: string
  /** PEM of the generated CA that signed the listener's certificate. */
  readonly ca: string
  stop(): Promise<void>
}

/** Starts the provider over HTTPS on 127.0.0.1 (port 0: any free port). */
export async function startExampleProvider(
  port = 0,
  features: ProviderFeatures = {},
): Promise<ExampleProvider> {
  const tls = await createDevCertificate(['127.0.0.1'])
  const server: Server = createServer({ cert: tls.cert, key: tls.key })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('no listening address')
  const baseUrl = `https://127.0.0.1:${address.port}`

  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'example-1' }

  const configuration: Configuration = {
    clients: [
      {
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        redirect_uris: [CLIENT.redirectUri],
        post_logout_redirect_uris: [CLIENT.postLogoutRedirectUri],
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'RS256',
        scope: `openid profile email offline_access ${API_SCOPES}`,
      },
    ],
    jwks: { keys: [jwk] },
    routes: {
      authorization: '/auth/authorize',
      token: '/auth/token',
      userinfo: '/auth/user-info',
      jwks: '/.well-known/jwks.json',
      end_session: '/auth/logout',
      introspection: '/auth/introspect',
      revocation: '/auth/revoke',
    },
    scopes: ['openid', 'offline_access', 'profile', 'email', 'read:documents', 'write:documents'],
    claims: {
      openid: ['sub'],
      profile: ['name', 'picture', 'updated_at'],
      email: ['email', 'email_verified'],
    },
    responseTypes: ['code'],
    // OIDC Core §3.1.2.1 and INTERFACE.md §4.1: redirect_uri is required, even for a client
    // with one registered URI
    allowOmittingSingleRegisteredRedirectUri: false,
    // INTERFACE.md §2.2: the refresh_token grant returns no new refresh token; revokeOnReuse
    // rotates them, as RFC 9700 §4.14.2 recommends for public clients and many providers do
    rotateRefreshToken: features.revokeOnReuse === true,
    clientAuthMethods: ['client_secret_post'],
    enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
    pkce: { methods: ['S256'], required: () => true },
    // the session cookie keeps the provider's default SameSite=None: an RP's cross-site POST to
    // the end_session endpoint (RP-Initiated Logout §2) must carry it to end the session
    cookies: { keys: ['example-provider-cookie-key-not-a-secret'] },
    ttl: {
      AccessToken: 3600,
      ClientCredentials: 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 30 * 24 * 3600,
      Grant: 30 * 24 * 3600,
      Session: 8 * 3600,
      Interaction: 3600,
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        // INTERFACE.md §4.6: logout with a valid id_token_hint ends the session and redirects,
        // so the confirmation form submits itself then; without a hint (anyone could have sent
        // the request) the user is asked, as the provider does by default
        logoutSource(ctx, form) {
          const hinted = Boolean(ctx.oidc.entities.IdTokenHint)
          const confirm = form.replace(
            '</form>',
            '<input type="hidden" name="logout" value="yes"></form>',
          )
          ctx.body = hinted
            ? `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signing out</title></head><body>${confirm}<noscript><button type="submit" form="op.logoutForm">Continue</button></noscript><script>document.forms[0].submit()</script></body></html>`
            : `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign out</title></head><body><h1>Do you want to sign out?</h1>${form}<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button><button type="submit" form="op.logoutForm">No, stay signed in</button></body></html>`
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, _resource, client) => ({
          scope: API_SCOPES,
          // INTERFACE.md §2.3: aud is the client identifier
          audience: client.clientId,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 3600,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    // the example's only client is first-party: its consent is given, as the documentation's
    // `loadExistingGrant` helper describes for first-party clients (with the consent page on,
    // the grant holds what the user allowed: the provider's default)
    ...(features.consent ? {} : { loadExistingGrant }),
    ...(features.interstitial ? { interactions: { policy: withContinue() } } : {}),
    extraTokenClaims(_ctx, token) {
      const account = 'accountId' in token ? bySub.get(token.accountId) : undefined
      return Promise.resolve(
        account
          ? { roles: account.roles, org_id: account.orgId, permissions: API_SCOPES.split(' ') }
          : undefined,
      )
    },
    findAccount(_ctx, sub) {
      const account = bySub.get(sub)
      if (!account) return Promise.resolve(undefined)
      return Promise.resolve({
        accountId: sub,
        claims: () => ({
          sub,
          name: account.name,
          picture: `https://images.example/${sub}.png`,
          updated_at: UPDATED_AT,
          email: account.email,
          email_verified: account.emailVerified,
        }),
      })
    },
  }
  const provider = new Provider(baseUrl, configuration)
  if (features.revokeOnReuse) provider.use(endSessionOnReuse)
  const callback = provider.callback()
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // what a deployment's TLS front usually adds (the provider leaves it to the deployment)
    res.setHeader('strict-transport-security', 'max-age=31536000; includeSubDomains')
    if (req.url?.startsWith('/interaction/'))
      void interaction(provider, baseUrl, features, req, res)
    else if (req.url === '/interaction-assets/login.js' && features.scriptLogin) {
      res.writeHead(200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'no-store',
      })
      res.end(LOGIN_SCRIPT)
    } else void callback(req, res)
  })
  return {
    baseUrl,
    ca: tls.ca ?? tls.cert,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
