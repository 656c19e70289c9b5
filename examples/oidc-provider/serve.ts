import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { startExampleProvider } from './provider.ts'

// Starts the example provider on https://127.0.0.1:9443 (PORT to change) and writes the CA
// that signed its certificate next to target.json, which names it.
const port = Number(process.env.PORT ?? 9443)
const provider = await startExampleProvider(port)
const caPath = fileURLToPath(new URL('ca.pem', import.meta.url))
writeFileSync(caPath, provider.ca)
console.log(`node-oidc-provider listening on ${provider.baseUrl} (CA written to ${caPath})`)
const stop = (): void => void provider.stop().then(() => process.exit(0))
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
