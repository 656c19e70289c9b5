import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { createDevCertificate, loadTls } from './tls.ts'

describe('dev TLS certificate', () => {
  test('the server certificate is signed by the dev CA and valid for the hosts', async () => {
    const m = await createDevCertificate(['localhost', '127.0.0.1', 'idp.test'])
    const ca = new X509Certificate(m.ca ?? '')
    const cert = new X509Certificate(m.cert)
    expect(ca.ca).toBe(true)
    expect(cert.ca).toBe(false)
    expect(cert.verify(ca.publicKey)).toBe(true)
    expect(cert.checkIssued(ca)).toBe(true)
    expect(cert.checkHost('idp.test')).toBe('idp.test')
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1')
    expect(cert.checkHost('evil.example')).toBeUndefined()
  })

  test('is generated once under DATA_DIR/tls and reused', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tls-'))
    const first = await loadTls({
      tlsCert: undefined,
      tlsKey: undefined,
      dataDir,
      hosts: ['127.0.0.1'],
    })
    expect(first.caPath).toBe(join(dataDir, 'tls', 'ca.pem'))
    expect(readFileSync(join(dataDir, 'tls', 'ca.pem'), 'utf8')).toBe(first.ca)
    const second = await loadTls({
      tlsCert: undefined,
      tlsKey: undefined,
      dataDir,
      hosts: ['127.0.0.1'],
    })
    expect(second.cert).toBe(first.cert)
    const widened = await loadTls({
      tlsCert: undefined,
      tlsKey: undefined,
      dataDir,
      hosts: ['127.0.0.1', 'idp.test'],
    })
    expect(widened.cert).not.toBe(first.cert)
  })
})
