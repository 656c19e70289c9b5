import { createServer } from 'node:https'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'
import { createDevCertificate } from '../../server/tls.ts'

// The peer a user would pick instead (issue 9): node-oidc-provider 8.x, set up for the bench's
// client_credentials scenario the way the reference server does it: client_secret_post, RS256
// JWT access tokens, over TLS on loopback. Its default in-memory adapter stores the grants.
const port = Number(process.env.PORT)
const issuer = `https://127.0.0.1:${port}`
const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true })
const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'peer-1' }
const RESOURCE = 'https://api.example'

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'service-client',
      client_secret: 'service-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'api:reports',
    },
  ],
  jwks: { keys: [jwk] },
  scopes: ['api:reports'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'api:reports',
        audience: RESOURCE,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
})
const tls = await createDevCertificate(['127.0.0.1'])
const handle = provider.callback()
const server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
  void handle(req, res)
})
server.listen(port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`)
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))
