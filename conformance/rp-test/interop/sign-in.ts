/**
 * A sign-in command for `idp-conformance rp-test --run`: serves one relying-party library as a
 * web app on 127.0.0.1, signs in through Chromium at RP_TEST_ISSUER, and exits 0 when the app
 * shows a signed-in page, 1 when it refused. Usage (the embedded server's fixture client):
 *
 *   idp-conformance rp-test --run "node --import tsx conformance/rp-test/interop/sign-in.ts openid-client"
 *
 * with `openid-client` (v6), `openid-client-v5` or `careless` (the control that must fail).
 */
import { readFileSync } from 'node:fs'
import { launchBrowser } from '../../harness/browser.ts'
import type { SignInEnv } from '../runner.ts'
import { browserSignIn } from './browser-sign-in.ts'
import {
  carelessClient,
  openidClientV5,
  openidClientV6,
  startRpApp,
  type RpClientSettings,
  type RpLibrary,
} from './apps.ts'

const LIBRARIES: Record<string, (s: RpClientSettings) => RpLibrary> = {
  'openid-client': openidClientV6,
  'openid-client-v5': openidClientV5,
  careless: carelessClient,
}

const env = process.env
const make = LIBRARIES[process.argv[2] ?? 'openid-client']
const issuer = env.RP_TEST_ISSUER
if (!make || !issuer) {
  console.error(
    `usage: RP_TEST_ISSUER=… sign-in.ts [${Object.keys(LIBRARIES).join('|')}] (run it through idp-conformance rp-test --run)`,
  )
  process.exit(2)
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
  process.exitCode = result.exitCode
} finally {
  await browser.close()
  await app.stop()
}
