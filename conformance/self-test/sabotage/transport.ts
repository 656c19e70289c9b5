import type { transport } from '../../catalogue/transport.ts'
import { corruptHeaders, DISCOVERY, type Sabotage } from './kit.ts'

/** How to break the target for each TLS-* check. */
export const transportSabotage: Record<keyof typeof transport, Sabotage> = {
  'TLS-01': { how: 'the plain listener serves documents', faults: ['plain-http-serves-documents'] },
  'TLS-02': { how: 'the listener accepts TLS 1.0 and 1.1', faults: ['weak-tls'] },
  'TLS-03': {
    how: 'no Strict-Transport-Security header',
    handlers: corruptHeaders(DISCOVERY, (h) => h.delete('strict-transport-security')),
  },
}
