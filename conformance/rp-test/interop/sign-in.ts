/**
 * A sign-in command for `idp-conformance rp-test --run`: serves one relying-party library as a
 * web app on 127.0.0.1, signs in through Chromium at RP_TEST_ISSUER, and follows the contract:
 * exit 0 when the app shows a signed-in page; `RP_TEST_RESULT=refused` on stdout (and exit 2)
 * when it refused; exit 1 when the sign-in could not be driven (an inconclusive run, never a
 * refusal). Usage (the embedded server's fixture client):
 *
 *   idp-conformance rp-test --run "node --import tsx conformance/rp-test/interop/sign-in.ts openid-client"
 *
 * with `openid-client` (v6), `openid-client-v5`, `jose` (the hand-written RP on jose) or
 * `careless` (the control that must fail).
 */
import { readFileSync } from 'node:fs'
import { launchBrowser } from '../../harness/browser.ts'
import { REFUSED_LINE, type SignInEnv } from '../runner.ts'
import { browserSignIn } from './browser-sign-in.ts'
import {
  carelessClient,
  openidClientV5,
  openidClientV6,
  startRpApp,
  type RpClientSettings,
  type RpLibrary,
} from './apps.ts'
import { joseRp } from './jose-rp.ts'

const LIBRARIES: Record<string, (s: RpClientSettings) => RpLibrary> = {
  'openid-client': openidClientV6,
  'openid-client-v5': openidClientV5,
  jose: joseRp,
  careless: carelessClient,
}

const env = process.env
const make = LIBRARIES[process.argv[2] ?? 'openid-client']
const issuer = env.RP_TEST_ISSUER
if (!make || !issuer) {
  console.error(
    `usage: RP_TEST_ISSUER=… sign-in.ts [${Object.keys(LIBRARIES).join('|')}] (run it through idp-conformance rp-test --run)`,
  )
  process.exit(1)
}
const caPem = env.RP_TEST_CA ? readFileSync(env.RP_TEST_CA, 'utf8') : undefined
const app = await startRpApp(
  make({
    clientId: env.RP_TEST_CLIENT_ID ?? 'rp-test-client',
    clientSecret: env.RP_TEST_CLIENT_SECRET ?? 'rp-test-secret',
    caPem,
  }),
)
const browser = await launchBrowser({ baseUrl: new URL(issuer).origin, ca: caPem })
try {
  const result = await browserSignIn(browser, app.url, {
    username: env.RP_TEST_USERNAME ?? 'alice',
    password: env.RP_TEST_PASSWORD ?? 'wonderland',
  })(env as SignInEnv)
  console.log(result.output)
  if (result.outcome === 'refused') console.log(REFUSED_LINE)
  else if (result.outcome === 'could-not-run') console.error(`could not run: ${result.why ?? ''}`)
  process.exitCode = { 'signed-in': 0, refused: 2, 'could-not-run': 1 }[result.outcome]
} finally {
  await browser.close()
  await app.stop()
}
