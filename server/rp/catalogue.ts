/**
 * The relying-party tests: one test issuer per entry, served at `{base_url}/rp/{id}`, each
 * answering a normal sign-in with exactly one deliberate fault. A test has the ID of the OpenID
 * Foundation's RP test (its `rp-…` test names, kept by the conformance suite's client test plans,
 * or its module's `oidcc-client-test-…` name for a test that has no `rp-…` one) only when it
 * means the same: same direction (refuse or sign in) and, where the Foundation's Basic RP
 * certification plan has the test, the same level. Where ours differs it has its own ID and
 * `foundation` names the Foundation's test it relates to and how.
 *
 * A negative test is passed by a client that refuses the sign-in and does not use what it was
 * given; a positive one by a client that signs in (and, for the logout tests, then logs out as
 * RP-Initiated Logout asks; for the refresh test, then refreshes and calls user-info). `level` says how hard the spec words the client's duty: a MUST not
 * met fails a run, a SHOULD warns, a MAY is recorded.
 */

export type RpLevel = 'MUST' | 'SHOULD' | 'MAY'

/**
 * Where the fault is delivered: the discovery document, the redirect to the client, the token
 * response or user-info.
 */
export type RpStage =
  'discovery' | 'authorization-response' | 'token-response' | 'userinfo-response' | 'end-session'

export interface RpTest {
  readonly id: string
  readonly kind: 'negative' | 'positive'
  readonly level: RpLevel
  readonly stage: RpStage
  /** What the test issuer does, in one line. */
  readonly title: string
  /** For negative tests: the sentence after "your client accepted …". */
  readonly accepted?: string
  /** Where the client's duty is written. */
  readonly reference: string
  /** What to change in the client (negative) or what the test proves (positive). */
  readonly fix: string
  /** Set when the test only applies if the client sent this parameter on its authorize request. */
  readonly needs?: 'state' | 'nonce'
  /**
   * What the client must be seen doing for the fault to be exercised at all: fetching this
   * issuer's JWKS (a key test proves nothing about a client that never looks a key up), or
   * calling user-info, or sending the user to this issuer's end_session_endpoint after the
   * sign-in (the runner asks for that with `RP_TEST_LOGOUT=1`), or redeeming its refresh token
   * and calling user-info with the new access token (`RP_TEST_REFRESH=1`). Without it the test is
   * "not exercised", never passed.
   */
  readonly exercisedBy?: 'jwks' | 'userinfo' | 'logout' | 'refresh'
  /**
   * For a logout test: how the issuer redirects back to a logout that carried state (default: the
   * state echoed unchanged): with another state, or without it. The client's handling of that
   * redirect is recorded, not judged (see the tests that set it).
   */
  readonly backFromLogout?: 'other-state' | 'no-state'
  /**
   * How many sign-ins the test needs, one after the other at the same issuer (default one): the
   * runner runs the sign-in command that many times and judges each.
   */
  readonly signIns?: 2
  /**
   * The OpenID Foundation RP test this one is (`same`) or relates to, and how it differs;
   * `plan` when the test is in another Foundation plan than {@link FOUNDATION_PLAN}.
   */
  readonly foundation?: { readonly id: string; readonly relation: string; readonly plan?: string }
}

/**
 * Where the Foundation's RP tests are listed: the conformance suite's Basic RP certification
 * plan (OIDCCClientBasicTestPlan, which names each module's `rp-…` test) and its config plan.
 */
export const FOUNDATION_PLAN =
  'OpenID Foundation conformance suite, oidcc-client-basic-certification-test-plan (Basic RP)'

export const RP_TESTS = [
  {
    id: 'rp-id_token-sig-rs256',
    kind: 'positive',
    level: 'MUST',
    foundation: { id: 'rp-id_token-sig-rs256', relation: 'same test (Basic RP: required)' },
    stage: 'token-response',
    title: 'a correct sign-in: RS256 ID token, no fault (the control)',
    reference: 'OpenID Connect Core §3.1.3.7',
    fix: 'sign in at an issuer that makes no fault: until it does, no refusal in the other tests proves anything',
  },
  {
    id: 'rp-discovery-issuer-not-matching-config',
    kind: 'negative',
    level: 'MUST',
    foundation: {
      id: 'rp-discovery-issuer-not-matching-config',
      relation: 'same test, same direction (the Foundation config RP plan; not in Basic RP)',
    },
    stage: 'discovery',
    title:
      'discovery document whose issuer is another issuer (the ID token and the callback iss name that issuer too)',
    accepted:
      'a discovery document whose issuer differs from the issuer URL it was fetched from, and started a sign-in there',
    reference: 'OpenID Connect Discovery 1.0 §4.3; RFC 8414 §3.3',
    fix: 'compare the issuer of the discovery document exactly with the issuer URL you fetched it from, and refuse to use the document when they differ',
  },
  {
    id: 'rp-id_token-bad-sig-rs256-code-flow',
    kind: 'negative',
    // Core §3.1.3.7 (6) lets a code-flow client rely on TLS to the token endpoint instead
    level: 'SHOULD',
    foundation: {
      id: 'rp-id_token-bad-sig-rs256',
      relation:
        'same fault, lower level: the Foundation certifies a refusal (Basic RP: required); in the code flow Core §3.1.3.7 (6) lets the client rely on TLS instead, so here it is a SHOULD',
    },
    stage: 'token-response',
    title: 'ID token whose RS256 signature does not verify with the published key',
    accepted: 'an ID token whose signature does not verify with the key its kid names',
    reference:
      'OpenID Connect Core §3.1.3.7 (6) (a code-flow client MAY rely on TLS instead); RFC 7515 §5.2',
    fix: 'verify the ID token signature with the issuer JWKS key its kid names, and refuse the sign-in when it does not verify',
  },
  {
    id: 'rp-id_token-alg-none-refused',
    kind: 'negative',
    level: 'MUST',
    foundation: {
      id: 'rp-id_token-sig-none',
      relation:
        'opposite direction: the Foundation test registers the client for alg none and expects it to sign in; here the client never registered none, so it must refuse',
    },
    stage: 'token-response',
    title: 'unsecured ID token (alg none)',
    accepted: 'an unsigned ID token (alg none) from an issuer that signs with RS256',
    reference:
      'OpenID Connect Core §2 (none only when the client registered it) and §3.1.3.7 (7); RFC 8725 §2.1, §3.1',
    fix: 'allow only the algorithms the issuer advertises (id_token_signing_alg_values_supported: RS256) and never alg none',
  },
  {
    id: 'rp-id_token-issuer-mismatch',
    kind: 'negative',
    level: 'MUST',
    foundation: {
      id: 'rp-id_token-issuer-mismatch',
      relation: 'same test, same level (Basic RP: required)',
    },
    stage: 'token-response',
    title: 'ID token iss of another issuer',
    accepted: 'an ID token whose iss is another issuer',
    reference: 'OpenID Connect Core §3.1.3.7 (2)',
    fix: 'compare the ID token iss exactly with the issuer of the discovery document you started from',
  },
  {
    id: 'rp-id_token-sub',
    kind: 'negative',
    level: 'MUST',
    foundation: { id: 'rp-id_token-sub', relation: 'same test, same level (Basic RP: required)' },
    stage: 'token-response',
    title: 'ID token without sub',
    accepted: 'an ID token without sub',
    reference: 'OpenID Connect Core §2 (sub REQUIRED), §3.1.3.7',
    fix: 'refuse an ID token without sub: the user is identified by iss and sub together',
  },
  {
    id: 'rp-id_token-aud',
    kind: 'negative',
    level: 'MUST',
    foundation: { id: 'rp-id_token-aud', relation: 'same test, same level (Basic RP: required)' },
    stage: 'token-response',
    title: 'ID token aud of another client',
    accepted: 'an ID token issued to another client (aud)',
    reference: 'OpenID Connect Core §3.1.3.7 (3)',
    fix: 'refuse an ID token whose aud does not contain your client_id',
  },
  {
    id: 'oidcc-client-test-missing-aud',
    kind: 'negative',
    // the Foundation's module stops the test as failed when the client goes on to user-info
    // (AbstractOIDCCClientTestExpectingNothingInvalidIdToken); Core §2 makes aud REQUIRED
    level: 'MUST',
    foundation: {
      id: 'oidcc-client-test-missing-aud',
      plan: 'OpenID Foundation conformance suite, oidcc-client-test-plan (comprehensive RP tests, not part of certification), module OIDCCClientTestMissingAudInIdToken',
      relation:
        'same test (the comprehensive RP plan; not in Basic RP): the ID token has no aud, and a client that goes on to user-info with its access token fails',
    },
    stage: 'token-response',
    title: 'ID token without aud',
    accepted: 'an ID token without aud (it names no audience, so not your client)',
    reference:
      'OpenID Connect Core §2 (aud REQUIRED in every ID token) and §3.1.3.7 (3) (the ID token MUST be rejected if it does not list the client as a valid audience)',
    fix: 'refuse an ID token whose aud is missing or does not contain your client_id',
  },
  {
    id: 'rp-id_token-aud-multiple-no-azp',
    kind: 'negative',
    level: 'SHOULD',
    stage: 'token-response',
    title: 'ID token with a second, untrusted audience and no azp',
    accepted: 'an ID token with an additional untrusted audience and no azp',
    reference: 'OpenID Connect Core §3.1.3.7 (3) and (4)',
    fix: 'refuse an ID token that lists audiences you do not trust, and require azp when aud has several values',
  },
  {
    id: 'rp-id_token-expired',
    kind: 'negative',
    level: 'MUST',
    stage: 'token-response',
    title: 'ID token whose exp is an hour in the past',
    accepted: 'an expired ID token (exp an hour in the past)',
    reference: 'OpenID Connect Core §3.1.3.7 (9); RFC 7519 §4.1.4',
    fix: 'refuse an ID token whose exp has passed (allow a small clock skew, not an hour)',
  },
  {
    id: 'rp-id_token-iat',
    kind: 'negative',
    // the Foundation's Basic RP plan requires refusing it; Core §2 makes iat REQUIRED
    level: 'MUST',
    foundation: { id: 'rp-id_token-iat', relation: 'same test, same level (Basic RP: required)' },
    stage: 'token-response',
    title: 'ID token without iat',
    accepted: 'an ID token without the REQUIRED iat claim',
    reference:
      'OpenID Connect Core §2 (iat REQUIRED in every ID token) and §3.1.3.7 (10); required by the Foundation Basic RP plan (rp-id_token-iat)',
    fix: 'refuse an ID token that lacks a REQUIRED claim (iss, sub, aud, exp, iat)',
  },
  {
    id: 'rp-nonce-invalid',
    kind: 'negative',
    level: 'MUST',
    foundation: { id: 'rp-nonce-invalid', relation: 'same test, same level (Basic RP: required)' },
    stage: 'token-response',
    needs: 'nonce',
    title: 'ID token nonce different from the one sent',
    accepted: 'an ID token whose nonce differs from the nonce of its authorize request',
    reference: 'OpenID Connect Core §3.1.3.7 (11), §15.5.2',
    fix: 'keep the nonce you sent in the user session and compare the ID token nonce with it exactly',
  },
  {
    id: 'rp-nonce-missing',
    kind: 'negative',
    level: 'MUST',
    stage: 'token-response',
    needs: 'nonce',
    title: 'ID token without nonce although one was sent',
    accepted: 'an ID token without nonce although the authorize request sent one',
    reference: 'OpenID Connect Core §3.1.3.7 (11)',
    fix: 'when you sent a nonce, refuse an ID token that has none',
  },
  {
    id: 'rp-id_token-kid-unknown',
    kind: 'negative',
    level: 'SHOULD',
    stage: 'token-response',
    title: 'ID token signed by a key whose kid is not in the JWKS',
    accepted: 'an ID token signed by a key the issuer does not publish',
    reference:
      'OpenID Connect Core §3.1.3.7 (6) (a code-flow client MAY rely on TLS instead), §10.1.1',
    fix: 'look the kid up in the issuer JWKS (re-fetch it once for an unknown kid) and refuse the sign-in when no published key has it',
  },
  {
    id: 'rp-response-state-mismatch',
    kind: 'negative',
    level: 'SHOULD',
    stage: 'authorization-response',
    needs: 'state',
    title: 'authorization response whose state differs from the one sent',
    accepted: 'an authorization response whose state differs from the state it sent',
    reference:
      'RFC 6749 §4.1.2, §10.12; RFC 9700 §2.1 (PKCE may carry CSRF protection, but a client that sends state must compare it)',
    fix: 'keep the state in the user session and refuse a callback whose state differs, before redeeming the code',
  },
  {
    id: 'rp-response-iss-mismatch',
    kind: 'negative',
    level: 'SHOULD',
    stage: 'authorization-response',
    title: 'authorization response iss (RFC 9207) of another issuer',
    accepted: 'an authorization response whose iss names another issuer',
    reference:
      'RFC 9207 §2.4 (MUST for clients that implement it); RFC 9700 §4.4.2 (mix-up defence)',
    fix: 'compare the iss parameter of the callback with the issuer you sent the user to, and refuse it when it differs',
  },
  {
    id: 'rp-userinfo-bad-sub-claim',
    kind: 'negative',
    level: 'MUST',
    foundation: {
      id: 'rp-userinfo-bad-sub-claim',
      relation: 'same test, same level (Basic RP: required)',
    },
    stage: 'userinfo-response',
    exercisedBy: 'userinfo',
    title: 'user-info sub different from the ID token sub',
    accepted: 'a user-info response whose sub differs from the ID token sub',
    reference: 'OpenID Connect Core §5.3.4',
    fix: 'compare the user-info sub with the ID token sub and discard the user-info response when they differ',
  },
  {
    id: 'rp-token_type-missing',
    kind: 'negative',
    level: 'MUST',
    stage: 'token-response',
    title: 'token response without token_type',
    accepted: 'a token response without token_type',
    reference:
      'RFC 6749 §5.1 (token_type REQUIRED), §7.1 (do not use a token of a type you do not understand)',
    fix: 'refuse a token response whose token_type is missing or not Bearer (compared case-insensitively)',
  },
  {
    id: 'rp-id_token-bad-at_hash-code-flow',
    kind: 'negative',
    level: 'MAY',
    foundation: {
      id: 'rp-id_token-bad-at_hash',
      relation:
        'same fault, lower level: the Foundation test is in its implicit and hybrid plans, where at_hash is required; in the code flow Core §3.1.3.8 makes the check a MAY',
    },
    stage: 'token-response',
    title: 'ID token at_hash that does not match the access token',
    accepted: 'an ID token whose at_hash does not match the access token',
    reference: 'OpenID Connect Core §3.1.3.8 (MAY in the code flow), §3.2.2.9',
    fix: 'when the ID token carries at_hash, compare it with the left half of SHA-256 of the access token',
  },
  {
    id: 'rp-key-rotation-op-sign-key-native',
    kind: 'positive',
    level: 'MUST',
    foundation: {
      id: 'rp-key-rotation-op-sign-key-native',
      relation:
        'same test (the Foundation config RP plan, OIDCCClientTestSigningKeyRotationJustBeforeSigning; not in Basic RP): the key is rotated just before the ID token is signed',
    },
    stage: 'token-response',
    exercisedBy: 'jwks',
    title:
      'signing key rotated at every token response: a client holding an earlier JWKS must re-fetch it for the new kid',
    reference: 'OpenID Connect Core §10.1.1',
    fix: 'on an unknown kid, re-fetch the JWKS (once) before refusing: keys rotate',
  },
  {
    id: 'rp-key-rotation-op-sign-key',
    kind: 'positive',
    // Core §10.1.1 words the re-fetch without a requirement keyword ("The verifier knows to go
    // back to the jwks_uri location"), and a client may throttle its re-fetches (jose's
    // createRemoteJWKSet: 30 s; openid-client v5: 60 s) against a flood of unknown kids: a
    // second sign-in inside that window refused is a warning, not a failure of the run
    level: 'SHOULD',
    foundation: {
      id: 'rp-key-rotation-op-sign-key',
      relation:
        'same test, lower level (the Foundation config RP plan, OIDCCClientTestSigningKeyRotation; not in Basic RP): two sign-ins, the key the client fetched at the first is withdrawn before the second, so a client that keeps its first JWKS must re-fetch; a SHOULD here because Core §10.1.1 words the re-fetch without a requirement keyword and a client may throttle its re-fetches',
    },
    stage: 'token-response',
    exercisedBy: 'jwks',
    signIns: 2,
    title:
      'two sign-ins; before the second the signing key is replaced and the JWKS publishes only the new key',
    reference: 'OpenID Connect Core §10.1.1',
    fix: 'on an unknown kid, re-fetch the JWKS (once) before refusing: a JWKS kept from an earlier sign-in goes stale when keys rotate (a client that throttles re-fetches, such as jose or openid-client v5, can have its command wait when RP_TEST_SIGN_IN is 2)',
  },
  {
    id: 'rp-jwks-two-keys',
    kind: 'positive',
    level: 'MUST',
    stage: 'token-response',
    exercisedBy: 'jwks',
    title: 'two keys in the JWKS; the ID token is signed by the second',
    reference: 'OpenID Connect Core §10.1; RFC 7517 §4.5',
    fix: 'pick the verification key by kid, not the first key of the set',
  },
  {
    id: 'rp-id_token-kid-absent-single-jwks',
    kind: 'positive',
    level: 'MUST',
    foundation: {
      id: 'rp-id_token-kid-absent-single-jwks',
      relation: 'same test (Basic RP: in the plan)',
    },
    stage: 'token-response',
    exercisedBy: 'jwks',
    title: 'ID token without kid, and one key in the JWKS (itself without kid)',
    reference: 'OpenID Connect Core §10.1 (kid MAY be omitted when the JWKS holds one key)',
    fix: 'when the ID token has no kid and the issuer publishes a single signing key, verify with that key',
  },
  {
    id: 'rp-id_token-kid-absent-multiple-jwks',
    kind: 'positive',
    // the Foundation lets the client either try every key (and sign in) or refuse: recorded only
    level: 'MAY',
    foundation: {
      id: 'rp-id_token-kid-absent-multiple-jwks',
      relation:
        'same test (Basic RP: in the plan), where the client may refuse or try every key; a refusal is recorded, never failed',
    },
    stage: 'token-response',
    exercisedBy: 'jwks',
    title: 'ID token without kid, and two keys in the JWKS without kid (the second signs)',
    reference:
      'OpenID Connect Core §10.1 (kid is required when the JWKS holds several keys, so the client may refuse or try each)',
    fix: 'try each published RS256 key until one verifies, if it is to sign in at such issuers (refusing is allowed here)',
  },
  {
    id: 'rp-scope-userinfo-claims',
    kind: 'positive',
    level: 'MUST',
    foundation: {
      id: 'rp-scope-userinfo-claims',
      relation: 'same test (Basic RP: in the plan)',
    },
    stage: 'userinfo-response',
    exercisedBy: 'userinfo',
    title: 'the claims of the scopes asked for (profile, email), answered by user-info',
    reference: 'OpenID Connect Core §5.4 (claims requested by scope values), §5.3.2',
    fix: 'call user-info with the access token and accept the claims of the scopes you asked for',
  },
  {
    id: 'rp-token-response-extra-members',
    kind: 'positive',
    level: 'MUST',
    stage: 'token-response',
    title: 'token response with extra members the client does not know',
    reference: 'RFC 6749 §5.1 (the client MUST ignore unrecognized value names)',
    fix: 'ignore token response members you do not know',
  },
  {
    id: 'oidcc-client-test-refresh-token',
    kind: 'positive',
    // the Foundation's module fails a refresh request whose refresh token or scope is wrong
    // (ValidateRefreshToken, EnsureScopeInRefreshRequestContainsNoMoreThanOriginallyGranted, both
    // stop the test as failed) and finishes only on a user-info call after the refresh: the same
    // here, a refresh the issuer refused fails, and one never made is not exercised
    level: 'MUST',
    foundation: {
      id: 'oidcc-client-test-refresh-token',
      plan: 'OpenID Foundation conformance suite, oidcc-client-refreshtoken-test-plan (refresh token RP, not part of certification), module OIDCCClientTestRefreshToken',
      relation:
        'same test (the refresh token RP plan): sign in, redeem the refresh token, call user-info with the new access token; the refresh response here carries no ID token and no new refresh token (INTERFACE.md §2.2)',
    },
    stage: 'token-response',
    exercisedBy: 'refresh',
    title:
      'after the sign-in, the refresh_token grant answers a new access token, which user-info accepts',
    reference:
      'RFC 6749 §6 (the refresh request; a confidential client MUST authenticate, and the scope MUST NOT include any scope not originally granted) and §3.2.1; OpenID Connect Core §12.1, §12.2',
    fix: 'after the sign-in, redeem the refresh token at the token endpoint (grant_type=refresh_token, client_secret_post, no scope beyond the one granted) and call user-info with the access token it answers',
  },
  {
    id: 'rp-init-logout',
    kind: 'positive',
    // the Foundation's module (OIDCCClientTestRPInitLogout) fails a logout request whose
    // id_token_hint is missing or not an ID token it issued (ValidateIdTokenHintInRPInitiated-
    // LogoutRequest) and one whose post_logout_redirect_uri is missing or not registered
    // (ValidatePostLogoutRedirectUri), both at FAILURE: the same level here, though RP-Initiated
    // Logout §2 words id_token_hint RECOMMENDED and post_logout_redirect_uri OPTIONAL
    level: 'MUST',
    foundation: {
      id: 'rp-init-logout',
      plan: 'OpenID Foundation conformance suite, oidcc-client-rp-initiated-logout-rp-basic (RP-Initiated RP), module oidcc-client-test-rp-init-logout',
      relation:
        'same test (RP-Initiated RP plan: id_token_hint and a registered post_logout_redirect_uri required), without the front- or back-channel logout the Foundation sends on the way (not in INTERFACE.md)',
    },
    stage: 'end-session',
    exercisedBy: 'logout',
    title:
      'after the sign-in, an RP-initiated logout at this issuer: id_token_hint, a registered post_logout_redirect_uri and state, echoed on the redirect back',
    reference:
      'OpenID Connect RP-Initiated Logout 1.0 §2 (id_token_hint: an ID Token previously issued by the OP to the RP; post_logout_redirect_uri: MUST have been previously registered; state: passed back on the redirect), §3; the Foundation requires the hint and the URI',
    fix: "after the sign-in, send the user to the issuer's end_session_endpoint with id_token_hint (the ID token of this sign-in), a post_logout_redirect_uri registered for your client (exactly), and state; accept the redirect back when its state is the one you sent",
  },
  ...(
    [
      {
        id: 'rp-init-logout-other-state',
        module:
          'oidcc-client-test-rp-init-logout-other-state (OIDCCClientTestRPInitLogoutInvalidState)',
        back: 'other-state',
        title:
          'after the sign-in, an RP-initiated logout at this issuer (id_token_hint, registered post_logout_redirect_uri, state); the redirect back carries another state than the one sent',
        how: 'another state than the one the client sent',
      },
      {
        id: 'rp-init-logout-no-state',
        module: 'oidcc-client-test-rp-init-logout-no-state (OIDCCClientTestRPInitLogoutNoState)',
        back: 'no-state',
        title:
          'after the sign-in, an RP-initiated logout at this issuer (id_token_hint, registered post_logout_redirect_uri, state); the redirect back carries no state',
        how: 'no state although the client sent one',
      },
    ] as const
  ).map(
    (v) =>
      ({
        id: v.id,
        kind: 'positive',
        // the request is judged as in rp-init-logout (the Foundation's module extends it: the
        // hint and the URI at FAILURE); the client's handling of the redirect back is recorded,
        // not judged: RP-Initiated Logout §2 defines state as the RP's own opaque value and sets
        // the RP no duty to check it, and the Foundation's module cannot see the handling either
        level: 'MUST',
        foundation: {
          id: v.id,
          plan: `OpenID Foundation conformance suite, oidcc-client-rp-initiated-logout-rp-basic (RP-Initiated RP), module ${v.module}`,
          relation: `same test (RP-Initiated RP plan): the logout request must carry id_token_hint, a registered post_logout_redirect_uri and state (skipped without state, as the Foundation's), and the redirect back carries ${v.how}; the app's handling of that redirect (accepted or turned down) is recorded, as neither the spec nor the Foundation's module judges it; without the front- or back-channel logout the Foundation sends on the way (not in INTERFACE.md)`,
        },
        stage: 'end-session',
        exercisedBy: 'logout',
        backFromLogout: v.back,
        title: v.title,
        reference:
          'OpenID Connect RP-Initiated Logout 1.0 §2 (id_token_hint; post_logout_redirect_uri MUST have been previously registered; state: "Opaque value used by the RP to maintain state between the logout request and the callback", passed back by the OP), §3; the Foundation requires the hint, the URI and, for this test, state',
        fix: "after the sign-in, send the user to the issuer's end_session_endpoint with id_token_hint (the ID token of this sign-in), a post_logout_redirect_uri registered for your client (exactly), and state, and handle the redirect back without breaking whatever its state: accept it or turn it down, and report which",
      }) as const,
  ),
] as const satisfies readonly RpTest[]

export type RpTestId = (typeof RP_TESTS)[number]['id']

/** An OpenID Foundation RP test that has no test issuer here, and why. */
export interface RpNotServed {
  /** The Foundation's `rp-…` name, or its module's name where the plan gives none. */
  readonly id: string
  /** The Foundation plans that hold it. */
  readonly plan: string
  /** Why it is not served: what in INTERFACE.md rules it out, or which test of ours covers it. */
  readonly reason: string
}

const CODE_FLOW_ONLY = 'INTERFACE.md §1: the only response type is code'
const SIGNING = 'INTERFACE.md §1 and §2.7: ID tokens are signed with RS256 only'
const LOGOUT = 'INTERFACE.md §4.6 has RP-initiated logout only'

/**
 * The OpenID Foundation's RP tests (the conformance suite's client test plans) that are not
 * served here under their own ID, each with its reason: `rp-test --list` prints them after the
 * served tests, so every Foundation RP test is either served, covered by one of ours, or
 * documented as not applying to this interface.
 */
export const RP_NOT_SERVED: readonly RpNotServed[] = [
  {
    id: 'rp-response_type-code',
    plan: 'Basic RP',
    reason:
      'covered by our control rp-id_token-sig-rs256: a code-flow sign-in with no fault, which is what this test asks',
  },
  {
    id: 'rp-id_token-sig-none',
    plan: 'Basic RP, config RP',
    reason: `the opposite test is served as rp-id_token-alg-none-refused (--only rp-id_token-sig-none runs it): the Foundation registers the client for alg none and expects a sign-in; ${SIGNING} and no client registers none`,
  },
  {
    id: 'rp-id_token-bad-sig-rs256',
    plan: 'Basic RP',
    reason:
      'served at a lower level as rp-id_token-bad-sig-rs256-code-flow (--only rp-id_token-bad-sig-rs256 runs it): in the code flow OIDC Core §3.1.3.7 (6) lets the client rely on TLS instead',
  },
  {
    id: 'rp-token_endpoint-client_secret_basic',
    plan: 'Basic RP',
    reason:
      'INTERFACE.md §1 and §5 (3): client_secret_post is the only token endpoint authentication method (a client that sends Basic fails the control, told so)',
  },
  {
    id: 'rp-userinfo-bearer-header',
    plan: 'full RP (commented out of Basic RP)',
    reason:
      'not a test of its own: how the client sends its access token is its choice (RFC 6750 §2); INTERFACE.md §4.3 defines the Authorization header, and rp-scope-userinfo-claims passes only on a user-info call the issuer answered',
  },
  {
    id: 'rp-userinfo-bearer-body',
    plan: 'full RP (commented out of Basic RP)',
    reason:
      'INTERFACE.md §4.3 defines the Authorization header only (the test issuers also answer a form-body token on POST, RFC 6750 §2.2, but no test requires it)',
  },
  {
    id: 'rp-discovery-openid-configuration',
    plan: 'config RP, dynamic RP',
    reason:
      'not a test of its own: every test issuer serves its own discovery document and each verdict says whether the client fetched it, but no test requires it (INTERFACE.md lets a client be configured statically); only rp-discovery-issuer-not-matching-config needs it to be exercised',
  },
  {
    id: 'rp-discovery-jwks_uri-keys',
    plan: 'config RP, dynamic RP',
    reason:
      "not a test of its own: the key tests need a fetch of the test issuer's own jwks_uri (else not exercised), but its path is fixed per issuer, not random per run as the Foundation's, so nothing proves the client read it from discovery",
  },
  ...['rp-discovery-webfinger-acct', 'rp-discovery-webfinger-url'].map((id) => ({
    id,
    plan: 'dynamic RP, full RP',
    reason: 'INTERFACE.md has no WebFinger endpoint (OIDC Discovery §2): the issuer is configured',
  })),
  {
    id: 'rp-registration-dynamic',
    plan: 'dynamic RP, full RP',
    reason:
      'INTERFACE.md has no registration endpoint (OIDC Dynamic Client Registration): clients are registered by the operator',
  },
  ...['rp-request_uri-sig', 'rp-request_uri-unsigned'].map((id) => ({
    id,
    plan: 'dynamic RP, full RP',
    reason:
      'INTERFACE.md §4.1 has no request or request_uri parameter (request objects, OIDC Core §6)',
  })),
  {
    id: 'rp-userinfo-sig',
    plan: 'dynamic RP, full RP',
    reason:
      'INTERFACE.md §4.3 answers user-info as plain JSON: no signed user-info response (OIDC Core §5.3.2)',
  },
  ...[
    'rp-response_type-id_token',
    'rp-response_type-id_token+token',
    'rp-response_type-code+id_token',
    'rp-response_type-code+token',
    'rp-response_type-code+id_token+token',
    'rp-nonce-unless-code-flow',
    'rp-id_token-missing-at_hash',
    'rp-id_token-bad-c_hash',
    'rp-id_token-missing-c_hash',
  ].map((id) => ({ id, plan: 'implicit RP, hybrid RP', reason: CODE_FLOW_ONLY })),
  {
    id: 'rp-id_token-bad-at_hash',
    plan: 'implicit RP, hybrid RP',
    reason: `served at a lower level as rp-id_token-bad-at_hash-code-flow (--only rp-id_token-bad-at_hash runs it): ${CODE_FLOW_ONLY}, where OIDC Core §3.1.3.8 makes the at_hash check a MAY`,
  },
  {
    id: 'oidcc-client-test-form-post-error',
    plan: 'form-post RP plans, full RP',
    reason:
      'INTERFACE.md defines no response_mode: the authorization response is a redirect with query parameters, never form_post',
  },
  ...['oidcc-client-test-invalid-sig-hs256', 'oidcc-client-test-invalid-sig-es256'].map((id) => ({
    id,
    plan: 'full RP',
    reason: `${SIGNING}; the Foundation registers the client for ${id.endsWith('hs256') ? 'HS256' : 'ES256'}, which no client here can be`,
  })),
  ...['oidcc-client-test-aggregated-claims', 'oidcc-client-test-distributed-claims'].map((id) => ({
    id,
    plan: 'full RP',
    reason:
      'INTERFACE.md §2.4 has plain user claims only: no aggregated or distributed claims (OIDC Core §5.6.2)',
  })),
  {
    id: 'oidcc-client-test-mtls-endpoint-aliases',
    plan: 'full RP',
    reason:
      'INTERFACE.md has no mutual TLS (RFC 8705 mtls_endpoint_aliases): clients authenticate with client_secret_post',
  },
  ...['rp-frontchannel-rpinitlogout', 'oidcc-client-test-rp-frontchannel-opinitlogout'].map(
    (id) => ({
      id,
      plan: 'front-channel logout RP',
      reason: `${LOGOUT}: no front-channel logout (no frontchannel_logout_uri)`,
    }),
  ),
  ...[
    'rp-backchannel-rpinitlogout',
    'rp-backchannel-rpinitlogout-lt-alg-none',
    'rp-backchannel-rpinitlogout-lt-no-event',
    'rp-backchannel-rpinitlogout-lt-with-nonce',
    'rp-backchannel-rpinitlogout-lt-wrong-alg',
    'rp-backchannel-rpinitlogout-lt-wrong-aud',
    'rp-backchannel-rpinitlogout-lt-wrong-event',
    'rp-backchannel-rpinitlogout-lt-wrong-issuer',
  ].map((id) => ({
    id,
    plan: 'back-channel logout RP',
    reason: `${LOGOUT}: no back-channel logout (no backchannel_logout_uri, no logout token)`,
  })),
  ...[
    'oidcc-client-test-refresh-token-invalid-issuer',
    'oidcc-client-test-refresh-token-invalid-sub',
  ].map((id) => ({
    id,
    plan: 'refresh token RP',
    reason:
      'INTERFACE.md §2.2: the refresh_token grant returns no ID token, so there is none to carry another iss or sub',
  })),
  {
    id: 'oidcc-client-test-3rd-party-init-login',
    plan: '3rd-party initiated login RP',
    reason:
      'INTERFACE.md registers no initiate_login_uri (OIDC Core §4): the issuer never starts a login at the client',
  },
  {
    id: 'oidcc-client-test-session-management',
    plan: 'session management RP',
    reason: `${LOGOUT}: no OpenID Connect Session Management (no check_session_iframe)`,
  },
]

/**
 * Former IDs of tests renamed so that an ID means what the Foundation's test of that name means:
 * `--only` still takes them (the old ID runs the renamed test). A former ID that is now another
 * test's ID (`rp-key-rotation-op-sign-key`, once the rotation before the first JWKS fetch, now
 * the rotation between two sign-ins as the Foundation's) runs the test that has it now.
 */
export const RP_ALIASES: Readonly<Record<string, RpTestId>> = {
  'rp-id_token-sig-none': 'rp-id_token-alg-none-refused',
  'rp-id_token-bad-sig-rs256': 'rp-id_token-bad-sig-rs256-code-flow',
  'rp-id_token-bad-at_hash': 'rp-id_token-bad-at_hash-code-flow',
  'rp-key-rotation-between-sign-ins': 'rp-key-rotation-op-sign-key',
}

const BY_ID = new Map<string, RpTest>(RP_TESTS.map((t) => [t.id, t]))

export const rpTest = (id: string): RpTest | undefined => BY_ID.get(id)

/** The positive test whose failure makes every negative verdict inconclusive. */
export const RP_CONTROL: RpTestId = 'rp-id_token-sig-rs256'

type NegativeId = Extract<(typeof RP_TESTS)[number], { kind: 'negative' }>['id']

/**
 * The client-check findings `rp.<test-id>` (explain mode): raised when a client goes on to use
 * what a negative test's fault tainted, or a page of it is marked signed-in.
 */
export const RP_FINDING_KINDS = Object.fromEntries(
  RP_TESTS.filter((t) => t.kind === 'negative').map((t) => [
    `rp.${t.id}`,
    {
      severity: t.level === 'MUST' ? 'error' : 'warning',
      title: `your client accepted ${(t as RpTest).accepted ?? t.title}`,
      reference: t.reference,
      advice: t.fix,
    },
  ]),
) as Record<
  `rp.${NegativeId}`,
  { severity: 'error' | 'warning'; title: string; reference: string; advice: string }
>
