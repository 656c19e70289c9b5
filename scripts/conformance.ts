import { main, stoppedEarly } from '../conformance/cli.ts'
import { pipeSafe } from './stdout.ts'

// npm run conformance [-- --base-url URL --config FILE --ca FILE --report-dir DIR]
const code = await main(process.argv.slice(2), {
  // `npm run conformance -- --list | head`: the closed pipe ends the output, not the process
  out: pipeSafe(process.stdout),
  err: process.stderr,
  env: process.env,
})
process.exitCode = code
// a stopped run (a signal, --run-timeout) has written its reports: checks it left behind (a hung
// browser, a request in flight) do not keep the process, or the CI job, waiting
if (stoppedEarly(code)) process.exit(code)
