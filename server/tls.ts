import 'reflect-metadata'
import { webcrypto, X509Certificate } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { join } from 'node:path'
import * as x509 from '@peculiar/x509'

x509.cryptoProvider.set(webcrypto as Crypto)

/** PEM material for the HTTPS listener. `ca` is the dev CA that clients must trust, if any. */
export interface TlsMaterial {
  readonly cert: string
  readonly key: string
  readonly ca: string | undefined
  /** Where the CA certificate was written, when it was. */
  readonly caPath: string | undefined
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const
const DAY = 24 * 3600 * 1000

const serial = (): string => {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16))
  bytes[0] = (bytes[0] ?? 0) & 0x7f // positive
  return Buffer.from(bytes).toString('hex')
}

/**
 * Creates a dev certificate authority and a server certificate signed by it, valid for the
 * given host names and IP addresses. Certificates come from @peculiar/x509 (no hand-written
 * ASN.1); keys are ECDSA P-256.
 */
export async function createDevCertificate(
  hosts: readonly string[],
  now = new Date(),
): Promise<TlsMaterial> {
  const caKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])
  const notBefore = new Date(now.getTime() - DAY)
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=idp-conformance development CA, O=idp-conformance',
    notBefore,
    notAfter: new Date(now.getTime() + 3650 * DAY),
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  })
  const leafKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])
  const unique = [...new Set(hosts)]
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${unique[0] ?? 'localhost'}`,
    issuer: ca.subject,
    notBefore,
    notAfter: new Date(now.getTime() + 397 * DAY),
    signingKey: caKeys.privateKey,
    publicKey: leafKeys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        unique.map((h) =>
          isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h },
        ),
      ),
      await x509.AuthorityKeyIdentifierExtension.create(ca),
    ],
  })
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey)
  return {
    cert: leaf.toString('pem'),
    key: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'),
    ca: ca.toString('pem'),
    caPath: undefined,
  }
}

/** Host names and addresses a dev certificate must cover for this listener. */
export function devCertificateHosts(host: string, baseUrl: string): string[] {
  const fromBase = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '')
  return ['localhost', '127.0.0.1', '::1', host, fromBase].filter(
    (h) => h !== '0.0.0.0' && h !== '::',
  )
}

function coversAll(certPem: string, hosts: readonly string[], now: Date): boolean {
  const cert = new X509Certificate(certPem)
  if (new Date(cert.validTo).getTime() < now.getTime() + 7 * DAY) return false
  return hosts.every((h) =>
    isIP(h) ? cert.checkIP(h) !== undefined : cert.checkHost(h) !== undefined,
  )
}

/**
 * The TLS material of `npm run serve`: the given files, or a dev CA and certificate kept under
 * `DATA_DIR/tls` (generated on first start, regenerated when it no longer covers the hosts or
 * is about to expire).
 */
export async function loadTls(options: {
  tlsCert: string | undefined
  tlsKey: string | undefined
  dataDir: string
  hosts: readonly string[]
}): Promise<TlsMaterial> {
  if (options.tlsCert && options.tlsKey) {
    return {
      cert: readFileSync(options.tlsCert, 'utf8'),
      key: readFileSync(options.tlsKey, 'utf8'),
      ca: undefined,
      caPath: undefined,
    }
  }
  const dir = join(options.dataDir, 'tls')
  const paths = {
    ca: join(dir, 'ca.pem'),
    cert: join(dir, 'server.pem'),
    key: join(dir, 'server-key.pem'),
  }
  const now = new Date()
  if (existsSync(paths.ca) && existsSync(paths.cert) && existsSync(paths.key)) {
    const cert = readFileSync(paths.cert, 'utf8')
    if (coversAll(cert, options.hosts, now)) {
      return {
        cert,
        key: readFileSync(paths.key, 'utf8'),
        ca: readFileSync(paths.ca, 'utf8'),
        caPath: paths.ca,
      }
    }
  }
  const material = await createDevCertificate(options.hosts, now)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  writeFileSync(paths.key, material.key, { mode: 0o600 })
  // the mode above applies only to a new file: a key replaced in place is tightened too
  chmodSync(paths.key, 0o600)
  writeFileSync(paths.cert, material.cert)
  writeFileSync(paths.ca, material.ca ?? '')
  return { ...material, caPath: paths.ca }
}
