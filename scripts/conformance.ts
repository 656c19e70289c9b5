import { main } from '../conformance/cli.ts'

// npm run conformance [-- --base-url URL --config FILE --ca FILE --report-dir DIR]
process.exitCode = await main(process.argv.slice(2), {
  out: process.stdout,
  err: process.stderr,
  env: process.env,
})
