import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from '@playwright/test'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { browse, launchBrowser } from './browser.ts'
import { createHttp } from './http.ts'
import type { Target, TargetUser } from './target.ts'

// Blind round 6c, run 4: with no interaction configured for it, an MFA push page (no form; it
// polls a JSON endpoint and submits itself once approved) moved on by itself to the consent
// page, and the flow then sat on "Allow access" until the check's 180 s ran out. The page named
// the user, so each look asked the account-chooser probe about it; a read of a control it had
// just counted waited, after the page moved on, for that control on the consent page with the
// page's default timeout, which a sign-in sets to the check's remaining time.

const CALLBACK = 'https://client.example/callback'
const user: TargetUser = { username: 'alice', password: 'wonderland', email: 'alice@example.com' }
const APPROVE_AFTER_MS = 1500

const html = (title: string, body: string): string =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`

// a push page that names the user (several times: a device list, a hint, a footer), polls its
// status every 100 ms and submits itself once the push is approved
const PUSH = html(
  'Approve sign-in',
  `<h1>Approve the sign-in on your phone</h1>
${Array.from({ length: 8 }, (_, i) => `<p>Notification ${i + 1} sent to the phone of alice@example.com</p>`).join('\n')}
<p id="status" role="status">Waiting for approval…</p>
<form id="done" method="post" action="/push/complete"></form>
<script>
(function poll() {
  fetch('/push/status', { cache: 'no-store' }).then(function (r) { return r.json() }).then(function (s) {
    if (s.status === 'approved') document.getElementById('done').submit()
    else setTimeout(poll, 100)
  }).catch(function () { setTimeout(poll, 100) })
})()
</script>`,
)

const CONSENT = html(
  'Allow access – Example',
  `<h1>Example App wants to read your documents</h1>
<form method="post" action="/consent"><button name="decision" value="cancel">Cancel</button><button name="decision" value="allow">Allow access</button></form>`,
)

let server: Server
let base: string
let browser: Browser
let shownAt: number | undefined

function serve(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? '/', base).pathname
  const send = (status: number, body: string, type = 'text/html'): void => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' })
    res.end(body)
  }
  const redirect = (to: string): void => {
    res.writeHead(303, { location: to })
    res.end()
  }
  if (path === '/authorize') return redirect('/push')
  if (path === '/push') {
    shownAt = performance.now()
    return send(200, PUSH)
  }
  if (path === '/push/status') {
    const approved = shownAt !== undefined && performance.now() - shownAt >= APPROVE_AFTER_MS
    return send(
      200,
      JSON.stringify({ status: approved ? 'approved' : 'pending' }),
      'application/json',
    )
  }
  if (path === '/push/complete' && req.method === 'POST') return redirect('/consent')
  if (path === '/consent' && req.method === 'GET') return send(200, CONSENT)
  if (path === '/consent' && req.method === 'POST') {
    let body = ''
    req.on('data', (chunk: Buffer) => (body += chunk.toString()))
    req.on('end', () =>
      new URLSearchParams(body).get('decision') === 'allow'
        ? redirect(`${CALLBACK}?code=the-code`)
        : redirect(`${CALLBACK}?error=access_denied`),
    )
    return
  }
  send(404, html('Not found', '<h1>Not found</h1>'))
}

const target = (): Target =>
  ({
    baseUrl: base,
    clients: { main: { id: 'c', secret: 's', redirectUri: CALLBACK } },
    users: { primary: user },
  }) as unknown as Target

beforeAll(async () => {
  server = createServer(serve)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await launchBrowser({ baseUrl: 'https://127.0.0.1', ca: undefined })
}, 60_000)
afterAll(async () => {
  await browser.close()
  await new Promise((resolve) => server.close(resolve))
})

// the check's time as a sign-in gives it to the page's default timeout (browse's signInMs)
const CHECK_LEFT_MS = 10 * 60_000
// far less than that, far more than the flow needs: a flow still on a page by then is stuck
const STUCK_AFTER_MS = 45_000

test('an unrecognised page that polls and moves on by itself is followed to the consent page, which is answered', async () => {
  // a few rounds: the page moves on at its own moment, between any two of the suite's looks
  for (let round = 0; round < 4; round++) {
    const context = await browser.newContext()
    context.setDefaultTimeout(CHECK_LEFT_MS)
    let timer: NodeJS.Timeout | undefined
    let flow: Promise<unknown> | undefined
    try {
      const t = target()
      const browsing = browse(context, t, `${base}/authorize`, createHttp(t), { user })
      flow = browsing
      const stuck = new Promise<'stuck'>((resolve) => {
        timer = setTimeout(() => resolve('stuck'), STUCK_AFTER_MS)
      })
      const outcome = await Promise.race([browsing, stuck])
      if (outcome === 'stuck') {
        const page = context.pages()[0]
        throw new Error(
          `round ${round}: the flow was still at ${page?.url() ?? '(no page)'} after ${STUCK_AFTER_MS} ms`,
        )
      }
      expect({
        callback: outcome.callback,
        stopped: outcome.stopped,
        interactions: outcome.interactions,
      }).toEqual({
        callback: `${CALLBACK}?code=the-code`,
        stopped: undefined,
        interactions: [
          expect.stringMatching(/^consent \(built-in: "Allow access"\) at .*\/consent$/),
        ],
      })
    } finally {
      clearTimeout(timer)
      await context.close()
      // a flow still stuck ends with its context: its end is awaited, not left behind
      await flow?.catch(() => undefined)
    }
  }
}, 240_000)
