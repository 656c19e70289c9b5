import { describe, expect, test } from 'vitest'
import { credentialPostAnswer } from './checks/login-credentials.ts'

// RFC 9700 §4.12.1 forbids 307 (and 308 keeps the POST as well, RFC 9110 §15.4.9); it asks for
// 303 only "If an HTTP redirection (and not, for example, JavaScript) is used": a page is allowed
describe('LOGIN-04: the answer to a credential POST', () => {
  test.each([307, 308])('HTTP %i fails, naming the re-sent credentials', (status) => {
    const judged = credentialPostAnswer(status)
    expect(judged.ok).toBe(false)
    expect(judged.message).toMatch(
      new RegExp(`^the credential POST was answered with HTTP ${status}; expected 302 or 303`),
    )
    expect(judged.message).toMatch(/never 307 or 308/)
  })
  test.each([302, 303])('HTTP %i passes', (status) => {
    expect(credentialPostAnswer(status)).toMatchObject({ ok: true })
  })
  test('a 200 page whose script moves on passes, with a note', () => {
    const judged = credentialPostAnswer(200)
    expect(judged.ok).toBe(true)
    expect(judged.note).toMatch(/HTTP 200/)
  })
  test.each([undefined, 301, 400])('anything else (%s) still fails', (status) => {
    expect(credentialPostAnswer(status).ok).toBe(false)
  })
})
