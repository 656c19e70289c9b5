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
  return proxyAddr(req, trustOf(trust))
}

function trustOf(trust: Exclude<TrustProxy, false>): (addr: string, hop: number) => boolean {
  if (typeof trust !== 'object') return compileTrust(trust)
  let fn = compiled.get(trust)
  if (!fn) compiled.set(trust, (fn = compileTrust(trust)))
  return fn
}

/**
 * The scheme the client used, as the outermost trusted proxy wrote it in `X-Forwarded-Proto`:
 * each proxy appends the scheme it was reached by, so the entries on the left were written by
 * the client (or by hops nobody trusts) and are never believed, as for the address. With one
 * trusted hop that is the rightmost entry: `https, http` came over plain HTTP. Lower case; ''
 * when there is no entry.
 */
export function forwardedProto(request: Request, trust: Exclude<TrustProxy, false>): string {
  const header = (request.headers as Record<string, string | undefined>)['x-forwarded-proto']
  const entries = (header ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean)
  if (entries.length === 0) return ''
  // the socket's peer and the trusted hops of X-Forwarded-For: one proxy per entry after the first
  const trusted = Math.max(1, proxyAddr.all(request.raw.req, trustOf(trust)).length - 1)
  return entries[Math.max(0, entries.length - trusted)] ?? ''
}
