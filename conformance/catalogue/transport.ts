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
  'TLS-03': {
    level: 'SHOULD',
    source:
      'RFC 9325 §3.2 ("Web servers SHOULD use HSTS to indicate that they are willing to accept TLS-only clients"); RFC 6797 §6.1',
    title: 'Strict-Transport-Security with max-age of at least one year on HTTPS responses',
  },
})
