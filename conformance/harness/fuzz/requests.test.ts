import { describe, expect, test } from 'vitest'
import type { HttpResponse } from '../http.ts'
import { BRANDING, TOKEN, USER_INFO } from '../requests.ts'
import {
  expectRegisteredError,
  type Malformed,
  PADDING_MIN,
  refusableMalformed,
} from './requests.ts'

/** A malformed request: a small form POSTed with no client authentication, unless changed. */
const sent = (change: Partial<Malformed> = {}): Malformed => ({
  defect: 'no client authentication',
  method: 'POST',
  params: [['grant_type', 'client_credentials']],
  body: 'form',
  query: [],
  authorization: undefined,
  padding: 0,
  ...change,
})

const refusal = (status: number): HttpResponse => {
  const json = { error: 'invalid_request', error_description: 'refused' }
  return {
    status,
    headers: new Headers({ 'content-type': 'application/json' }),
    text: JSON.stringify(json),
    json,
    url: `https://idp.example${TOKEN}`,
  }
}

describe('ROBUST-01: a refusal before reading answers only what was sent', () => {
  test('405 for a method the endpoint does not serve, 413 for a padded body, 415 for a non-form body', () => {
    expect(refusableMalformed(TOKEN, sent())).toEqual([])
    expect(refusableMalformed(TOKEN, sent({ method: 'PUT' }))).toEqual([405])
    expect(refusableMalformed(TOKEN, sent({ padding: PADDING_MIN }))).toEqual([413])
    for (const body of ['json', 'text', 'multipart'] as const)
      expect(refusableMalformed(TOKEN, sent({ body }))).toEqual([415])
    expect(refusableMalformed(TOKEN, sent({ body: 'broken-escapes' }))).toEqual([])
    // the padding goes in the body: a request without one is small whatever its padding
    expect(
      refusableMalformed(TOKEN, sent({ method: 'GET', body: 'none', padding: PADDING_MIN })),
    ).toEqual([405])
    // OIDC Core §5.3.1: user-info serves GET and POST; branding GET only
    expect(refusableMalformed(USER_INFO, sent({ body: 'none' }))).toEqual([])
    expect(refusableMalformed(BRANDING, sent({ body: 'none' }))).toEqual([405])
  })

  test('a 405, 413 or 415 to a small form POSTed to the token endpoint fails, naming RFC 9110', () => {
    expect(() => {
      expectRegisteredError(refusal(405), TOKEN, sent())
    }).toThrow(/^HTTP 405 for a method the endpoint serves \(RFC 9110 §15\.5\.6/)
    expect(() => {
      expectRegisteredError(refusal(413), TOKEN, sent())
    }).toThrow(/^HTTP 413 for a request that was not large \(RFC 9110 §15\.5\.14/)
    expect(() => {
      expectRegisteredError(refusal(415), TOKEN, sent())
    }).toThrow(
      /^HTTP 415 for a form, the media type the endpoint takes, or no body \(RFC 9110 §15\.5\.16/,
    )
    // each where it answers what was sent
    expectRegisteredError(refusal(405), TOKEN, sent({ method: 'DELETE' }))
    expectRegisteredError(refusal(413), TOKEN, sent({ padding: 4096 }))
    expectRegisteredError(refusal(415), TOKEN, sent({ body: 'json' }))
    expectRegisteredError(refusal(400), TOKEN, sent())
  })
})
