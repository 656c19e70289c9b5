import Hapi from '@hapi/hapi'
import { accessLog, createLogger } from '../../server/logging.ts'
import { createDevCertificate } from '../../server/tls.ts'

// The baseline for discovery and JWKS: a constant JSON response through Hapi over the same TLS,
// access-logged as the reference server logs its requests.
const tls = await createDevCertificate(['127.0.0.1'])
const body = {
  issuer: 'https://127.0.0.1',
  keys: [{ kty: 'RSA', n: 'x'.repeat(342), e: 'AQAB' }],
  padding: 'x'.repeat(900),
}
const server = Hapi.server({
  host: '127.0.0.1',
  port: Number(process.env.PORT),
  tls: { cert: tls.cert, key: tls.key },
})
// with the reference server's access log (same plugin, same logger, to stdout like it): the
// baseline pays for a log line per request as the measured routes do
await server.register(accessLog(createLogger(), { trustProxy: false }))
server.route({ method: 'GET', path: '/constant', handler: () => body })
await server.start()
console.log(`constant server listening on ${server.info.uri}`)
process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)))
