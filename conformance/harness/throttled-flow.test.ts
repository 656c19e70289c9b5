import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEmbedded, type Embedded } from './embedded.ts'
import { createRunResources, runCheck, type RunResources } from './check.ts'
import '../runner.ts' // registers the checks

// Issue 29: a throttled or unavailable provider judges nothing. The embedded server's credential
// post answers 429 (its sign-in budget for this address used up, RFC 6585 §4) or 503 (RFC 9110
// §15.6.4) with the hosted error page, as the reference server's own throttle does: the checks
// whose subject is the authorization or the login are inconclusive then, never failed.
describe.each([429, 503])('the credential post answered HTTP %i', (status) => {
  let embedded: Embedded
  let resources: RunResources
  beforeAll(async () => {
    embedded = await startEmbedded({
      extend: (app) => {
        app.server.ext('onRequest', (request, h) => {
          if (request.method !== 'post' || request.path !== '/auth/login') return h.continue
          return h
            .response(
              '<!doctype html><title>Error</title><h1>Error</h1><p>Too many failed sign-in attempts. Try again later.</p>',
            )
            .type('text/html')
            .header('retry-after', '60')
            .code(status)
            .takeover()
        })
      },
    })
    resources = createRunResources(embedded.target)
  })
  afterAll(async () => {
    await resources.close()
    await embedded.stop()
  })

  test.each(['AUTHZ-13', 'LOGIN-04'] as const)('%s is inconclusive, saying why', async (id) => {
    const result = await runCheck(id, embedded.target, resources)
    expect(result.verdict, result.message).toBe('error')
    expect(result.message).toMatch(
      new RegExp(
        // the first check meets the throttle; the next one, knowing it, does not sign in into it
        id === 'AUTHZ-13'
          ? `: the sign-in on the way to .* was throttled: the sign-in's credential request \\(the form post to .*\\) was answered HTTP ${String(status)} \\(Retry-After: 60\\): .*a throttled sign-in judges nothing$`
          : `: the sign-in on the way to .* was throttled: the IdP throttled sign-ins from this address \\(HTTP ${String(status)}, Retry-After: 60\\); throttled for \\d+ s more; the check's remaining time does not cover the wait, so it did not sign in: a throttled sign-in judges nothing$`,
      ),
    )
  })
})
