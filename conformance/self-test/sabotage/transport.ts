import type { IncomingMessage, ServerResponse } from 'node:http'
import { Server as TlsServer } from 'node:tls'
import type { transport } from '../../catalogue/transport.ts'
import { corruptHeaders, corruptJson, DISCOVERY, JWKS, type Sabotages } from './kit.ts'

/** How to break the target for each TLS-* check. */
export const transportSabotage: Record<keyof typeof transport, Sabotages> = {
  // one sabotage for the plain listener, one for an http URL in discovery (a sub-case)
  'TLS-01': [
    {
      how: 'the plain listener serves documents',
      expect: /^plain HTTP \S+ answered 200; expected a 4xx error or no answer/,
      // the plain listener's answer replaced from outside: a document, 200
      extend: (app) => {
        const plain = app.plain
        if (!plain) throw new Error('the target has no plain-HTTP listener to break')
        plain.removeAllListeners('request')
        plain.on('request', (_req: IncomingMessage, res: ServerResponse) => {
          res.writeHead(200, {
            'content-type': 'application/json',
            'x-content-type-options': 'nosniff',
          })
          res.end(JSON.stringify({ issuer: 'served over plain http' }))
        })
      },
    },
    {
      how: 'discovery names an http jwks_uri',
      expect: /^https URLs: discovery jwks_uri is not https: http:\/\//,
      handlers: corruptJson(DISCOVERY, (b) => {
        b.jwks_uri = String(b.jwks_uri).replace(/^https:/, 'http:')
      }),
    },
  ],
  // the handshake verifies the chain and the host name (the explicit host check after it is
  // the same property, reached only by a client that verified less), and refuses old versions
  'TLS-02': [
    {
      how: 'the listener accepts TLS 1.0 and 1.1',
      expect: /a TLSv1(\.1)? handshake succeeded/,
      // the listener's TLS context replaced from outside: TLS 1.0 up, any cipher
      extend: (app) => {
        const { listener } = app.server
        if (!(listener instanceof TlsServer)) throw new Error('the target does not listen on TLS')
        const tls = app.server.settings.tls
        listener.setSecureContext({
          ...(typeof tls === 'object' ? tls : {}),
          minVersion: 'TLSv1',
          ciphers: 'DEFAULT:@SECLEVEL=0',
        })
      },
    },
    {
      how: 'the listener presents a certificate the target CA did not sign',
      expect:
        /^TLS 1\.2\+ handshake with certificate verification failed: (unable to (verify|get local issuer)|self[- ]signed)/,
      certificate: 'foreign',
    },
  ],
  // one sabotage per document (each a sub-case), and for a short max-age
  'TLS-03': [
    {
      how: 'no Strict-Transport-Security header',
      expect: /^\/\.well-known\/openid-configuration: no Strict-Transport-Security header/,
      handlers: corruptHeaders(DISCOVERY, (h) => h.delete('strict-transport-security')),
    },
    {
      how: 'the JWKS has no Strict-Transport-Security header',
      expect: /^\/\.well-known\/jwks\.json: no Strict-Transport-Security header/,
      handlers: corruptHeaders(JWKS, (h) => h.delete('strict-transport-security')),
    },
    {
      how: 'Strict-Transport-Security with a one-day max-age',
      expect:
        /^\/\.well-known\/openid-configuration: HSTS max-age must be at least 31536000, got "max-age=86400"/,
      handlers: corruptHeaders(DISCOVERY, (h) =>
        h.set('strict-transport-security', 'max-age=86400'),
      ),
    },
  ],
}
