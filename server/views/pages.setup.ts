import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// One of the two files under server/ allowed to import conformance/ (eslint.config.js): this
// global setup also serves conformance/report/report.spec.ts, which runs the suite's CLI against
// the server it starts, so it starts it the way the suite does and pins its certificate alike.
import { spkiPin } from '../../conformance/harness/browser.ts'
import { startEmbedded } from '../../conformance/harness/embedded.ts'
import { loadConfig } from '../config.ts'

/**
 * Playwright's global setup for the hosted-page specs: starts the embedded reference server
 * (fresh dev CA, in-memory SQLite, fixtures) once for the run, verifies its certificate against
 * that CA and hands the URL and the leaf's SPKI pin to the workers through the environment.
 * The returned function is the global teardown.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  // the screenshots of this run only (the specs write them there)
  await rm('reports/pages', { recursive: true, force: true })
  const defaults = loadConfig({}, {})
  const idp = await startEmbedded({
    // both projects sign in several times as alice: keep the login limit out of the way
    config: { rateLimits: { ...defaults.rateLimits, login: { limit: 1000, window: 300 } } },
  })
  try {
    const pin = await spkiPin(idp.target)
    if (!pin) throw new Error('the embedded server has no private CA to pin')
    process.env.PAGES_BASE_URL = idp.target.baseUrl
    process.env.PAGES_SPKI_PIN = pin
    // the report spec runs the CLI against this server and needs its CA as a file
    const caFile = join(await mkdtemp(join(tmpdir(), 'pages-ca-')), 'ca.pem')
    await writeFile(caFile, idp.target.ca ?? '')
    process.env.PAGES_CA_FILE = caFile
  } catch (error) {
    await idp.stop()
    throw error
  }
  return () => idp.stop()
}
