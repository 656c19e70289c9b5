import { spawn } from 'node:child_process'
import { availableParallelism } from 'node:os'

/** One way of making RS256 signatures, measured in a process of its own. */
export interface SigningRate {
  /** Signatures per second over the whole machine. */
  readonly perSecond: number
  /** CPU time (user + system, every thread of the process) per signature, ms. */
  readonly cpuMs: number
}

export interface SigningBaseline {
  /** jose SignJWT as the server mints: one process, many signatures in flight (WebCrypto runs them on libuv's pool). */
  readonly jose: SigningRate
  /** node:crypto's synchronous sign on one worker thread per core: the machine's raw limit. */
  readonly crypto: SigningRate
  readonly cores: number
}

/**
 * Raw RS256 signing, measured in the same run as the scenarios: the limit for token issuance.
 * Each kind runs in a child process so its CPU time is its own (read from process.cpuUsage,
 * which counts every thread), not the bench's or the load generator's.
 */
export async function signingBaseline(seconds: number): Promise<SigningBaseline> {
  const cores = availableParallelism()
  return {
    jose: await measure('jose', seconds, cores),
    crypto: await measure('crypto', seconds, cores),
    cores,
  }
}

function measure(kind: 'jose' | 'crypto', seconds: number, cores: number): Promise<SigningRate> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', CHILD, kind, String(seconds), String(cores)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`signing baseline (${kind}) exited with ${code}`))
      const { count, cpuMicros, wallMs } = JSON.parse(out) as {
        count: number
        cpuMicros: number
        wallMs: number
      }
      resolve({ perSecond: count / (wallMs / 1000), cpuMs: cpuMicros / 1000 / count })
    })
  })
}

// The same claims and header the server's access tokens carry.
const CHILD = `
import crypto from 'node:crypto'
import { Worker } from 'node:worker_threads'
import * as jose from 'jose'
const [kind, seconds, cores] = process.argv.slice(-3)
const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
const payload = { iss: 'https://127.0.0.1:8443', sub: 'service-client', aud: 'service-client', scope: 'api:reports', roles: ['reporter'], permissions: ['api:reports'], client_id: 'service-client' }
const warmMs = 500
let count = 0
const run = async (ms, body) => { const end = Date.now() + ms; while (Date.now() < end) await body() }
if (kind === 'jose') {
  const key = await jose.importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }), 'RS256')
  const sign = () => new jose.SignJWT({ ...payload, jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: 'k' }).setIssuedAt().setExpirationTime('1h').sign(key)
  const lanes = (ms, counted) => Promise.all(Array.from({ length: 16 }, () => run(ms, async () => { await sign(); if (counted) count++ })))
  await lanes(warmMs, false)
  const cpu0 = process.cpuUsage(); const t0 = performance.now()
  await lanes(seconds * 1000, true)
  const cpu = process.cpuUsage(cpu0)
  console.log(JSON.stringify({ count, cpuMicros: cpu.user + cpu.system, wallMs: performance.now() - t0 }))
} else {
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' })
  const worker = (ms) => new Worker(\`
    const { workerData, parentPort } = require('node:worker_threads')
    const crypto = require('node:crypto')
    const key = crypto.createPrivateKey(workerData.pem)
    const payload = \${JSON.stringify(JSON.stringify(payload))}
    const end = Date.now() + workerData.ms
    let n = 0
    while (Date.now() < end) {
      crypto.sign('sha256', Buffer.from('eyJhbGciOiJSUzI1NiJ9.' + Buffer.from(payload + n).toString('base64url')), key)
      n++
    }
    parentPort.postMessage(n)\`, { eval: true, execArgv: [], workerData: { pem, ms } })
  const all = (ms) => Promise.all(Array.from({ length: Number(cores) }, () => new Promise((res, rej) => { const w = worker(ms); w.once('message', res); w.once('error', rej) })))
  await all(warmMs)
  const cpu0 = process.cpuUsage(); const t0 = performance.now()
  count = (await all(seconds * 1000)).reduce((a, b) => a + b, 0)
  const cpu = process.cpuUsage(cpu0)
  console.log(JSON.stringify({ count, cpuMicros: cpu.user + cpu.system, wallMs: performance.now() - t0 }))
}
`
