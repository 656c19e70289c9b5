// npm run build (and prepack): compiles the TypeScript to dist/ so that an installed package
// runs JavaScript, and copies what the compiled code reads from disk beside it.
import { execFileSync } from 'node:child_process'
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../', import.meta.url))
const dist = new URL('../dist/', import.meta.url)
rmSync(dist, { recursive: true, force: true })
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
// the hosted pages' stylesheet (server/routes/assets.ts serves it from beside the views)
cpSync(new URL('../server/views/assets/', import.meta.url), new URL('server/views/assets/', dist), {
  recursive: true,
})
// conformance/cli.ts reads the suite's version from ../package.json; ESM scope for dist/
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url)))
writeFileSync(
  new URL('package.json', dist),
  `${JSON.stringify({ name: `${name}-dist`, version, private: true, type: 'module' }, null, 2)}\n`,
)
console.log('built dist/')
