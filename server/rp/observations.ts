/**
 * What the test issuers saw a client do, per RP test: the fault delivered, the tainted tokens
 * used afterwards, a page marked signed-in. Kept in this process's memory (a bounded ring), read
 * by the runner through `GET {base_url}/rp/{test}/observations?since=SEQ`.
 */

export type RpEventKind =
  /** The client fetched the test issuer's discovery document (or its RFC 8414 metadata). */
  | 'discovery'
  /** The client started a sign-in at the test issuer. */
  | 'authorize'
  /** The client fetched the test issuer's JWKS. */
  | 'jwks'
  /** The test's fault was delivered to the client (at the test's stage). */
  | 'fault-delivered'
  /** The test does not apply to what this client sent (no state, no nonce); `detail` says why. */
  | 'not-applicable'
  /** The test issuer replaced its signing key: the JWKS now publishes only the new one. */
  | 'key-rotated'
  /** A token response answered the code grant (with or without the fault). */
  | 'token-issued'
  /** The client went on to use what the fault tainted: `detail` says how. */
  | 'tainted-use'
  /** The integrator marked the client's page as signed-in (`{issuer}/signed-in`). */
  | 'signed-in'
  /**
   * The test issuer's user-info endpoint answered the client (with claims or an error); `grant`
   * is `refresh_token` when the access token presented was answered by a refresh_token grant.
   */
  | 'userinfo'
  /** The refresh_token grant answered the client with a new access token. */
  | 'refreshed'
  /**
   * The issuer refused a request of the client (an error redirect or error response): `detail`
   * is the error and its description, `finding` the explain-mode finding it matches, if any;
   * `grant` is `refresh_token` when the refused request was a refresh_token grant.
   */
  | 'issuer-refused'
  /**
   * The client sent the user to the test issuer's end_session_endpoint (RP-initiated logout):
   * `logout` says what the request carried.
   */
  | 'logout'

/** What an RP-initiated logout request carried, as the test issuer judged it. */
export interface RpLogoutCall {
  /** `issued-here`: an ID token this test issuer issued (to the client named); else why not. */
  readonly hint: 'issued-here' | 'missing' | 'not-issued-here'
  /**
   * Registered for the client the hint (or client_id) names, compared exactly (any loopback
   * port); `no-client` when neither named a known client to check it against.
   */
  readonly redirectUri: 'registered' | 'missing' | 'not-registered' | 'no-client'
  /** Whether the request carried state (echoed on the redirect back when there is one). */
  readonly state: boolean
}

/** The grant behind a `userinfo` or `issuer-refused` event, when it was a refresh (only then). */
export type RpGrant = 'refresh_token'

export interface RpEvent {
  readonly seq: number
  readonly at: string
  readonly test: string
  readonly kind: RpEventKind
  readonly clientId: string | undefined
  /** What exactly was seen; never a token or a secret. */
  readonly detail: string | undefined
  /** The explain-mode finding code (`client-auth.basic`, `pkce.missing`) the event matches. */
  readonly finding?: string
  /** For a `logout` event: what the request carried. */
  readonly logout?: RpLogoutCall
  /** For a `userinfo` or `issuer-refused` event: `refresh_token` when a refresh was behind it. */
  readonly grant?: RpGrant
}

export interface RpObservations {
  record(
    test: string,
    kind: RpEventKind,
    context?: {
      clientId?: string
      detail?: string
      finding?: string
      logout?: RpLogoutCall
      grant?: RpGrant
    },
  ): RpEvent
  /** One test's events after `since`, oldest first. */
  list(test: string, since?: number): RpEvent[]
  /** The newest seq (0 before any event). */
  last(): number
}

export function createObservations(capacity = 5000): RpObservations {
  const ring: RpEvent[] = []
  let seq = 0
  return {
    record(test, kind, context = {}) {
      const event: RpEvent = {
        seq: ++seq,
        at: new Date().toISOString(),
        test,
        kind,
        clientId: context.clientId?.replace(/[^\x20-\x7E]/g, '?').slice(0, 255),
        detail: context.detail?.slice(0, 300),
        ...(context.finding !== undefined ? { finding: context.finding.slice(0, 64) } : {}),
        ...(context.logout !== undefined ? { logout: { ...context.logout } } : {}),
        ...(context.grant !== undefined ? { grant: context.grant } : {}),
      }
      ring.push(event)
      if (ring.length > capacity) ring.shift()
      return event
    },
    list(test, since = 0) {
      return ring.filter((e) => e.test === test && e.seq > since)
    },
    last: () => seq,
  }
}
