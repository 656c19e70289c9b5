import type { X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import { connect, rootCertificates, type SecureVersion } from 'node:tls'
import { type AreaChecks, check } from '../harness/check.ts'
import type { transport as catalogue } from '../catalogue/transport.ts'
import { plainHttpUrl } from '../harness/target.ts'
import { expectStatus, expectThat } from '../harness/expect.ts'

const PROBED_PATHS = [
  '/.well-known/openid-configuration',
  '/.well-known/jwks.json',
  '/auth/token',
  '/auth/user-info',
]

const TLS_01 = check(async (ctx) => {
  const { http, target } = ctx
  const plain = plainHttpUrl(target)
  let reached = 0
  for (const path of PROBED_PATHS) {
    const isToken = path === '/auth/token'
    let res
    try {
      res = isToken
        ? await http.postForm(plain + path, {
            grant_type: 'client_credentials',
            client_id: target.clients.main.id,
            client_secret: target.clients.main.secret,
          })
        : await http.get(plain + path)
    } catch {
      continue // connection refused or reset: plain HTTP is not served, which passes
    }
    reached++
    const location = res.headers.get('location')
    if (location !== null) {
      // only GET browser pages may be upgraded; an API call must never be redirected
      expectThat(
        !isToken && [301, 308].includes(res.status),
        `plain HTTP ${path} redirected with ${res.status}`,
      )
      expectThat(
        location.startsWith('https://'),
        `plain HTTP ${path} redirected to a non-https URL ${location}`,
      )
      continue
    }
    expectThat(
      res.status >= 400 && res.status < 500,
      `plain HTTP ${path} answered ${res.status}; expected a 4xx error or no answer`,
    )
    expectThat(
      !/access_token|"issuer"|"keys"/.test(res.text),
      `plain HTTP ${path} served a document or a token`,
    )
  }
  if (reached === 0) ctx.note(`nothing answers plain HTTP at ${plain}`)
  // every URL the server emits is https: a sub-case, as the plain listener was judged apart
  await ctx.subcase('https URLs', async () => {
    const doc = await http.get('/.well-known/openid-configuration')
    expectStatus(doc, 200, 'discovery')
    for (const [member, value] of Object.entries(doc.json as Record<string, unknown>)) {
      if (typeof value === 'string' && /^[a-z]+:\/\//i.test(value)) {
        expectThat(value.startsWith('https://'), `discovery ${member} is not https: ${value}`)
      }
    }
  })
})

function handshake(
  host: string,
  port: number,
  version: { min: SecureVersion; max: SecureVersion },
  ca: string | undefined,
) {
  return new Promise<
    | { ok: true; protocol: string | null; cert: X509Certificate | undefined }
    | { ok: false; error: string }
  >((resolve) => {
    const socket = connect({
      host,
      port,
      ...(isIP(host) ? {} : { servername: host }),
      minVersion: version.min,
      maxVersion: version.max,
      // allow the client to offer the old versions at all, so that only the server can refuse
      ciphers:
        version.max === 'TLSv1.2' || version.max === 'TLSv1.3' ? undefined : 'DEFAULT:@SECLEVEL=0',
      ca: ca ? [...rootCertificates, ca] : undefined,
      rejectUnauthorized: true,
      timeout: 10_000,
    })
    socket.once('secureConnect', () => {
      const peer = socket.getPeerX509Certificate()
      resolve({ ok: true, protocol: socket.getProtocol(), cert: peer })
      socket.end()
    })
    socket.once('error', (err: Error) => {
      resolve({ ok: false, error: err.message })
    })
    socket.once('timeout', () => {
      resolve({ ok: false, error: 'timeout' })
      socket.destroy()
    })
  })
}

const TLS_02 = check(async (ctx) => {
  const url = new URL(ctx.target.baseUrl)
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const port = Number(url.port || 443)
  const modern = await handshake(host, port, { min: 'TLSv1.2', max: 'TLSv1.3' }, ctx.target.ca)
  expectThat(
    modern.ok,
    `TLS 1.2+ handshake with certificate verification failed: ${modern.ok ? '' : modern.error}`,
  )
  ctx.note(`negotiated ${modern.protocol ?? 'unknown'}`)
  const cert = modern.cert
  expectThat(cert, 'no peer certificate')
  const valid = isIP(host) ? cert.checkIP(host) : cert.checkHost(host)
  expectThat(valid !== undefined, `the certificate is not valid for ${host}`)
  for (const old of ['TLSv1', 'TLSv1.1'] as const) {
    const res = await handshake(host, port, { min: old, max: old }, ctx.target.ca)
    expectThat(!res.ok, `a ${old} handshake succeeded (RFC 9325 §3.1.1 forbids TLS 1.0 and 1.1)`)
  }
})

const TLS_03 = check(async (ctx) => {
  // each document is its own sub-case (named as its messages begin)
  for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json'])
    await ctx.subcase(path, async () => {
      const res = await ctx.http.get(path)
      const hsts = res.headers.get('strict-transport-security')
      expectThat(hsts !== null, `${path}: no Strict-Transport-Security header`)
      const maxAge = /max-age\s*=\s*"?(\d+)"?/i.exec(hsts)?.[1]
      expectThat(
        maxAge !== undefined && Number(maxAge) >= 31536000,
        `${path}: HSTS max-age must be at least 31536000, got ${JSON.stringify(hsts)}`,
      )
    })
})

/** The transport checks, one per row of catalogue/transport.ts. */
export const transportChecks: AreaChecks<typeof catalogue> = {
  'TLS-01': TLS_01,
  'TLS-02': TLS_02,
  'TLS-03': TLS_03,
}
