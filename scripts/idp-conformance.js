#!/usr/bin/env node
// The package's bin. An installed package runs the compiled JavaScript of dist/ (`npm pack`
// builds it: prepack); a checkout runs the TypeScript sources through tsx.
import { existsSync } from 'node:fs'

const source = new URL('./cli-main.ts', import.meta.url)
let cli
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api')
  register()
  cli = await import(source.href)
} else {
  cli = await import(new URL('../dist/scripts/cli-main.js', import.meta.url).href)
}
const code = await cli.run(process.argv.slice(2))
if (code !== undefined) process.exitCode = code
// a run stopped by a signal or --run-timeout (exit 4, or 128 + the signal) has written its
// reports: what it left behind does not keep the process waiting
if (code === 4 || code >= 128) process.exit(code)
