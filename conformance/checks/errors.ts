import { type AreaChecks, check } from '../harness/check.ts'
import type { errors as catalogue } from '../catalogue/errors.ts'
import { ERROR_CHARS, expectOAuthError, expectThat } from '../harness/expect.ts'
import { ERROR_PROBES as PROBES } from '../harness/requests.ts'

const ERR_01 = check(async (ctx) => {
  const { http } = ctx
  // each probe is its own sub-case: every endpoint that answers outside the shape is reported
  for (const probe of PROBES)
    await ctx.subcase(`${probe.method} ${probe.path}`, async () => {
      const res = await http.request(probe.path, {
        method: probe.method,
        ...(probe.method === 'POST' ? { form: {} } : {}),
      })
      if (probe.status === 405) {
        // RFC 9110 §15.5.6 lets a server answer a method it does not allow 404 as well; the MUST
        // is an error status in the JSON error shape (INTERFACE.md §7), 405 is a SHOULD
        expectOAuthError(res, [404, 405])
        if (res.status !== 405) {
          ctx.note(`${probe.method} ${probe.path} was answered ${res.status}, not 405 (SHOULD)`)
          return
        }
        // RFC 9110 §15.5.6: a 405 MUST carry Allow
        const allow = res.headers.get('allow')
        expectThat(
          allow?.includes('GET'),
          `${probe.method} ${probe.path}: 405 without an Allow header listing GET (got ${JSON.stringify(allow)})`,
        )
      } else expectOAuthError(res, probe.status)
    })
})

const ERR_02 = check(async (ctx) => {
  // each probe is its own sub-case: every endpoint whose error breaks the syntax is reported
  for (const probe of PROBES)
    await ctx.subcase(`${probe.method} ${probe.path}`, async () => {
      const res = await ctx.http.request(probe.path, { method: probe.method })
      const body = expectOAuthError(res, [400, 401, 403, 404, 405])
      expectThat(
        ERROR_CHARS.test(String(body.error)),
        `error ${JSON.stringify(body.error)} has characters outside RFC 6749 App. A.7`,
      )
      expectThat(
        ERROR_CHARS.test(String(body.error_description)),
        `error_description ${JSON.stringify(body.error_description)} has characters outside RFC 6749 App. A.8`,
      )
    })
})

/** The errors checks, one per row of catalogue/errors.ts. */
export const errorsChecks: AreaChecks<typeof catalogue> = {
  'ERR-01': ERR_01,
  'ERR-02': ERR_02,
}
