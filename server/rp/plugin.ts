import type {
  Lifecycle,
  Plugin,
  Request,
  ResponseObject,
  ResponseToolkit,
  RouteOptions,
  ServerRoute,
} from '@hapi/hapi'
import { decodeJwt, SignJWT, UnsecuredJWT, type JWTPayload } from 'jose'
import type { Deps } from '../deps.ts'
import type { FindingCode } from '../explain/findings.ts'
import { invalidRequest, OAuthError } from '../errors.ts'
import { randomToken, sha256Hex } from '../protocol/digest.ts'
import { discoveryDocument } from '../routes/discovery.ts'
import { errorPageResponse, redirectToClient } from '../routes/authorize.ts'
import { rawParams, single } from '../protocol/params.ts'
import { isRegisteredRedirectUri } from '../protocol/redirect-uri.ts'
import { endSession } from '../sessions.ts'
import { loggedOutPage } from '../views/logout.ts'
import { newNonce, page } from '../views/respond.ts'
import { introspect } from '../routes/introspect.ts'
import { revoke } from '../routes/revoke.ts'
import { token } from '../routes/token.ts'
import { userInfo } from '../routes/user-info.ts'
import { atHash } from '../tokens/id-token.ts'
import { RP_TESTS, rpTest, type RpTest } from './catalogue.ts'
import { createRpKeys, type RpKey } from './keys.ts'
import {
  createObservations,
  type RpEventKind,
  type RpGrant,
  type RpLogoutCall,
  type RpObservations,
} from './observations.ts'
import { MAX_STATE } from '../protocol/authorization-request.ts'
import { limitedAs } from '../plugins/rate-limit.ts'

/** Where the test issuers live: `{base_url}/rp/{test-id}`. */
export const rpIssuerUrl = (baseUrl: string, testId: string): string => `${baseUrl}/rp/${testId}`

/** The audience the aud tests add: a client that is not the caller. */
export const FOREIGN_AUDIENCE = 'rp-test-foreign-client'

/** The state the test issuers give the normal authorize endpoint: `rp.` + 256 random bits. */
const MARKER = /^rp\.[A-Za-z0-9_-]{43}$/

interface Transaction {
  readonly test: RpTest
  readonly state: string | undefined
  readonly clientId: string | undefined
  /** Whether the authorize request carried a code_challenge (to name a refusal's cause). */
  readonly pkce: boolean
  readonly expiresAt: number
}

/** Why a token or code is tainted: the negative test whose fault it came with. */
interface Taint {
  readonly test: RpTest
  readonly what: string
}

/** A Map that forgets its oldest entries beyond `max`, so no client can grow it without bound. */
function bounded<V>(max: number): Map<string, V> & { put(key: string, value: V): void } {
  const map = new Map<string, V>() as Map<string, V> & { put(key: string, value: V): void }
  map.put = (key, value) => {
    map.delete(key)
    map.set(key, value)
    if (map.size > max) {
      const oldest = map.keys().next().value
      if (oldest !== undefined) map.delete(oldest)
    }
  }
  return map
}

/** The handler of one of the normal routes, to answer the same request under /rp/{test}. */
const routeHandler = (route: ServerRoute) =>
  (route.options as RouteOptions).handler as unknown as (
    request: Request,
    h: ResponseToolkit,
  ) => Promise<Lifecycle.ReturnValue> | Lifecycle.ReturnValue

const testOf = (request: Request): RpTest => {
  const test = rpTest(String(request.params.test))
  if (!test)
    throw new OAuthError('invalid_request', 'no such RP test; GET /rp lists them', { status: 404 })
  return test
}

/** The jti of an access token or the digest of a refresh token: how a taint is looked up. */
function tokenKeys(value: string | undefined): string[] {
  if (!value) return []
  const keys = [`rt:${sha256Hex(value)}`]
  try {
    const jti = decodeJwt(value).jti
    if (typeof jti === 'string') keys.push(`at:${jti}`)
  } catch {
    // not a JWT: only a refresh token can match
  }
  return keys
}

const bearerOf = (request: Request): string | undefined => {
  const header = (request.headers as Record<string, string | undefined>).authorization
  const m = header ? /^Bearer +(\S+)$/i.exec(header) : null
  if (m?.[1]) return m[1]
  const body = request.payload as Record<string, unknown> | null
  return typeof body?.access_token === 'string' ? body.access_token : undefined
}

const formOf = (request: Request): Record<string, unknown> =>
  (request.payload as Record<string, unknown> | null) ?? {}

/**
 * How many sign-ins in progress and tainted tokens the issuers remember, the oldest forgotten
 * first. An entry holds at most MAX_STATE characters of the client's state and 255 of its
 * client_id, so the sign-ins in progress take some 50 MB at worst.
 */
export const RP_STATE_CAPACITY = { transactions: 10_000, taints: 20_000 } as const

/**
 * The RP test issuers (issue 23): beside the normal issuer, one issuer per test of
 * `catalogue.ts` under `/rp/{test}`, with its own discovery document and JWKS, the same
 * clients and users, and exactly one deliberate fault each. The normal endpoints do the work
 * (sign-in, code, tokens); these routes change their answers and record what the client does
 * next. Nothing here changes an answer of the normal issuer: the one server-wide hook rewrites
 * only the redirects of authorize requests that a test issuer started.
 */
export const rpIssuers = (
  deps: Deps,
  observations: RpObservations = createObservations(),
  capacity: { readonly transactions: number; readonly taints: number } = RP_STATE_CAPACITY,
): Plugin<undefined> => ({
  name: 'rp-issuers',
  register(server) {
    const base = deps.config.baseUrl
    const keys = createRpKeys()
    const transactions = bounded<Transaction>(capacity.transactions)
    const taints = bounded<Taint>(capacity.taints)
    /** The ID tokens the test issuers answered, by digest: what an id_token_hint must be. */
    const issuedIdTokens = bounded<{ test: string; clientId: string | undefined }>(
      capacity.transactions,
    )
    /**
     * When the discovery test last served its mismatching document: a sign-in started there
     * within the transaction lifetime began from it (a discovery request names no client, so
     * the issuer cannot tell one client from another; one rp-test at a time per server).
     */
    let mismatchServedAt: number | undefined
    const beganFromMismatch = (test: RpTest): boolean =>
      test.stage === 'discovery' &&
      mismatchServedAt !== undefined &&
      deps.clock() - mismatchServedAt <= 600
    /**
     * Whether the key of rp-key-rotation-op-sign-key (the rotation between two sign-ins) has
     * signed an ID token yet.
     */
    let betweenKeyUsed = false
    /** The issuer a test's tokens and callbacks name: another one for the discovery test. */
    const namedIssuer = (test: RpTest): string =>
      test.stage === 'discovery' ? base : rpIssuerUrl(base, test.id)

    const observe = (
      test: RpTest,
      kind: RpEventKind,
      context: {
        clientId?: string | undefined
        detail?: string
        finding?: string
        logout?: RpLogoutCall
        grant?: RpGrant
      } = {},
    ): void => {
      const event = observations.record(test.id, kind, {
        ...(context.clientId !== undefined ? { clientId: context.clientId } : {}),
        ...(context.detail !== undefined ? { detail: context.detail } : {}),
        ...(context.finding !== undefined ? { finding: context.finding } : {}),
        ...(context.logout !== undefined ? { logout: context.logout } : {}),
        ...(context.grant !== undefined ? { grant: context.grant } : {}),
      })
      // a negative test's fault accepted: the client-check finding `rp.<test>`
      if (test.kind === 'negative' && (kind === 'tainted-use' || kind === 'signed-in'))
        deps.explain?.record(`rp.${test.id}` as FindingCode, {
          clientId: event.clientId,
          endpoint: `/rp/${test.id}`,
          ...(event.detail !== undefined ? { detail: event.detail } : {}),
        })
    }

    /**
     * The access tokens a test issuer's refresh_token grant answered (by jti), with the test: how
     * user-info tells a refreshed access token from the sign-in's.
     */
    const refreshedAccess = bounded<string>(capacity.taints)

    const taintOf = (value: string | undefined): Taint | undefined => {
      for (const key of tokenKeys(value)) {
        const t = taints.get(key)
        if (t) return t
      }
      return undefined
    }
    const taintTokens = (body: Record<string, unknown>, taint: Taint): void => {
      for (const name of ['access_token', 'refresh_token'] as const) {
        const value = body[name]
        if (typeof value === 'string')
          for (const key of tokenKeys(value))
            if (key.startsWith(name[0] === 'a' ? 'at:' : 'rt:')) taints.put(key, taint)
      }
    }

    // ---- the redirect back to the client: state restored, iss of the test issuer, or the fault
    server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
      const response = request.response
      if ('isBoom' in response && response.isBoom) return h.continue
      const r = response as ResponseObject
      const location = r.headers.location
      if (r.statusCode < 300 || r.statusCode > 399 || typeof location !== 'string')
        return h.continue
      // only the normal endpoints' redirects to the client (not the hop into them from /rp/)
      if (!location.includes('state=rp.') || request.path.startsWith('/rp/')) return h.continue
      let url: URL
      try {
        url = new URL(location)
      } catch {
        return h.continue
      }
      const marker = url.searchParams.get('state') ?? ''
      const tx = MARKER.test(marker) ? transactions.get(marker) : undefined
      if (!tx || tx.expiresAt <= deps.clock()) return h.continue
      transactions.delete(marker)
      const { test } = tx
      let state = tx.state
      let iss = namedIssuer(test)
      const code = url.searchParams.get('code')
      const ctx = { clientId: tx.clientId }
      const error = url.searchParams.get('error')
      if (error !== null)
        observe(test, 'issuer-refused', {
          ...ctx,
          detail: `the authorize endpoint answered ${error}: ${url.searchParams.get('error_description') ?? '(no description)'}`,
          ...(tx.pkce ? {} : { finding: 'pkce.missing' }),
        })
      if (code !== null && test.id === 'rp-response-state-mismatch') {
        if (tx.state === undefined) {
          observe(test, 'not-applicable', {
            ...ctx,
            detail:
              'the client sent no state (it may rely on PKCE for CSRF protection, RFC 9700 §2.1), so a changed state proves nothing',
          })
        } else {
          state = `${tx.state.slice(0, 64)}~changed-${randomToken().slice(0, 8)}`
          taints.put(`code:${sha256Hex(code)}`, {
            test,
            what: 'redeemed the code of a callback whose state was changed',
          })
          observe(test, 'fault-delivered', { ...ctx, detail: 'callback with a changed state' })
        }
      }
      if (code !== null && test.id === 'rp-response-iss-mismatch') {
        iss = base
        taints.put(`code:${sha256Hex(code)}`, {
          test,
          what: 'redeemed the code of a callback whose iss named another issuer',
        })
        observe(test, 'fault-delivered', { ...ctx, detail: `callback with iss=${base}` })
      }
      if (state === undefined) url.searchParams.delete('state')
      else url.searchParams.set('state', state)
      url.searchParams.set('iss', iss)
      r.location(url.toString())
      return h.continue
    })

    /**
     * Runs a normal endpoint's handler and records its refusal of the client (an error thrown or
     * answered) with the description the client got, so a failed sign-in can say why.
     */
    const refusalsObserved = async (
      test: RpTest,
      endpoint: string,
      request: Request,
      handler: () => Promise<Lifecycle.ReturnValue> | Lifecycle.ReturnValue,
    ): Promise<Lifecycle.ReturnValue> => {
      const form = formOf(request)
      const clientId = typeof form.client_id === 'string' ? form.client_id : undefined
      const basic =
        endpoint === 'token' &&
        (request.headers as Record<string, string | undefined>).authorization !== undefined
      const refresh = endpoint === 'token' && form.grant_type === 'refresh_token'
      const record = (error: string, description: string): void =>
        observe(test, 'issuer-refused', {
          clientId,
          detail: `the ${endpoint} endpoint answered ${error}: ${description}${refresh ? ' (to a refresh_token grant)' : ''}`,
          ...(basic ? { finding: 'client-auth.basic' } : {}),
          ...(refresh ? { grant: 'refresh_token' as const } : {}),
        })
      try {
        const response = await handler()
        const r = response as Partial<ResponseObject>
        if (typeof r.statusCode === 'number' && r.statusCode >= 400) {
          const source = (r.source ?? {}) as Record<string, unknown>
          const text = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback)
          record(
            text(source.error, `HTTP ${r.statusCode}`),
            text(source.error_description, '(no description)'),
          )
        }
        return response
      } catch (err) {
        if (err instanceof OAuthError) record(err.code, err.message)
        else record('an error', (err as Error).message)
        throw err
      }
    }
    const prefix = '/rp/{test}'
    const tokenRoute = token(deps)
    const userInfoRoutes = userInfo(deps)
    const introspectRoute = introspect(deps)
    const revokeRoute = revoke(deps)

    /** The ID token of `test`: the normal one's claims, this issuer's iss and key, the fault. */
    const faultyIdToken = async (
      test: RpTest,
      normal: string,
    ): Promise<{ idToken: string; applied: boolean; notApplicable?: string }> => {
      const now = deps.clock()
      const claims: JWTPayload = { ...decodeJwt(normal), iss: namedIssuer(test) }
      let signer: RpKey = await keys.main()
      let kid: string | undefined = signer.kid
      let applied = true
      let notApplicable: string | undefined
      switch (test.id) {
        case 'rp-id_token-bad-sig-rs256-code-flow':
          signer = await keys.stranger()
          break
        case 'rp-id_token-alg-none-refused':
          return { idToken: new UnsecuredJWT(claims).encode(), applied }
        case 'rp-id_token-issuer-mismatch':
          claims.iss = base
          break
        case 'rp-id_token-sub':
          delete claims.sub
          break
        case 'rp-id_token-aud':
          claims.aud = FOREIGN_AUDIENCE
          break
        case 'oidcc-client-test-missing-aud':
          delete claims.aud
          delete claims.azp
          break
        case 'rp-id_token-aud-multiple-no-azp':
          claims.aud = [String(claims.aud), FOREIGN_AUDIENCE]
          delete claims.azp
          break
        case 'rp-id_token-expired':
          claims.iat = now - 7200
          claims.exp = now - 3600
          break
        case 'rp-id_token-iat':
          delete claims.iat
          break
        case 'rp-nonce-invalid':
        case 'rp-nonce-missing':
          if (claims.nonce === undefined) {
            applied = false
            notApplicable =
              'the authorize request carried no nonce, so the ID token has none to get wrong'
          } else if (test.id === 'rp-nonce-invalid') claims.nonce = randomToken()
          else delete claims.nonce
          break
        case 'rp-id_token-kid-unknown':
          signer = await keys.stranger()
          kid = signer.kid
          break
        case 'rp-id_token-bad-at_hash-code-flow':
          claims.at_hash = atHash(randomToken())
          break
        case 'rp-key-rotation-op-sign-key-native':
          signer = await keys.rotate()
          kid = signer.kid
          break
        case 'rp-key-rotation-op-sign-key':
          // positive: a correct ID token, signed by the one published key; the next sign-in
          // started here replaces that key
          signer = await keys.current()
          kid = signer.kid
          betweenKeyUsed = true
          applied = false
          break
        case 'rp-id_token-kid-absent-single-jwks':
        case 'rp-id_token-kid-absent-multiple-jwks':
          // positive: a correct ID token, signed by the main key, whose header names no key
          kid = undefined
          applied = false
          break
        default:
          // the positive tests and the tests of other stages: a correct ID token
          applied = false
      }
      const idToken = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(kid === undefined ? {} : { kid }) })
        .sign(signer.privateKey)
      return { idToken, applied, ...(notApplicable !== undefined ? { notApplicable } : {}) }
    }

    /** The logout test's end_session_endpoint: judge the request, record it, answer it. */
    const endSessionAt = async (
      test: RpTest,
      request: Request,
      h: ResponseToolkit,
    ): Promise<ResponseObject> => {
      const raw = rawParams(request.method === 'post' ? request.payload : request.query)
      const hint = single(raw, 'id_token_hint')
      const uri = single(raw, 'post_logout_redirect_uri')
      const state = single(raw, 'state')
      const clientIdParam = single(raw, 'client_id')
      if (state !== undefined && state.length > MAX_STATE) throw invalidRequest('state is too long')
      const issued = hint === undefined ? undefined : issuedIdTokens.get(sha256Hex(hint))
      const hintHere = issued !== undefined && issued.test === test.id
      const clientId = hintHere ? issued.clientId : clientIdParam
      const client =
        clientId !== undefined && clientId.length <= 255
          ? await deps.store.clients.get(clientId)
          : undefined
      const call: RpLogoutCall = {
        hint: hint === undefined ? 'missing' : hintHere ? 'issued-here' : 'not-issued-here',
        redirectUri:
          uri === undefined
            ? 'missing'
            : !client
              ? 'no-client'
              : isRegisteredRedirectUri(client.postLogoutRedirectUris, uri)
                ? 'registered'
                : 'not-registered',
        state: state !== undefined,
      }
      const said = [
        call.hint === 'issued-here'
          ? 'id_token_hint: an ID token this issuer issued'
          : call.hint === 'missing'
            ? 'no id_token_hint'
            : 'id_token_hint: not an ID token this issuer issued',
        call.redirectUri === 'registered'
          ? 'post_logout_redirect_uri registered'
          : call.redirectUri === 'missing'
            ? 'no post_logout_redirect_uri'
            : call.redirectUri === 'no-client'
              ? 'post_logout_redirect_uri, but no known client to check it against'
              : `post_logout_redirect_uri not registered for client ${client?.id ?? '?'}`,
        call.state ? 'state' : 'no state',
      ].join(', ')
      observe(test, 'logout', {
        clientId,
        detail: `${request.method.toUpperCase()} ${said}`,
        logout: call,
      })
      if (call.hint !== 'issued-here')
        return errorPageResponse(
          h,
          invalidRequest(
            call.hint === 'missing'
              ? 'rp-init-logout: send id_token_hint, the ID token this issuer gave your client (OpenID RP-Initiated Logout section 2)'
              : 'rp-init-logout: the id_token_hint is not an ID token this test issuer issued (send the ID token of your sign-in here)',
          ),
          undefined,
          400,
          'Sign-out error',
        )
      if (call.redirectUri === 'not-registered' || call.redirectUri === 'no-client')
        return errorPageResponse(
          h,
          invalidRequest(
            `rp-init-logout: post_logout_redirect_uri is not registered for client '${client?.id ?? '?'}' (compared exactly; OpenID RP-Initiated Logout section 2)`,
          ),
          undefined,
          400,
          'Sign-out error',
        )
      // the redirect back: state echoed (RP-Initiated Logout §2), or the test's deviation from it
      const back =
        state === undefined
          ? undefined
          : test.backFromLogout === 'no-state'
            ? undefined
            : test.backFromLogout === 'other-state'
              ? `other-${randomToken().slice(0, 16)}`
              : state
      if (uri !== undefined && state !== undefined && test.backFromLogout)
        observe(test, 'fault-delivered', {
          clientId,
          detail:
            back === undefined
              ? 'redirected back from logout without the state sent'
              : 'redirected back from logout with another state than the one sent',
        })
      const nonce = newNonce()
      const response =
        uri !== undefined
          ? redirectToClient(h, uri, { state: back }, request.method === 'post' ? 303 : 302)
          : page(h, loggedOutPage({ branding: undefined, nonce }), { nonce })
      await endSession(request, response, deps)
      return response
    }

    const jsonNoStore = (h: ResponseToolkit, body: object): ResponseObject =>
      h
        .response(body)
        .type('application/json')
        .header('cache-control', 'no-store')
        .header('pragma', 'no-cache')

    const routes: ServerRoute[] = [
      {
        method: 'GET',
        path: '/rp',
        options: {
          handler: () => ({
            tests: RP_TESTS.map((t) => ({
              id: t.id,
              kind: t.kind,
              level: t.level,
              title: t.title,
              reference: t.reference,
              ...((t as RpTest).foundation ? { foundation: (t as RpTest).foundation } : {}),
              issuer: rpIssuerUrl(base, t.id),
            })),
            last: observations.last(),
          }),
        },
      },
      ...['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'].map(
        (path): ServerRoute => ({
          method: 'GET',
          path: `${prefix}${path}`,
          options: {
            plugins: limitedAs('public'),
            handler: (request, h) => {
              const test = testOf(request)
              // the normal document at this issuer's paths; no logout (ID token hints of a test
              // issuer mean nothing to the normal one) except at the logout tests' issuers, whose
              // own end_session_endpoint records the call; RFC 9207 iss on every callback
              const { end_session_endpoint: logoutEndpoint, ...doc } = discoveryDocument(
                rpIssuerUrl(base, test.id),
              )
              observe(test, 'discovery', { detail: `fetched ${request.path}` })
              if (test.stage === 'discovery') {
                // the fault: the document names another issuer (the normal one) than the URL it
                // was fetched from; its endpoints stay here, and the ID tokens and callbacks name
                // that issuer too, so only comparing the document with its URL catches it
                mismatchServedAt = deps.clock()
                observe(test, 'fault-delivered', {
                  detail: `a discovery document whose issuer is ${base}`,
                })
              }
              return h
                .response({
                  ...doc,
                  ...(test.exercisedBy === 'logout'
                    ? { end_session_endpoint: logoutEndpoint }
                    : {}),
                  issuer: namedIssuer(test),
                  authorization_response_iss_parameter_supported: true,
                })
                .header('cache-control', 'no-store')
            },
          },
        }),
      ),
      {
        method: 'GET',
        path: `${prefix}/.well-known/jwks.json`,
        options: {
          plugins: limitedAs('public'),
          handler: async (request, h) => {
            const test = testOf(request)
            const set =
              test.id === 'rp-key-rotation-op-sign-key-native'
                ? await keys.rotated()
                : test.id === 'rp-key-rotation-op-sign-key'
                  ? [await keys.current()]
                  : test.id === 'rp-jwks-two-keys' ||
                      test.id === 'rp-id_token-kid-absent-multiple-jwks'
                    ? [await keys.decoy(), await keys.main()]
                    : [await keys.main()]
            // the kid-absent tests publish their keys without kid, as the Foundation's do
            const withoutKid = test.id.startsWith('rp-id_token-kid-absent-')
            observe(test, 'jwks')
            return h
              .response({
                keys: set.map((k) => {
                  if (!withoutKid) return k.publicJwk
                  const { kid: _kid, ...rest } = k.publicJwk
                  return rest
                }),
              })
              .type('application/json')
              .header('cache-control', 'no-store')
          },
        },
      },
      {
        method: 'GET',
        path: `${prefix}/auth/authorize`,
        options: {
          handler: async (request, h) => {
            const test = testOf(request)
            const query = request.query as Record<string, string | string[] | undefined>
            const params = new URLSearchParams()
            for (const [name, value] of Object.entries(query))
              for (const one of [value ?? []].flat()) if (name !== 'state') params.append(name, one)
            const clientId = typeof query.client_id === 'string' ? query.client_id : undefined
            if (Array.isArray(query.state) || (query.state?.length ?? 0) > MAX_STATE) {
              // the normal endpoint refuses a repeated or over-long state; let it say so (and
              // the transactions never hold more than MAX_STATE characters of a client's state)
              for (const one of [query.state ?? []].flat()) params.append('state', one)
            } else {
              const marker = `rp.${randomToken()}`
              transactions.put(marker, {
                test,
                state: query.state || undefined,
                // as much as an observation keeps of it: a long one is no registered client
                clientId: clientId?.slice(0, 255),
                pkce: typeof query.code_challenge === 'string' && query.code_challenge !== '',
                expiresAt: deps.clock() + 600,
              })
              params.set('state', marker)
            }
            observe(test, 'authorize', { clientId })
            if (test.id === 'rp-key-rotation-op-sign-key' && betweenKeyUsed) {
              // a sign-in after one that was answered: the key the client may have kept from it
              // is withdrawn, and only the new one is published
              betweenKeyUsed = false
              const next = await keys.replace()
              observe(test, 'key-rotated', {
                clientId,
                detail: `the signing key of the previous sign-in was replaced by kid ${next.kid}; the JWKS publishes only the new key`,
              })
            }
            if (beganFromMismatch(test))
              observe(test, 'tainted-use', {
                clientId,
                detail:
                  'started a sign-in at the authorization endpoint of a discovery document whose issuer did not match its URL',
              })
            return h
              .redirect(`${base}/auth/authorize?${params.toString()}`)
              .code(302)
              .header('cache-control', 'no-store')
          },
        },
      },
      {
        ...tokenRoute,
        path: `${prefix}/auth/token`,
        options: {
          ...(tokenRoute.options as RouteOptions),
          handler: async (request, h) => {
            const test = testOf(request)
            const form = formOf(request)
            const clientId = typeof form.client_id === 'string' ? form.client_id : undefined
            const ctx = { clientId }
            const response = (await refusalsObserved(test, 'token', request, () =>
              routeHandler(tokenRoute)(request, h),
            )) as ResponseObject
            const body = { ...(response.source as Record<string, unknown>) }
            if (form.grant_type === 'refresh_token') {
              const taint = taintOf(
                typeof form.refresh_token === 'string' ? form.refresh_token : undefined,
              )
              if (taint) {
                observe(taint.test, 'tainted-use', {
                  ...ctx,
                  detail: `redeemed the refresh token at ${request.path}`,
                })
                taintTokens(body, taint)
              }
              if (typeof body.access_token === 'string') {
                for (const key of tokenKeys(body.access_token))
                  if (key.startsWith('at:')) refreshedAccess.put(key, test.id)
                observe(test, 'refreshed', {
                  ...ctx,
                  detail: 'the refresh_token grant answered a new access token',
                })
              }
              return jsonNoStore(h, body)
            }
            if (form.grant_type !== 'authorization_code') return jsonNoStore(h, body)
            const codeTaint =
              typeof form.code === 'string' ? taints.get(`code:${sha256Hex(form.code)}`) : undefined
            if (codeTaint) {
              observe(codeTaint.test, 'tainted-use', { ...ctx, detail: codeTaint.what })
              taintTokens(body, {
                test: codeTaint.test,
                what: 'a token of the tampered callback',
              })
            }
            if (typeof body.id_token === 'string') {
              const { idToken, applied, notApplicable } = await faultyIdToken(test, body.id_token)
              body.id_token = idToken
              const aud = decodeJwt(idToken).aud
              issuedIdTokens.put(sha256Hex(idToken), {
                test: test.id,
                clientId: clientId ?? (typeof aud === 'string' ? aud : undefined),
              })
              if (notApplicable) observe(test, 'not-applicable', { ...ctx, detail: notApplicable })
              if (applied && test.kind === 'negative' && test.stage === 'token-response') {
                observe(test, 'fault-delivered', { ...ctx, detail: test.title })
                taintTokens(body, {
                  test,
                  what: 'a token of the faulty token response',
                })
              }
            } else if (test.stage === 'token-response') {
              observe(test, 'not-applicable', {
                ...ctx,
                detail: 'the sign-in asked for no openid scope, so there is no ID token to test',
              })
            }
            if (beganFromMismatch(test) && typeof body.access_token === 'string')
              taintTokens(body, {
                test,
                what: 'a token of a sign-in begun from the mismatching discovery document',
              })
            if (test.id === 'rp-token_type-missing') {
              delete body.token_type
              observe(test, 'fault-delivered', { ...ctx, detail: test.title })
              taintTokens(body, {
                test,
                what: 'a token of the response without token_type',
              })
            }
            if (test.id === 'rp-token-response-extra-members') {
              body.rp_test_unknown_member = 'a client must ignore this (RFC 6749 §5.1)'
              body.rp_test_unknown_object = { nested: [1, 2, 3] }
            }
            observe(test, 'token-issued', ctx)
            return jsonNoStore(h, body)
          },
        },
      },
      ...userInfoRoutes.map((route): ServerRoute => ({
        ...route,
        path: `${prefix}/auth/user-info`,
        options: {
          ...(route.options as RouteOptions),
          handler: async (request, h) => {
            const test = testOf(request)
            const response = (await refusalsObserved(test, 'user-info', request, () =>
              routeHandler(route)(request, h),
            )) as ResponseObject
            const presented = bearerOf(request)
            const taint = taintOf(presented)
            const claims = { ...(response.source as Record<string, unknown>) }
            const clientId = presented ? tokenClient(presented) : undefined
            const refreshed = tokenKeys(presented).some(
              (key) => refreshedAccess.get(key) === test.id,
            )
            observe(test, 'userinfo', {
              clientId,
              detail: refreshed
                ? 'user-info answered with claims, to an access token of the refresh_token grant'
                : 'user-info answered with claims',
              ...(refreshed ? { grant: 'refresh_token' as const } : {}),
            })
            if (taint)
              observe(taint.test, 'tainted-use', {
                clientId,
                detail: `called user-info with the access token (${taint.what})`,
              })
            if (test.id === 'rp-userinfo-bad-sub-claim') {
              claims.sub = `${String(claims.sub)}-someone-else`
              // Core §5.3.4 forbids using this response, not the access token: what the client
              // does with the response is for the sign-in command to report
              observe(test, 'fault-delivered', { clientId, detail: test.title })
            }
            return jsonNoStore(h, claims)
          },
        },
      })),
      {
        ...introspectRoute,
        path: `${prefix}/auth/introspect`,
        options: {
          ...(introspectRoute.options as RouteOptions),
          handler: async (request, h) => {
            testOf(request)
            const response = await routeHandler(introspectRoute)(request, h)
            const form = formOf(request)
            const taint = taintOf(typeof form.token === 'string' ? form.token : undefined)
            if (taint)
              observe(taint.test, 'tainted-use', {
                clientId: typeof form.client_id === 'string' ? form.client_id : undefined,
                detail: `introspected the token (${taint.what})`,
              })
            return response
          },
        },
      },
      {
        // revoking a tainted token is what a careful client does: not a use
        ...revokeRoute,
        path: `${prefix}/auth/revoke`,
        options: {
          ...(revokeRoute.options as RouteOptions),
          handler: (request, h) => {
            testOf(request)
            return routeHandler(revokeRoute)(request, h)
          },
        },
      },
      ...(['GET', 'POST'] as const).map((method): ServerRoute => ({
        // RP-initiated logout at the logout tests' issuers (RP-Initiated Logout 1.0): records
        // what the request carried, then answers as an OP does: the redirect back with state
        // only for a hint this issuer issued and a URI registered for its client; never an open
        // redirect
        method,
        path: `${prefix}/auth/logout`,
        options: {
          ...(method === 'POST'
            ? { payload: { allow: 'application/x-www-form-urlencoded', maxBytes: 16 * 1024 } }
            : {}),
          handler: (request, h) => {
            const test = testOf(request)
            if (test.exercisedBy !== 'logout')
              throw new OAuthError(
                'invalid_request',
                'this test issuer has no end_session_endpoint; the rp-init-logout tests have one',
                { status: 404 },
              )
            // a request refused before it could be judged (a repeated parameter, an over-long
            // state) is recorded as a refusal, with the error the client got
            return endSessionAt(test, request, h).catch((err: unknown) => {
              if (err instanceof OAuthError)
                observe(test, 'issuer-refused', {
                  detail: `the end_session_endpoint answered ${err.code}: ${err.message}`,
                })
              throw err
            })
          },
        },
      })),
      ...(['GET', 'POST'] as const).map((method): ServerRoute => ({
        method,
        path: `${prefix}/signed-in`,
        options: {
          cors: { origin: ['*'], credentials: false },
          payload: method === 'POST' ? { parse: false, maxBytes: 1024 } : undefined,
          handler: (request, h) => {
            const test = testOf(request)
            const q = request.query as Record<string, unknown>
            observe(test, 'signed-in', {
              clientId: typeof q.client_id === 'string' ? q.client_id : undefined,
              detail: 'a page of the client was marked signed-in',
            })
            return h.response().code(204).header('cache-control', 'no-store')
          },
        },
      })),
      {
        method: 'GET',
        path: `${prefix}/observations`,
        options: {
          handler: (request, h) => {
            const test = testOf(request)
            const since = (request.query as Record<string, unknown>).since
            if (since !== undefined && (typeof since !== 'string' || !/^\d{1,15}$/.test(since)))
              throw new OAuthError('invalid_request', 'since must be a non-negative integer')
            return h
              .response({
                test: test.id,
                last: observations.last(),
                events: observations.list(test.id, since === undefined ? 0 : Number(since)),
              })
              .header('cache-control', 'no-store')
          },
        },
      },
    ]
    server.route(routes)
  },
})

/** The client an access token was issued to, for the record (the token is already verified). */
function tokenClient(value: string): string | undefined {
  try {
    const claims = decodeJwt(value)
    return typeof claims.client_id === 'string' ? claims.client_id : undefined
  } catch {
    return undefined
  }
}
