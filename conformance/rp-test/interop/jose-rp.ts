import { createHash, randomBytes } from 'node:crypto'
import { rootCertificates } from 'node:tls'
import {
  createRemoteJWKSet,
  customFetch,
  errors as joseErrors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose'
import { Agent } from 'undici'
import type { RpClientSettings, RpLibrary } from './apps.ts'

/**
 * A relying party written by hand from the specifications, on `jose` for the JWT and JWKS work:
 * a validation core independent of oauth4webapi (openid-client v6) and of openid-client v5's own.
 * Every check below is the one its section asks for, and every refusal says which section fired
 * (the interop test expects each refusal by that section). It authenticates with
 * client_secret_post (INTERFACE.md §5.3) and sends PKCE S256, state and nonce on every sign-in.
 *
 * Choices where the specs leave the client room, each a cause of a verdict in the interop test:
 * - the ID token signature is always verified with the issuer's JWKS, though Core §3.1.3.7 (6)
 *   would let a code-flow client rely on TLS;
 * - at_hash is compared when present (Core §3.1.3.8 makes it a MAY in the code flow);
 * - an ID token without kid is verified only when exactly one published key fits it: with several
 *   keys, Core §10.1 requires the kid, so this client refuses (jose's JWKSMultipleMatchingKeys);
 * - one JWKS per jwks_uri is kept for the app's life and re-fetched on an unknown kid with no
 *   throttle (Core §10.1.1): this client verifies only ID tokens that came straight from the token
 *   endpoint over TLS, so an unknown kid is the issuer's own word and re-fetching for it cannot be
 *   driven by a third party (jose's default 30 s cooldown guards against exactly that);
 * - it trusts no audience but its own client_id (Core §3.1.3.7 (3)).
 */

/** How the app names this client on its pages ("… refused: <section>: <what>"). */
export const JOSE_RP_NAME = 'jose RP (hand-written)'

const SCOPE = 'openid profile email offline_access'
/** Every request this client makes is bounded; an expiry is an error of the app, not a refusal. */
const HTTP_TIMEOUT_MS = 10_000
/** Core §3.1.3.7 (9): "possibly allowing for some small leeway to account for clock skew". */
const CLOCK_TOLERANCE_S = 60
/** Core §3.1.3.7 (10): iat limits how long nonces must be kept; the range is the client's. */
const MAX_ID_TOKEN_AGE_S = 600

/** A refusal of this client, naming the section whose check fired. */
class Refused extends Error {
  constructor(section: string, what: string) {
    super(`${section}: ${what}`)
    this.name = 'Refused'
  }
}

/** The parts of the discovery document (OIDC Discovery §3) this client uses. */
interface Metadata {
  readonly issuer: string
  readonly authorization_endpoint: string
  readonly token_endpoint: string
  readonly userinfo_endpoint: string
  readonly jwks_uri: string
  readonly authorization_response_iss_parameter_supported: boolean
  /** RP-Initiated Logout 1.0 §2.1: OPTIONAL in discovery; no logout without it */
  readonly end_session_endpoint: string | undefined
}

interface Session {
  readonly metadata: Metadata
  readonly state: string
  readonly nonce: string
  readonly verifier: string
}

/** 256 bits from the system's CSPRNG, base64url: 43 characters (RFC 7636 §4.1). */
const random = (): string => randomBytes(32).toString('base64url')

/** SHA-256 of ASCII octets (RFC 7636 §4.2 S256 takes the whole hash; at_hash its left half). */
const sha256 = (ascii: string): Buffer => createHash('sha256').update(ascii, 'ascii').digest()

export function joseRp(settings: RpClientSettings): RpLibrary {
  const dispatcher = new Agent({
    connect: { ca: settings.caPem ? [...rootCertificates, settings.caPem] : undefined },
  })
  const get = (url: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(url, {
      headers: { accept: 'application/json', ...headers },
      dispatcher,
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    } as RequestInit)
  /** One key set per jwks_uri, kept for the app's life (see the choices above). */
  const keySets = new Map<string, JWTVerifyGetKey>()
  const keySetOf = (jwksUri: string): JWTVerifyGetKey => {
    let set = keySets.get(jwksUri)
    if (!set) {
      set = createRemoteJWKSet(new URL(jwksUri), {
        cooldownDuration: 0,
        timeoutDuration: HTTP_TIMEOUT_MS,
        [customFetch]: (url, options) => fetch(url, { ...options, dispatcher } as RequestInit),
      })
      keySets.set(jwksUri, set)
    }
    return set
  }

  /** OIDC Discovery §4: fetch the document, and use it only if it names the issuer asked for. */
  async function discover(issuer: string): Promise<Metadata> {
    // §4.1: the path is appended to the issuer with any terminating "/" removed
    const res = await get(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`)
    // §4.2: "A successful response MUST use the 200 OK HTTP status code"
    if (res.status !== 200)
      throw new Refused('OIDC Discovery §4.2', `the discovery document answered HTTP ${res.status}`)
    const doc = (await res.json()) as Record<string, unknown>
    // §4.3: "The issuer value returned MUST be identical to the Issuer URL that was used as the
    // prefix to /.well-known/openid-configuration to retrieve the configuration information"
    if (doc.issuer !== issuer)
      throw new Refused(
        'OIDC Discovery §4.3',
        `the discovery document names issuer ${JSON.stringify(doc.issuer)}, not ${issuer}`,
      )
    const url = (name: string): string => {
      const value = doc[name]
      // §3: these are URLs of the issuer; a document without them cannot be used
      if (typeof value !== 'string' || !URL.canParse(value))
        throw new Refused('OIDC Discovery §3', `the discovery document has no URL in ${name}`)
      return value
    }
    // §3: RS256 MUST be in id_token_signing_alg_values_supported; this client accepts only it
    const algs = doc.id_token_signing_alg_values_supported
    if (!Array.isArray(algs) || !algs.includes('RS256'))
      throw new Refused('OIDC Discovery §3', 'the issuer does not list RS256 for ID tokens')
    return {
      issuer,
      authorization_endpoint: url('authorization_endpoint'),
      token_endpoint: url('token_endpoint'),
      userinfo_endpoint: url('userinfo_endpoint'),
      jwks_uri: url('jwks_uri'),
      authorization_response_iss_parameter_supported:
        doc.authorization_response_iss_parameter_supported === true,
      end_session_endpoint:
        typeof doc.end_session_endpoint === 'string' && URL.canParse(doc.end_session_endpoint)
          ? doc.end_session_endpoint
          : undefined,
    }
  }

  /** RFC 6749 §5.1 and §5.2: the Bearer access token of a token response, or a refusal. */
  function bearerOf(status: number, body: Record<string, unknown>): string {
    // RFC 6749 §5.1: a successful response is 200; §5.2: anything else is an error
    if (status !== 200)
      throw new Refused(
        'RFC 6749 §5.2',
        `the token endpoint answered HTTP ${status} ${String(body.error)}: ${String(body.error_description)}`,
      )
    const accessToken = body.access_token
    if (typeof accessToken !== 'string' || !accessToken)
      throw new Refused('RFC 6749 §5.1', 'the token response has no access_token')
    // RFC 6749 §5.1: token_type is REQUIRED and case-insensitive; §7.1: "The client MUST NOT
    // use an access token if it does not understand the token type"; this client knows Bearer
    if (typeof body.token_type !== 'string' || body.token_type.toLowerCase() !== 'bearer')
      throw new Refused(
        'RFC 6749 §7.1',
        `the token response has token_type ${JSON.stringify(body.token_type)}, not Bearer`,
      )
    return accessToken
  }

  /** Core §5.3: user-info with the access token, used only if its sub is the ID token's. */
  /**
   * A token request with `params`, the client authenticating with client_secret_post (RFC 6749
   * §2.3.1, INTERFACE.md §5): the answer's body and its bearer access token.
   */
  async function tokenRequest(
    metadata: Metadata,
    params: Record<string, string>,
  ): Promise<{ body: Record<string, unknown>; accessToken: string }> {
    const res = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams({
        ...params,
        client_id: settings.clientId,
        client_secret: settings.clientSecret,
      }).toString(),
      dispatcher,
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    } as RequestInit)
    const body = (await res.json()) as Record<string, unknown>
    return { body, accessToken: bearerOf(res.status, body) }
  }

  async function userInfoOf(metadata: Metadata, accessToken: string, sub: string): Promise<void> {
    // Core §5.3.1 with RFC 6750 §2.1
    const info = await get(metadata.userinfo_endpoint, { authorization: `Bearer ${accessToken}` })
    if (info.status !== 200)
      throw new Refused('Core §5.3.3', `user-info answered HTTP ${info.status}`)
    // §5.3.2: JSON unless the client registered a signed or encrypted response (it did not)
    if (!/^application\/json\b/i.test(info.headers.get('content-type') ?? ''))
      throw new Refused('Core §5.3.2', 'user-info did not answer JSON')
    const userInfo = (await info.json()) as Record<string, unknown>
    // §5.3.4: "The sub Claim in the UserInfo Response MUST be verified to exactly match the sub
    // Claim in the ID Token; if they do not match, the UserInfo Response values MUST NOT be used"
    if (userInfo.sub !== sub)
      throw new Refused('Core §5.3.4', 'the user-info sub differs from the ID token sub')
  }

  /** Core §3.1.3.7 and §3.1.3.8: the ID token of a token response, or a refusal. */
  async function validateIdToken(
    idToken: string,
    accessToken: string,
    session: Session,
  ): Promise<JWTPayload> {
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(idToken, keySetOf(session.metadata.jwks_uri), {
        // (6) the signature, with the issuer's published keys; (7) RS256, the default alg (this
        // client registered no other), so an unsecured or HMAC token never verifies
        algorithms: ['RS256'],
        // (2) iss exactly the issuer of the discovery document
        issuer: session.metadata.issuer,
        // (3) aud contains the client_id (extra audiences: below)
        audience: settings.clientId,
        // Core §2: iss, sub, aud, exp and iat are REQUIRED in every ID token
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
        // (9) exp in the future, with a small leeway
        clockTolerance: CLOCK_TOLERANCE_S,
        // (10) iat not too far from now
        maxTokenAge: MAX_ID_TOKEN_AGE_S,
      }))
    } catch (err) {
      // a JWKS that could not be fetched in time is the app's trouble, not a verdict on the token
      if (err instanceof joseErrors.JOSEError && !(err instanceof joseErrors.JWKSTimeout))
        throw new Refused(
          'Core §3.1.3.7',
          `the ID token did not verify: ${err.code}: ${err.message}`,
        )
      throw err
    }
    // (3) "The ID Token MUST be rejected if … it contains additional audiences not trusted by the
    // Client": this client trusts only its own client_id
    const audiences = [payload.aud].flat()
    const untrusted = audiences.filter((a) => a !== settings.clientId)
    if (untrusted.length)
      throw new Refused('Core §3.1.3.7 (3)', `untrusted audiences ${untrusted.join(', ')}`)
    // (5) "If an azp (authorized party) Claim is present, the Client SHOULD verify that its
    // client_id is the Claim Value"
    if (payload.azp !== undefined && payload.azp !== settings.clientId)
      throw new Refused('Core §3.1.3.7 (5)', `azp ${JSON.stringify(payload.azp)} is another client`)
    // (11) "The value of the nonce Claim MUST be checked to verify that it is the same value as
    // the one that was sent in the Authentication Request" (absent is not the same value)
    if (payload.nonce !== session.nonce)
      throw new Refused(
        'Core §3.1.3.7 (11)',
        payload.nonce === undefined
          ? 'the ID token has no nonce'
          : 'the ID token nonce differs from the one sent',
      )
    // §3.1.3.8 (a MAY in the code flow, done here) with §3.2.2.9: at_hash is the base64url of the
    // left-most half of the hash of the access token's ASCII octets, SHA-256 for RS256
    if (payload.at_hash !== undefined) {
      const digest = sha256(accessToken)
      const expected = digest.subarray(0, digest.length / 2).toString('base64url')
      if (payload.at_hash !== expected)
        throw new Refused('Core §3.1.3.8', 'at_hash does not match the access token')
    }
    return payload
  }

  return {
    name: JOSE_RP_NAME,
    async begin(issuer, redirectUri) {
      const metadata = await discover(issuer)
      const session: Session = { metadata, state: random(), nonce: random(), verifier: random() }
      // RFC 6749 §3.1: the endpoint's own query component is kept; §4.1.1 and Core §3.1.2.1
      const url = new URL(metadata.authorization_endpoint)
      for (const [name, value] of Object.entries({
        response_type: 'code',
        client_id: settings.clientId,
        redirect_uri: redirectUri,
        scope: SCOPE,
        state: session.state,
        nonce: session.nonce,
        // RFC 7636 §4.2, §4.3: S256
        code_challenge: sha256(session.verifier).toString('base64url'),
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(name, value)
      return { url: url.href, session }
    },
    async finish(_issuer, redirectUri, callback, state) {
      const session = state as Session
      const { metadata } = session
      const params = callback.searchParams
      // RFC 9207 §2.4: compare a present iss with the issuer; refuse a response without it from
      // an issuer that says it sends it
      const iss = params.get('iss')
      if (
        iss !== null
          ? iss !== metadata.issuer
          : metadata.authorization_response_iss_parameter_supported
      )
        throw new Refused(
          'RFC 9207 §2.4',
          iss === null
            ? 'the callback has no iss'
            : `the callback iss is ${iss}, not ${metadata.issuer}`,
        )
      // RFC 6749 §10.12: the state sent, exactly, before anything of the response is used
      if (params.get('state') !== session.state)
        throw new Refused('RFC 6749 §10.12', 'the callback state differs from the one sent')
      // RFC 6749 §4.1.2.1
      const error = params.get('error')
      if (error !== null)
        throw new Refused(
          'RFC 6749 §4.1.2.1',
          `the issuer answered ${error}: ${params.get('error_description') ?? ''}`,
        )
      const code = params.get('code')
      if (!code) throw new Refused('RFC 6749 §4.1.2', 'the callback has no code')

      // RFC 6749 §4.1.3 and RFC 7636 §4.5
      const { body, accessToken } = await tokenRequest(metadata, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: session.verifier,
      })
      // Core §3.1.3.3: id_token is REQUIRED in the code flow's token response
      if (typeof body.id_token !== 'string')
        throw new Refused('Core §3.1.3.3', 'the token response has no id_token')
      const claims = await validateIdToken(body.id_token, accessToken, session)

      await userInfoOf(metadata, accessToken, String(claims.sub))
      return {
        sub: String(claims.sub),
        idToken: body.id_token,
        // RFC 6749 §5.1: OPTIONAL
        refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : undefined,
      }
    },
    async refresh(issuer, { refreshToken, sub }) {
      const metadata = await discover(issuer)
      // RFC 6749 §6: grant_type and refresh_token, no scope (the one granted stays), and the
      // client authenticates as a confidential client MUST (§3.2.1)
      const { accessToken } = await tokenRequest(metadata, {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
      })
      // the sub of the sign-in's ID token, as Core §5.3.4 asks
      await userInfoOf(metadata, accessToken, sub)
      return sub
    },
    async logoutUrl(issuer, { idToken, postLogoutRedirectUri, state }) {
      const { end_session_endpoint: endSession } = await discover(issuer)
      if (!endSession)
        throw new Refused(
          'RP-Initiated Logout §2.1',
          'the issuer advertises no end_session_endpoint',
        )
      // RP-Initiated Logout 1.0 §2: id_token_hint RECOMMENDED, post_logout_redirect_uri (registered),
      // state to be passed back; the endpoint's own query component is kept (as in RFC 6749 §3.1)
      const url = new URL(endSession)
      url.searchParams.set('id_token_hint', idToken)
      url.searchParams.set('post_logout_redirect_uri', postLogoutRedirectUri)
      url.searchParams.set('state', state)
      return url.href
    },
  }
}
