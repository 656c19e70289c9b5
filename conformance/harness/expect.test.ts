import { describe, expect, test } from 'vitest'
import { CheckFailure, wrongMethod } from './expect.ts'
import type { HttpResponse } from './http.ts'

const answer = (status: number, json: unknown): HttpResponse => ({
  status,
  headers: new Headers({ 'content-type': 'application/json' }),
  text: JSON.stringify(json),
  json,
  url: 'https://idp.test/auth/revoke',
})

describe('wrongMethod', () => {
  const error = (code: string) => ({ error: code, error_description: 'why' })

  test('405, 400 or 404 in the JSON error shape is the refusal; anything but 405 is noted', () => {
    const notes: string[] = []
    wrongMethod({ note: (m) => notes.push(m) }, answer(405, error('invalid_request')), 'GET')
    expect(notes).toEqual([])
    wrongMethod({ note: (m) => notes.push(m) }, answer(404, error('not_found')), 'GET')
    expect(notes).toEqual(['GET was answered 404, not 405 (SHOULD)'])
  })

  test('401 invalid_client refuses the credentials in the query (RFC 6749 §2.3.1): noted, not a failure', () => {
    const notes: string[] = []
    wrongMethod({ note: (m) => notes.push(m) }, answer(401, error('invalid_client')), 'GET')
    expect(notes[0]).toMatch(/^GET was refused 401 invalid_client for the credentials in its query/)
  })

  test('served (200), or a 401 of another kind, fails', () => {
    const ctx = { note: () => undefined }
    expect(() => wrongMethod(ctx, answer(200, { active: false }), 'GET')).toThrow(CheckFailure)
    expect(() => wrongMethod(ctx, answer(401, error('invalid_token')), 'GET')).toThrow(
      /^GET: .*invalid_client/,
    )
  })
})
