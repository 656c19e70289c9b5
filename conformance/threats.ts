import type { RequirementId } from './requirements.ts'

/**
 * The security profile's threat catalogue: every threat of RFC 9700 §4 and RFC 6819 §4, for the
 * interface of INTERFACE.md (code flow with PKCE, confidential clients with client_secret_post,
 * refresh tokens, client credentials, JWT access tokens, introspection, revocation, a hosted
 * login page, RP-initiated logout).
 *
 * A threat that applies names the checks that show it mitigated (at least one, and each a
 * catalogue ID, so a row naming a missing check does not compile); one that applies but that no
 * black-box check can observe (the server's own database, say) says so with the reason; one that
 * does not apply says why.
 */
export type Threat = {
  /** The RFC section that describes the threat. */
  readonly section: string
  readonly title: string
  /** What the attacker does. */
  readonly attack: string
} & (
  | {
      readonly applies: true
      readonly checks: readonly [RequirementId, ...RequirementId[]]
      /**
       * For a check of `checks` that judges more than the threat (a refusal and the shape of
       * its answer, say): the parts of its subject that are this threat's (the `on` names of
       * its expectations, CheckResult.subjects). Its failure on another part leaves the threat
       * not shown, never not mitigated; a failure without a part's name still counts.
       */
      readonly parts?: Partial<Record<RequirementId, readonly [string, ...string[]]>>
      /**
       * What the attack wins when it gets through, for the threats the security gate holds at
       * MUST: a SHOULD check behind such a threat fails a security-profile run (gatedShoulds).
       */
      readonly harm?: Harm
    }
  | { readonly applies: 'unobservable'; readonly reason: string }
  | {
      readonly applies: false
      readonly reason: string
      /** The checks that show the feature the threat needs is refused, when there are any. */
      readonly evidence?: readonly RequirementId[]
    }
)

/** The harms the security profile's gate will not ship: the attacker acts as a user, or holds their tokens. */
export type Harm = 'account takeover' | 'token theft'

/** REV-02's part that is a threat's: the revoked refresh token neither refreshes nor introspects active. */
export const REVOKED_REFRESH_TOKEN = 'the revoked refresh token refused'

/** LOGIN-05's parts that are the Referer threat's: the login page's referrer policy and its third-party resources (SameSite is about cross-site requests, not Referer). */
export const REFERRER_POLICY = 'the referrer policy'
export const THIRD_PARTY = 'third-party resources'

/** RATE-01's and RATE-03's part that is the login page's credential guessing (RFC 6749 §10.10). */
export const LOGIN_FORM = 'login form'

const NO_IMPLICIT =
  'the implicit grant is not offered: response_type is code only (AUTHZ-07, DISC-04 show it)'
const NO_ROPC =
  'the resource owner password grant is not offered (SEC-05 shows it refused, RFC 9700 §2.4)'

export const threats = [
  // RFC 9700 §4
  {
    section: 'RFC 9700 §4.1',
    title: 'Insufficient redirect URI validation',
    attack:
      'sends the authorization request with a redirect_uri it controls (a pattern match, a path, port or case variant) and collects the code',
    applies: true,
    checks: ['AUTHZ-04', 'AUTHZ-05', 'AUTHZ-06', 'CODE-05'],
  },
  {
    section: 'RFC 9700 §4.2',
    title: 'Credential leakage via Referer headers',
    attack:
      'reads the authorization request or response URL (state, code) from the Referer of a request the login or error page makes to a third party',
    applies: true,
    checks: ['SEC-08', 'LOGIN-05', 'CODE-02', 'CODE-03'],
    parts: { 'LOGIN-05': [REFERRER_POLICY, THIRD_PARTY] },
    harm: 'token theft',
  },
  {
    section: 'RFC 9700 §4.3',
    title: 'Credential leakage via browser history',
    attack: 'reads a code from the browser history and redeems it, or an access token put in a URL',
    applies: true,
    checks: ['CODE-02', 'CODE-05', 'PKCE-05', 'UI-12'],
  },
  {
    section: 'RFC 9700 §4.4',
    title: 'Mix-up attacks',
    attack:
      "an attacker's authorization server makes a client send a code issued by this server to the attacker",
    applies: true,
    checks: ['SEC-03', 'AUTHZ-18', 'DISC-02'],
  },
  {
    section: 'RFC 9700 §4.5',
    title: 'Authorization code injection',
    attack:
      "injects a stolen code into the attacker's own session with the client, to be signed in as the victim",
    applies: true,
    checks: ['PKCE-01', 'PKCE-05', 'PKCE-06', 'CODE-06', 'AUTHZ-12'],
  },
  {
    section: 'RFC 9700 §4.6',
    title: 'Access token injection',
    attack: 'injects a stolen access token into an implicit-grant response',
    applies: false,
    reason: NO_IMPLICIT,
    evidence: ['AUTHZ-07', 'DISC-04'],
  },
  {
    section: 'RFC 9700 §4.7',
    title: 'Cross-site request forgery',
    attack:
      "makes the victim's browser post to the login form or the client's redirect URI with the attacker's values",
    applies: true,
    checks: ['LOGIN-03', 'AUTHZ-09', 'PKCE-01'],
  },
  {
    section: 'RFC 9700 §4.8',
    title: 'PKCE downgrade',
    attack:
      'strips code_challenge from the authorization request, or redeems the code without or with another verifier',
    applies: true,
    checks: ['PKCE-01', 'PKCE-02', 'PKCE-05', 'PKCE-06', 'PKCE-08'],
    harm: 'account takeover',
  },
  {
    section: 'RFC 9700 §4.9',
    title: 'Access token leakage at the resource server',
    attack:
      'a counterfeit or compromised resource server replays the access tokens it receives at another resource server',
    applies: true,
    checks: ['AT-04', 'RS-01'],
  },
  {
    section: 'RFC 9700 §4.10',
    title: 'Misuse of stolen access tokens',
    attack: 'uses a stolen access token after the user or client revoked it, or for long',
    applies: true,
    checks: ['AT-03', 'REV-01', 'REV-03', 'UI-07'],
    harm: 'token theft',
  },
  {
    section: 'RFC 9700 §4.11',
    title: 'Open redirection',
    attack:
      'uses the authorization or logout endpoint to send a browser to an arbitrary site (an invalid client or redirect_uri, a post_logout_redirect_uri); error redirects go only to redirect URIs the operator registered, as the interface has no dynamic registration (§4.11.2)',
    applies: true,
    checks: ['AUTHZ-03', 'AUTHZ-04', 'AUTHZ-06', 'LOGOUT-02', 'LOGOUT-03', 'LOGOUT-04'],
  },
  {
    section: 'RFC 9700 §4.12',
    title: '307 redirect',
    attack:
      'a 307 after the credential POST makes the browser re-post the user name and password to the client',
    applies: true,
    checks: ['LOGIN-04'],
  },
  {
    section: 'RFC 9700 §4.13',
    title: 'TLS terminating reverse proxies',
    attack: 'spoofs the headers by which a proxy tells the server about the TLS connection',
    applies: true,
    checks: ['TLS-01'],
  },
  {
    section: 'RFC 9700 §4.14',
    title: 'Refresh token protection',
    attack: 'uses a stolen refresh token, from another client or after revocation',
    applies: true,
    checks: ['RT-07', 'RT-08', 'RT-09', 'RT-10', 'REV-02', 'CODE-03'],
    // REV-02 also judges the revocation answer's shape (INTERFACE.md §4.5), no part of this
    parts: { 'REV-02': [REVOKED_REFRESH_TOKEN] },
    harm: 'token theft',
  },
  {
    section: 'RFC 9700 §4.15',
    title: 'Client impersonating resource owner',
    attack:
      "registers or names a client so that its client_credentials token's sub equals a user's, and acts as that user at a resource server",
    applies: true,
    checks: ['SEC-10', 'CC-04'],
    harm: 'account takeover',
  },
  {
    section: 'RFC 9700 §4.16',
    title: 'Clickjacking',
    attack: 'frames the login page invisibly and makes the user click through it',
    applies: true,
    checks: ['LOGIN-02'],
  },
  {
    section: 'RFC 9700 §4.17',
    title: 'Attacks on in-browser communication flows',
    attack: 'intercepts a response delivered by postMessage (web_message response mode)',
    applies: false,
    reason:
      'responses are delivered by redirect only: response_modes_supported is [query] (DISC-09)',
  },
  // RFC 6819 §4.1: clients
  {
    section: 'RFC 6819 §4.1.1',
    title: 'Obtaining client secrets',
    attack: "reads a client's secret from the client, or guesses it online",
    applies: true,
    checks: ['RATE-03', 'TOK-03', 'TOK-08', 'SEC-04'],
  },
  {
    section: 'RFC 6819 §4.1.2',
    title: 'Obtaining refresh tokens',
    attack: 'steals a refresh token from a client and uses it',
    applies: true,
    checks: ['RT-07', 'RT-08', 'REV-02'],
    parts: { 'REV-02': [REVOKED_REFRESH_TOKEN] },
  },
  {
    section: 'RFC 6819 §4.1.3',
    title: 'Obtaining access tokens',
    attack: 'steals an access token from a client and uses it for long',
    applies: true,
    checks: ['AT-03', 'REV-01'],
  },
  {
    section: 'RFC 6819 §4.1.4',
    title: 'End-user credentials phished using compromised or embedded browser',
    attack: "a native app shows the login page in its own browser and reads the user's password",
    applies: false,
    reason:
      'a property of the client application, not of the authorization server; the login page cannot be framed (LOGIN-02)',
  },
  {
    section: 'RFC 6819 §4.1.5',
    title: 'Open redirectors on client',
    attack: "uses the client's redirect URI as an open redirector",
    applies: true,
    checks: ['AUTHZ-05'],
  },
  // §4.2: authorization endpoint
  {
    section: 'RFC 6819 §4.2.1',
    title: 'Password phishing by counterfeit authorization server',
    attack: 'impersonates the authorization server to collect passwords',
    applies: true,
    checks: ['TLS-01', 'TLS-02', 'TLS-03'],
    harm: 'account takeover',
  },
  {
    section: 'RFC 6819 §4.2.2',
    title: 'User unintentionally grants too much access scope',
    attack: 'requests scopes beyond what the client may have',
    applies: true,
    checks: ['AUTHZ-11', 'CODE-09', 'RT-06', 'CC-03'],
  },
  {
    section: 'RFC 6819 §4.2.3',
    title: 'Malicious client obtains existing authorization by fraud',
    attack: 'uses an existing session to get a code without the user noticing',
    applies: true,
    checks: ['AUTHZ-04', 'AUTHZ-15', 'LOGIN-02'],
  },
  {
    section: 'RFC 6819 §4.2.4',
    title: 'Open redirector',
    attack: 'uses the authorization endpoint as an open redirector',
    applies: true,
    checks: ['AUTHZ-03', 'AUTHZ-04', 'ROBUST-03'],
  },
  // §4.3: token endpoint
  {
    section: 'RFC 6819 §4.3.1',
    title: 'Eavesdropping access tokens',
    attack: 'reads token responses on the network or from a cache',
    applies: true,
    checks: ['TLS-01', 'TLS-02', 'TOK-01'],
  },
  {
    section: 'RFC 6819 §4.3.2',
    title: 'Obtaining access tokens from authorization server database',
    attack: "reads tokens from the server's database",
    applies: 'unobservable',
    reason:
      'storage is not visible from outside; the reference server keeps refresh tokens, codes and sessions as SHA-256 digests only (ARCHITECTURE.md)',
  },
  {
    section: 'RFC 6819 §4.3.3',
    title: 'Disclosure of client credentials during transmission',
    attack: 'reads client secrets on the network, from URLs or logs',
    applies: true,
    checks: ['TLS-01', 'SEC-04', 'TOK-05'],
  },
  {
    section: 'RFC 6819 §4.3.4',
    title: 'Obtaining client secret from authorization server database',
    attack: "reads client secrets from the server's database",
    applies: 'unobservable',
    reason:
      'storage is not visible from outside; the reference server stores client secrets as SHA-256 digests (ARCHITECTURE.md)',
  },
  {
    section: 'RFC 6819 §4.3.5',
    title: 'Obtaining client secret by online guessing',
    attack: 'tries secrets for a client_id until one works',
    applies: true,
    checks: ['RATE-01', 'RATE-03', 'SEC-01'],
  },
  // §4.4.1: authorization code
  {
    section: 'RFC 6819 §4.4.1.1',
    title: 'Eavesdropping or leaking authorization codes',
    attack: 'reads a code on the network, in logs or the Referer, and redeems it',
    applies: true,
    checks: ['TLS-01', 'CODE-02', 'CODE-06', 'CODE-07', 'PKCE-05', 'SEC-08'],
    harm: 'token theft',
  },
  {
    section: 'RFC 6819 §4.4.1.2',
    title: 'Obtaining codes from authorization server database',
    attack: "reads codes from the server's database",
    applies: 'unobservable',
    reason:
      'storage is not visible from outside; codes are short-lived and single use (CODE-02, CODE-07) and bound to the client and PKCE',
  },
  {
    section: 'RFC 6819 §4.4.1.3',
    title: 'Online guessing of codes',
    attack: 'guesses codes and tries them at the token endpoint',
    applies: true,
    checks: ['CODE-10', 'SEC-06', 'CODE-07', 'RATE-03'],
  },
  {
    section: 'RFC 6819 §4.4.1.4',
    title: 'Malicious client obtains authorization',
    attack: 'obtains authorization without the user, by automating the login page',
    applies: true,
    checks: ['LOGIN-03', 'SEC-02'],
    harm: 'account takeover',
  },
  {
    section: 'RFC 6819 §4.4.1.5',
    title: 'Authorization code phishing',
    attack: 'a counterfeit server or DNS receives the code',
    applies: true,
    checks: ['TLS-01', 'TLS-02', 'AUTHZ-05'],
  },
  {
    section: 'RFC 6819 §4.4.1.6',
    title: 'User session impersonation',
    attack: "takes over the user's session with the client by a stolen code or session",
    applies: true,
    checks: ['CODE-06', 'PKCE-06', 'SEC-07', 'SEC-11'],
    harm: 'account takeover',
  },
  {
    section: 'RFC 6819 §4.4.1.7',
    title: 'Authorization code leakage through counterfeit client',
    attack: "registers a client and redirects to the real client's redirect_uri",
    applies: true,
    checks: ['AUTHZ-04', 'CODE-05', 'CODE-06'],
  },
  {
    section: 'RFC 6819 §4.4.1.8',
    title: 'CSRF attack against redirect-uri',
    attack: "delivers the attacker's code to the victim's client",
    applies: true,
    checks: ['AUTHZ-09', 'PKCE-06'],
  },
  {
    section: 'RFC 6819 §4.4.1.9',
    title: 'Clickjacking attack against authorization',
    attack: 'frames the login page',
    applies: true,
    checks: ['LOGIN-02'],
  },
  {
    section: 'RFC 6819 §4.4.1.10',
    title: 'Resource owner impersonation',
    attack: 'a client drives the login page as the user',
    applies: true,
    checks: ['LOGIN-03', 'AUTHZ-14', 'AUTHZ-15'],
  },
  {
    section: 'RFC 6819 §4.4.1.11',
    title: 'DoS attacks that exhaust resources',
    attack:
      "floods an endpoint, or exhausts a client's or user's limit so the real one is locked out",
    applies: true,
    checks: ['RATE-01', 'RATE-03', 'RATE-05', 'SEC-01', 'ROBUST-01'],
  },
  {
    section: 'RFC 6819 §4.4.1.12',
    title: 'DoS using manufactured authorization codes',
    attack: 'makes clients redeem many invalid codes',
    applies: true,
    checks: ['CODE-08', 'RATE-01'],
  },
  {
    section: 'RFC 6819 §4.4.1.13',
    title: 'Code substitution (OAuth login)',
    attack: "substitutes the victim's code into the attacker's session with the client",
    applies: true,
    checks: ['CODE-06', 'PKCE-06', 'AUTHZ-12'],
  },
  // §4.4.2: implicit grant, §4.4.3: resource owner password credentials
  {
    section: 'RFC 6819 §4.4.2',
    title: 'Implicit grant threats (§4.4.2.1-§4.4.2.6)',
    attack: 'steals or injects tokens delivered in the URL fragment',
    applies: false,
    reason: NO_IMPLICIT,
    evidence: ['AUTHZ-07', 'DISC-04'],
  },
  {
    section: 'RFC 6819 §4.4.3',
    title: 'Resource owner password credentials threats (§4.4.3.1-§4.4.3.6)',
    attack: 'collects passwords through a client, or guesses them at the token endpoint',
    applies: false,
    reason: NO_ROPC,
    evidence: ['SEC-05', 'DISC-05'],
  },
  // §4.5: refreshing an access token
  {
    section: 'RFC 6819 §4.5.1',
    title: 'Eavesdropping refresh tokens from authorization server',
    attack: 'reads refresh tokens on the network',
    applies: true,
    checks: ['TLS-01', 'TLS-02', 'TOK-01'],
  },
  {
    section: 'RFC 6819 §4.5.2',
    title: 'Obtaining refresh token from authorization server database',
    attack: "reads refresh tokens from the server's database",
    applies: 'unobservable',
    reason:
      'storage is not visible from outside; the reference server stores refresh tokens as SHA-256 digests',
  },
  {
    section: 'RFC 6819 §4.5.3',
    title: 'Obtaining refresh token by online guessing',
    attack: 'guesses refresh tokens',
    applies: true,
    checks: ['TOK-07', 'SEC-06', 'RT-08'],
  },
  {
    section: 'RFC 6819 §4.5.4',
    title: 'Refresh token phishing by counterfeit authorization server',
    attack: 'a counterfeit server collects refresh tokens',
    applies: true,
    checks: ['TLS-02', 'DISC-02'],
  },
  // §4.6: accessing protected resources
  {
    section: 'RFC 6819 §4.6.1',
    title: 'Eavesdropping access tokens on transport',
    attack: 'reads access tokens on the network',
    applies: true,
    checks: ['TLS-01', 'TLS-02', 'TLS-03'],
    harm: 'token theft',
  },
  {
    section: 'RFC 6819 §4.6.2',
    title: 'Replay of authorized resource server requests',
    attack: 'replays a request to a resource server',
    applies: false,
    reason:
      "a property of the resource servers, which INTERFACE.md §5.6 leaves to the client application's backend; tokens expire (AT-03)",
  },
  {
    section: 'RFC 6819 §4.6.3',
    title: 'Guessing access tokens',
    attack: 'forges or guesses access tokens',
    applies: true,
    checks: ['ROBUST-02', 'UI-07', 'JWKS-03'],
  },
  {
    section: 'RFC 6819 §4.6.4',
    title: 'Access token phishing by counterfeit resource server',
    attack: 'a counterfeit resource server replays the tokens it receives',
    applies: true,
    checks: ['AT-04', 'RS-01'],
  },
  {
    section: 'RFC 6819 §4.6.5',
    title: 'Abuse of token by legitimate resource server or client',
    attack: 'uses a token beyond its scope or audience',
    applies: true,
    checks: ['AT-04', 'AT-05', 'RS-02'],
  },
  {
    section: 'RFC 6819 §4.6.6',
    title: 'Leak of confidential data in HTTP proxies',
    attack: 'reads tokens and user data cached by proxies',
    applies: true,
    checks: ['TOK-01', 'LOGIN-05'],
    harm: 'token theft',
  },
  {
    section: 'RFC 6819 §4.6.7',
    title: 'Token leakage via log files and HTTP referrers',
    attack: 'reads tokens and credentials from URLs in logs and Referer headers',
    applies: true,
    // UI-12: user-info refuses an access token in the URI query (RFC 6750 §2.3, §5.3)
    checks: ['SEC-04', 'SEC-08', 'UI-12'],
    harm: 'token theft',
  },
  // RFC 6749 §10.10: the login page's own guessing threat, which RFC 6819 §4 leaves to the
  // password grant (§4.4.3.6, not offered)
  {
    section: 'RFC 6749 §10.10',
    title: 'Credentials-guessing attacks on the login page',
    attack:
      'learns which user names exist from failed sign-ins (their page, status or redirect, or timing), then guesses those users\' passwords at the login form, as often as it lets it: "The authorization server MUST prevent attackers from guessing … resource owner passwords"',
    applies: true,
    checks: ['LOGIN-07', 'SEC-02', 'RATE-01', 'RATE-03'],
    parts: { 'RATE-01': [LOGIN_FORM], 'RATE-03': [LOGIN_FORM] },
    harm: 'account takeover',
  },
  // not applicable by the interface's choices
  {
    section: 'RFC 9700 §2.2.2, §4.14 (public clients)',
    title: 'Refresh token theft from public clients',
    attack: 'uses a refresh token stolen from a public client, which cannot authenticate',
    applies: false,
    reason: 'every client is confidential (client_secret_post is required, INTERFACE.md §5.3)',
  },
  {
    section: 'RFC 9700 §4.10.1 (sender-constrained tokens)',
    title: 'DPoP and mutual TLS',
    attack: 'replays a stolen token that a sender constraint would have bound to its holder',
    applies: false,
    reason:
      'neither DPoP (RFC 9449) nor mTLS (RFC 8705) is part of the interface: access tokens are bearer tokens (INTERFACE.md §2.2)',
  },
  {
    section: 'RFC 7591 §5 (dynamic registration)',
    title: 'Malicious dynamic client registration',
    attack: 'registers a client with a misleading name or a phishing redirect URI',
    applies: false,
    reason:
      'the interface has no registration endpoint (INTERFACE.md §4.10); clients are configured by the operator',
  },
] as const satisfies readonly Threat[]

/**
 * The security gate (issue 30): every SHOULD check that a threat with a harm names, with why.
 * A security-profile run (`--only security`) fails when one of them warns, as --strict would
 * fail it on any SHOULD: these are the warnings that ship an account takeover or a token theft.
 */
export function gatedShoulds(levelOf: (id: RequirementId) => string): Map<RequirementId, string> {
  const why = new Map<RequirementId, string[]>()
  for (const t of threats as readonly Threat[])
    if (t.applies === true && t.harm)
      for (const id of t.checks)
        if (levelOf(id) === 'SHOULD')
          why.set(id, [...(why.get(id) ?? []), `${t.harm} (${t.section} ${t.title})`])
  return new Map([...why].map(([id, reasons]) => [id, [...new Set(reasons)].join('; ')]))
}

/** Every check the profile relies on: the SEC-* rows and every check a threat names. */
export function profileChecks(): RequirementId[] {
  const ids = new Set<RequirementId>()
  for (const t of threats as readonly Threat[])
    if (t.applies === true) t.checks.forEach((id) => ids.add(id))
    else if (t.applies === false) t.evidence?.forEach((id) => ids.add(id))
  return [...ids]
}
