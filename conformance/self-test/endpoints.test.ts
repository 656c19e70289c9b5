import { http, HttpResponse, type HttpHandler } from 'msw'
import { describe, expect, test } from 'vitest'
import { DISCOVERY, TOKEN } from '../harness/requests.ts'
import type { Target } from '../harness/target.ts'
import { sabotageTarget } from './prove.ts'
import { corruptJson, relay } from './sabotage/kit.ts'

// A deployment that mounts its token endpoint elsewhere and says so in its discovery document
// (OIDC Discovery §3: token_endpoint is the URL): DISC-03 alone judges the path against
// INTERFACE.md §2.7, and every check that calls the token endpoint still measures it there.
const MOVED = '/elsewhere/oauth2/token'

const movedTokenEndpoint = (target: Target): HttpHandler[] => [
  ...corruptJson(DISCOVERY, (doc) => {
    doc.token_endpoint = target.baseUrl + MOVED
  })(target),
  // the real token endpoint answers at the new path…
  http.all(target.baseUrl + MOVED, async ({ request }) =>
    relay(
      target,
      new Request(target.baseUrl + TOKEN, {
        method: request.method,
        headers: request.headers,
        ...(request.method === 'GET' || request.method === 'HEAD'
          ? {}
          : { body: await request.text() }),
      }),
    ),
  ),
  // …and no longer at the interface's
  http.all(target.baseUrl + TOKEN, () =>
    HttpResponse.json(
      { error: 'not_found', error_description: 'the token endpoint moved' },
      { status: 404 },
    ),
  ),
]

const run = sabotageTarget()
const moved = { how: 'the token endpoint mounted elsewhere', handlers: movedTokenEndpoint }
const paths = (r: { exchanges: readonly { url: string }[] }): string[] =>
  r.exchanges.map((x) => new URL(x.url).pathname)

describe('endpoints come from discovery', () => {
  test('DISC-03 fails on the moved token endpoint, by its token_endpoint member', async () => {
    const r = await run('DISC-03', moved)
    expect(r.verdict).toBe('fail')
    expect(r.message).toMatch(/^token_endpoint: expected /)
  })

  for (const id of ['CC-01', 'TOK-01', 'TOK-03'] as const)
    test(`${id} measures the token endpoint where discovery says it is, and passes`, async () => {
      const r = await run(id, moved)
      expect(r.verdict, r.message).toBe('pass')
      expect(paths(r)).toContain(MOVED)
      expect(paths(r)).not.toContain(TOKEN)
    })
})
