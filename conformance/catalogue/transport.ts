import { area } from './requirement.ts'

/** TLS-* rows of shared/REQUIREMENTS.md. */
export const transport = area('HTTPS', {
  'TLS-01': {
    level: 'MUST',
    source: 'INTERFACE.md §1, §7; RFC 6749 §3.1, §3.2, §10.9',
    title:
      'plain HTTP never serves a document or accepts a credential, and every URL the server emits is https',
  },
  'TLS-02': {
    level: 'MUST',
    source: 'RFC 9325 §3.1.1',
    title:
      'TLS 1.0 and 1.1 handshakes fail; TLS 1.2+ succeeds with a certificate valid for the host',
  },
  // raised from SHOULD (issue 30): RFC 9325 §3.2 says SHOULD, but OWASP ASVS makes HSTS a
  // Level 1 requirement, which every application must meet (the rule of catalogue/security.ts,
  // as for SEC-07), in 4.0.3 (V14.4.5, with includeSubDomains, which is not checked) and in 5.0.0
  // (V3.4.1, subdomains from Level 2 only): the check asks exactly 5.0.0's Level 1
  'TLS-03': {
    level: 'MUST',
    source:
      'OWASP ASVS 5.0.0 V3.4.1 (Level 1: "Verify that a Strict-Transport-Security header field is included on all responses to enforce an HTTP Strict Transport Security (HSTS) policy. A maximum age of at least 1 year must be defined"), 4.0.3 V14.4.5 (Level 1); RFC 9325 §3.2 ("Web servers SHOULD use HSTS to indicate that they are willing to accept TLS-only clients"); RFC 6797 §6.1',
    title: 'Strict-Transport-Security with max-age of at least one year on HTTPS responses',
  },
})
