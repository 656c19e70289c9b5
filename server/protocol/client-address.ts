import type { Request } from '@hapi/hapi'
import proxyAddr from 'proxy-addr'
import type { Config } from '../config.ts'

/**
 * Which proxies in front of the server are believed (`TRUST_PROXY`): false for none, a number
 * of hops counted from the server, or a list of addresses/CIDR ranges (proxy-addr's names
 * `loopback`, `linklocal` and `uniquelocal` included).
 */
export type TrustProxy = Config['trustProxy']

/** proxy-addr's trust function for the configuration; throws on an invalid address or range. */
export function compileTrust(trust: TrustProxy): (addr: string, hop: number) => boolean {
  if (trust === false) return () => false
  if (typeof trust === 'number') return (_addr, hop) => hop < trust
  return proxyAddr.compile([...trust])
}

const compiled = new WeakMap<object, (addr: string, hop: number) => boolean>()

/**
 * The caller's address: the socket's peer, or, when that peer is a trusted proxy, the first
 * untrusted hop of `X-Forwarded-For` read from the right (proxy-addr). The left of the header
 * is written by the client and never believed on its own, so a spoofed entry cannot reset a
 * rate limit or the login throttle. Both the API limits and the sign-in throttle key on this.
 */
export function clientAddress(request: Request, trust: TrustProxy): string {
  const req = request.raw.req
  if (trust === false || req.socket.remoteAddress === undefined) return request.info.remoteAddress
  let fn: ((addr: string, hop: number) => boolean) | undefined
  if (typeof trust === 'object') {
    fn = compiled.get(trust)
    if (!fn) compiled.set(trust, (fn = compileTrust(trust)))
  } else fn = compileTrust(trust)
  return proxyAddr(req, fn)
}
