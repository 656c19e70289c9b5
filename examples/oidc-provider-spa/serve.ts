import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { ProviderFeatures } from '../oidc-provider/provider.ts'
import { SPA_FEATURES, startSpaProvider } from './provider.ts'

// Starts the second example on https://127.0.0.1:9444 (PORT to change) and writes the CA that
// signed its certificate next to target.json, which names it. FEATURES=revokeOnReuse,consent
// (a comma-separated subset of consent, scriptLogin, interstitial, revokeOnReuse) turns on only
// those; by default every one is on.
const port = Number(process.env.PORT ?? 9444)
const names = Object.keys(SPA_FEATURES)
const chosen = process.env.FEATURES?.split(',').filter(Boolean)
const unknown = chosen?.filter((f) => !names.includes(f)) ?? []
if (unknown.length > 0) {
  console.error(`unknown FEATURES ${unknown.join(', ')} (known: ${names.join(', ')})`)
  process.exit(2)
}
const features: ProviderFeatures = chosen
  ? Object.fromEntries(chosen.map((f) => [f, true]))
  : SPA_FEATURES
const provider = await startSpaProvider(port, features)
const caPath = fileURLToPath(new URL('ca.pem', import.meta.url))
writeFileSync(caPath, provider.ca)
console.log(
  `node-oidc-provider (${Object.keys(features).join(', ') || 'no extra features'}) listening on ${provider.baseUrl} (CA written to ${caPath})`,
)
const stop = (): void => void provider.stop().then(() => process.exit(0))
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
