import type { Server, Socket } from 'node:net'
import type { Config } from '../config.ts'
import type { Deps } from '../deps.ts'

/**
 * Bounds the sockets the HTTPS listener holds: `MAX_CONNECTIONS` in all (Node drops the ones
 * beyond `server.maxConnections` as they arrive) and `MAX_CONNECTIONS_PER_ADDRESS` per peer
 * address, so one address that opens connections and sends nothing (each waits out
 * `TLS_HANDSHAKE_TIMEOUT` at most) cannot take every file descriptor and stop service for
 * everyone else. A dropped connection is closed before TLS starts: the peer sees a reset, which
 * is all a client that opened that many sockets can expect.
 */
export function limitConnections(
  listener: Server,
  config: Pick<Config, 'maxConnections' | 'maxConnectionsPerAddress'>,
  log: Deps['log'],
): void {
  listener.maxConnections = config.maxConnections
  const perAddress = config.maxConnectionsPerAddress
  if (perAddress === 0) return
  const open = new Map<string, number>()
  // logged once per address while it stays over its cap, not once per dropped socket
  const reported = new Set<string>()
  // 'connection' is the TCP socket, before the TLS handshake (Node's tls.Server listens to it)
  listener.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    const count = open.get(address) ?? 0
    if (count >= perAddress) {
      if (!reported.has(address)) {
        reported.add(address)
        log('connection-limit', { address, limit: perAddress })
      }
      socket.destroy()
      return
    }
    open.set(address, count + 1)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left > 0) open.set(address, left)
      else {
        open.delete(address)
        reported.delete(address)
      }
    })
  })
}
