import { area } from './requirement.ts'

/**
 * SEC-* rows: the security profile's own checks, for the threats of RFC 9700 §4 and RFC 6819
 * §4 that no other area's check covers (conformance/threats.ts maps every threat to its
 * checks). Each level is the wording of the cited sentence: MUST where it says MUST or
 * REQUIRED, SHOULD where it says SHOULD or RECOMMENDED; OWASP ASVS words no level, and a
 * requirement it marks Level 1 (every application) is MUST. An informational source with no
 * requirement word (RFC 6819) stays SHOULD.
 */
export const security = area('Security', {
  'SEC-01': {
    level: 'SHOULD',
    // RFC 6819 is informational and §5.1.4.2.3 has no requirement word ("Online attacks on
    // passwords can be mitigated by locking the respective accounts after a certain number of
    // failed attempts. Note: This measure can be abused to lock down legitimate service users."):
    // nothing in it is stronger than SHOULD, so SHOULD stays
    source:
      'RFC 6819 §5.1.4.2.3 ("This measure can be abused to lock down legitimate service users"), §4.4.1.11; RFC 6749 §2.3.1',
    title:
      'failed client authentications are limited by their source, not charged to the client_id they name: wrong secrets from an attacker do not lock the real client out',
  },
  // raised from SHOULD (issue 30): RFC 9207's sentences are MUST for a server that supports it;
  // a provider that neither sends iss nor advertises it does not, and the check is skipped
  'SEC-03': {
    level: 'MUST',
    source:
      'RFC 9207 §2 ("an authorization server supporting this specification MUST indicate its identity by including the iss parameter in the response"), §2.3 ("The server MUST indicate its support for the iss parameter by setting the metadata parameter authorization_response_iss_parameter_supported … to true"); RFC 9700 §4.4.2.1',
    title:
      'a provider that supports RFC 9207 (it sends iss or advertises it) puts iss equal to the issuer in the authorization response, and discovery says authorization_response_iss_parameter_supported: true',
  },
  'SEC-04': {
    level: 'MUST',
    source:
      'RFC 6749 §2.3.1 (MUST NOT be included in the request URI), §3.2; RFC 7662 §2.1; RFC 7009 §2.1',
    title:
      'client credentials in the URL query of the token, introspection or revocation request, and GET to those endpoints, are refused without a token or token data',
  },
  'SEC-05': {
    level: 'MUST',
    source: 'RFC 9700 §2.4 (MUST NOT be used), §2.1.2; INTERFACE.md §1 (supported grants)',
    title:
      'the resource owner password credentials grant is refused with unsupported_grant_type or unauthorized_client, even with a real user’s password',
  },
  'SEC-06': {
    level: 'MUST',
    source: 'RFC 6749 §10.10 (probability MUST be ≤ 2^-128); RFC 6819 §5.1.4.2.2',
    title:
      'authorization codes, refresh tokens and session identifiers are distinct and carry at least 128 bits of entropy (sampled)',
  },
  // raised from SHOULD (issue 30): ASVS states no SHOULD; each of these is a Level 1
  // requirement, which every application must meet to be verified at any level
  'SEC-07': {
    level: 'MUST',
    source:
      'OWASP ASVS 4.0.3 V3.2.1 (L1: "Verify the application generates a new session token on user authentication"), V3.4.1 (L1: "Verify that cookie-based session tokens have the \'Secure\' attribute set"), V3.4.2 (L1: "… have the \'HttpOnly\' attribute set"); V3.4.3 (SameSite) is noted',
    title:
      'a session planted before sign-in does not ride the victim’s sign-in, and the cookies that carry the session (those it cannot do without) are Secure and HttpOnly (other cookies’ flags and SameSite are noted)',
  },
  'SEC-08': {
    level: 'SHOULD',
    source: 'RFC 9700 §4.2.4 (suppress the Referer header with a Referrer Policy)',
    title:
      'the login, error and logged-out pages send a Referrer-Policy that keeps the authorization request URL out of third-party requests, or reference no other origin',
  },
  'SEC-09': {
    level: 'SHOULD',
    source: 'OWASP ASVS 4.0 V7.4.1 (a generic message, no stack trace or internals); RFC 6749 §5.2',
    title:
      'error bodies and error pages never reveal internals (stack traces, SQL, file paths) for the suite’s malformed requests',
  },
  'SEC-10': {
    level: 'SHOULD',
    source:
      'RFC 9700 §4.15.1 (SHOULD NOT allow confusion between a client and a genuine resource owner)',
    title: 'the sub of a client_credentials access token never equals the sub of a user',
  },
  'SEC-11': {
    level: 'SHOULD',
    source:
      'OWASP ASVS 4.0 V3.3.1 (expiration invalidates the session token), V3.3.2 (periodic re-authentication); OIDC Core §3.1.2.6 (login_required); README (SESSION_TTL)',
    title:
      'a login session past its lifetime no longer signs the user in: an authorization request shows the login page again and prompt=none answers login_required',
  },
  // last in the run: against a deployment, a spraying probe that is throttled leaves the run's
  // own address throttled for the rest of the window, so no sign-in may come after it
  'SEC-02': {
    level: 'MUST',
    source: 'RFC 6749 §10.10 (MUST prevent guessing of resource owner passwords)',
    title:
      'password spraying (one password tried against many user names from one address) is throttled, not only repeated tries on one user name',
  },
})
