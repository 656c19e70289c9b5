import { describeExpectedRun } from '../oidc-provider/expected-run.ts'
import { startSpaProvider } from './provider.ts'

// The whole suite against the second foreign profile (provider.ts: node-oidc-provider with a
// consent page, a script-built login that signs in with fetch, a "continue" interstitial while
// a session lives, and refresh tokens whose reuse revokes the grant and ends the session):
// every verdict must be the one expected-verdicts.json documents (expected-run.ts).
describeExpectedRun(
  'conformance suite against node-oidc-provider with consent, script login, interstitial and revoke-on-reuse (examples/oidc-provider-spa)',
  new URL('./', import.meta.url),
  () => startSpaProvider(),
)
