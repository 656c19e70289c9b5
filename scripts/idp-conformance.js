#!/usr/bin/env node
// The package's bin: runs the TypeScript CLI through tsx (Node 20 cannot run .ts by itself).
import { register } from 'tsx/esm/api'

register()
const args = process.argv.slice(2)
if (args[0] === 'serve') {
  await import('./serve.ts')
} else if (args[0] === 'keys') {
  const { keysMain } = await import('./keys.ts')
  process.exitCode = await keysMain(args.slice(1), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  })
} else if (args[0] === 'rp-test') {
  const { rpTestMain } = await import('../conformance/rp-test/cli.ts')
  process.exitCode = await rpTestMain(args.slice(1), {
    out: process.stdout,
    err: process.stderr,
    env: process.env,
  })
} else if (args[0] === 'clients' || args[0] === 'users') {
  const { registrationsMain } = await import('./registrations.ts')
  process.exitCode = await registrationsMain(args, {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  })
} else {
  const { main } = await import('../conformance/cli.ts')
  process.exitCode = await main(args, {
    out: process.stdout,
    err: process.stderr,
    env: process.env,
  })
}
