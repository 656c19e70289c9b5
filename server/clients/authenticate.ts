import type { Request } from '@hapi/hapi'
import type { Deps } from '../deps.ts'
import { invalidClient, invalidRequest } from '../errors.ts'
import { endpointOf, type FindingCode } from '../explain/findings.ts'
import { countClientAuthentication } from '../plugins/rate-limit.ts'
import { digestsEqual, sha256Hex } from '../protocol/digest.ts'
import type { Client } from '../store/store.ts'

/** The client_id of a Basic header (RFC 6749 §2.3.1: form-urlencoded, then base64), if any. */
function basicUser(authorization: string): string | undefined {
  const m = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(authorization)
  if (!m?.[1]) return undefined
  const user = Buffer.from(m[1], 'base64').toString('utf8').split(':')[0] ?? ''
  try {
    return decodeURIComponent(user.replace(/\+/g, ' ')) || undefined
  } catch {
    return undefined
  }
}

/** Compared against when the client is unknown, so timing does not reveal which ids exist. */
const NO_CLIENT_DIGEST = sha256Hex('no such client')

type AuthDeps = Pick<Deps, 'store' | 'explain' | 'clock' | 'config' | 'log' | 'rateLimits'>

/**
 * Authenticates the client and counts the request against the rate limit: an authenticated
 * request against its client, a failed one against its source address and the client_id it
 * named, so wrong secrets sent in a client's name never lock that client out (RFC 6819
 * §5.1.4.2.3). Past the limit the answer is 429 instead.
 */
export async function authenticateClient(
  request: Request,
  params: Readonly<Record<string, string>>,
  deps: AuthDeps,
): Promise<Client> {
  let client: Client
  try {
    client = await checkCredentials(request, params, deps)
  } catch (err) {
    const query = request.query as Record<string, unknown>
    const named =
      params.client_id ?? (typeof query.client_id === 'string' ? query.client_id : undefined)
    await countClientAuthentication(request, named, false, deps)
    throw err
  }
  await countClientAuthentication(request, client.id, true, deps)
  return client
}

/**
 * client_secret_post, the only method INTERFACE.md allows (ARCHITECTURE.md, C1). A request
 * that authenticates with an Authorization header gets 401 invalid_client with a matching
 * WWW-Authenticate (RFC 6749 §5.2); one that uses two methods at once is invalid_request
 * (§2.3); credentials in the URL are refused (§2.3.1). Unknown client and wrong secret are
 * indistinguishable.
 */
async function checkCredentials(
  request: Request,
  params: Readonly<Record<string, string>>,
  deps: AuthDeps,
): Promise<Client> {
  const query = request.query as Record<string, unknown>
  if ('client_secret' in query)
    throw invalidRequest('client credentials must not be sent in the URL')
  const authorization = (request.headers as Record<string, string | undefined>).authorization
  const inBody = params.client_id !== undefined || params.client_secret !== undefined
  if (authorization !== undefined) {
    deps.explain?.record('client-auth.basic', {
      clientId: params.client_id ?? basicUser(authorization),
      endpoint: endpointOf(request),
      detail: `Authorization: ${/^\S*/.exec(authorization)?.[0] ?? ''} ...`,
    })
    if (inBody && params.client_secret !== undefined)
      throw invalidRequest('use exactly one client authentication method')
    const scheme = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)/.exec(authorization)?.[1] ?? 'Basic'
    throw invalidClient(
      'client authentication must use client_secret_post: send client_id and client_secret as form fields of the body, not in an Authorization header (INTERFACE.md section 5.3)',
      {
        headers: { 'www-authenticate': `${scheme} realm="idp", error="invalid_client"` },
      },
    )
  }
  const id = params.client_id
  const secret = params.client_secret
  const record = (code: FindingCode, detail: string) =>
    deps.explain?.record(code, { clientId: id, endpoint: endpointOf(request), detail })
  if (!id || !secret) {
    record(
      'client-auth.missing-secret',
      `${id ? 'client_id' : 'no client_id'}, ${secret ? 'client_secret' : 'no client_secret'} in the body`,
    )
    throw invalidClient(
      'client authentication failed: send both client_id and client_secret as form fields of the body (client_secret_post)',
    )
  }
  const client = id.length <= 255 ? await deps.store.clients.get(id) : undefined
  const matches = digestsEqual(sha256Hex(secret), client?.secretDigest ?? NO_CLIENT_DIGEST)
  // one text for both, so that client ids cannot be enumerated (explain mode, a development
  // aid refused in production, tells the integrator which it was)
  if (!client) record('client-auth.unknown-client', `client_id ${JSON.stringify(id.slice(0, 80))}`)
  else if (!matches) record('client-auth.wrong-secret', `client ${JSON.stringify(id)}`)
  if (!client || !matches)
    throw invalidClient(
      'client authentication failed: the client_id is not registered or the client_secret is not its secret',
    )
  return client
}
