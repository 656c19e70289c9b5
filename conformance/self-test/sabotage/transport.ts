import type { transport } from '../../catalogue/transport.ts'
import { corruptHeaders, DISCOVERY, type Sabotages } from './kit.ts'

/** How to break the target for each TLS-* check. */
export const transportSabotage: Record<keyof typeof transport, Sabotages> = {
  'TLS-01': {
    how: 'the plain listener serves documents',
    expect: /^plain HTTP \S+ answered 200; expected a 4xx error or no answer/,
    faults: ['plain-http-serves-documents'],
  },
  'TLS-02': {
    how: 'the listener accepts TLS 1.0 and 1.1',
    expect: /a TLSv1(\.1)? handshake succeeded/,
    faults: ['weak-tls'],
  },
  'TLS-03': {
    how: 'no Strict-Transport-Security header',
    expect: /no Strict-Transport-Security header/,
    handlers: corruptHeaders(DISCOVERY, (h) => h.delete('strict-transport-security')),
  },
}
