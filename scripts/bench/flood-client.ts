import { readFileSync } from 'node:fs'
import { failedSignIn, httpTo } from './http-flow.ts'

// The bench's sign-in flood (issue 33), in a process of its own: FLOOD loops, each a failed
// sign-in over HTTP (login page, then a wrong password) retried at once whatever the answer,
// against BASE_URL, trusting CA_PATH. It runs in its own process so its fetches do not share
// the event loop of the load generator that measures the other endpoints' latency (an attacker
// is not inside the measuring client either). Prints "flooding" at the first answer to a
// login post (by then the loops' connections are open and the hashing gate is taken), so the
// bench measures the flood under way rather than its first second; on SIGTERM it
// prints the statuses it saw as one JSON line and exits (sign-ins still running are dropped).
const base = process.env.BASE_URL ?? ''
const flood = Number(process.env.FLOOD ?? 24)
const http = httpTo(base, readFileSync(process.env.CA_PATH ?? '', 'utf8'))
const statuses: Record<string, number> = {}
let started = false
process.once('SIGTERM', () => {
  console.log(JSON.stringify({ statuses }))
  process.exit(0)
})
for (let i = 0; i < flood; i++)
  void (async () => {
    for (;;) {
      const status = await failedSignIn(http).catch(() => 0)
      statuses[status] = (statuses[status] ?? 0) + 1
      if (!started) console.log('flooding')
      started = true
    }
  })()
