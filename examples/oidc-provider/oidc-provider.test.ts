import { describeExpectedRun } from './expected-run.ts'
import { startExampleProvider } from './provider.ts'

// The whole suite against a third-party, OpenID-certified provider configured as close to
// INTERFACE.md as it allows (provider.ts): every verdict must be the one expected-verdicts.json
// documents (expected-run.ts).
describeExpectedRun(
  'conformance suite against node-oidc-provider (examples/oidc-provider)',
  new URL('./', import.meta.url),
  () => startExampleProvider(),
)
