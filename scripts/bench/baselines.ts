import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'

/**
 * Raw RS256 signatures per second on every core, with jose (SignJWT, as the server mints) and
 * with node:crypto directly: the limit for token issuance, measured in the same run.
 */
export async function signingBaseline(
  seconds: number,
): Promise<{ jose: number; crypto: number; cores: number }> {
  const cores = availableParallelism()
  const run = async (kind: 'jose' | 'crypto') => {
    const counts = await Promise.all(
      Array.from({ length: cores }, () => {
        const worker = new Worker(WORKER, { eval: true, workerData: { kind, seconds } })
        return new Promise<number>((resolve, reject) => {
          worker.once('message', (n: number) => resolve(n))
          worker.once('error', reject)
        })
      }),
    )
    return counts.reduce((a, b) => a + b, 0) / seconds
  }
  return { jose: await run('jose'), crypto: await run('crypto'), cores }
}

const WORKER = `
const { workerData, parentPort } = require('node:worker_threads')
const crypto = require('node:crypto')
;(async () => {
  const { kind, seconds } = workerData
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
  const jose = await import('jose')
  const key = await jose.importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }), 'RS256')
  const payload = { iss: 'https://127.0.0.1:8443', sub: 'service-client', aud: 'service-client', scope: 'api:reports', roles: ['reporter'], permissions: ['api:reports'], client_id: 'service-client' }
  const end = Date.now() + seconds * 1000
  let n = 0
  while (Date.now() < end) {
    if (kind === 'jose') {
      await new jose.SignJWT({ ...payload, jti: String(n) }).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: 'k' }).setIssuedAt().setExpirationTime('1h').sign(key)
    } else {
      const data = Buffer.from('eyJhbGciOiJSUzI1NiJ9.' + Buffer.from(JSON.stringify({ ...payload, jti: String(n) })).toString('base64url'))
      crypto.sign('sha256', data, privateKey)
    }
    n++
  }
  parentPort.postMessage(n)
})()
`
