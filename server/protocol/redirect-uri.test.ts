import { describe, expect, test } from 'vitest'
import { checkRegistrableRedirectUri, redirectUriMatches } from './redirect-uri.ts'

describe('redirect URI matching', () => {
  test('is exact string comparison (RFC 6749 §3.1.2.3)', () => {
    expect(redirectUriMatches('https://app.example/cb', 'https://app.example/cb')).toBe(true)
    for (const other of [
      'https://app.example/cb/',
      'https://APP.example/cb',
      'https://app.example/cb?x=1',
      'https://app.example:443/cb',
      'https://app.example/cb#f',
      'https://app.example:8443/cb',
    ])
      expect(redirectUriMatches('https://app.example/cb', other)).toBe(false)
  })

  test('lets the port of a loopback IP http URI vary (RFC 8252 §7.3), nothing else', () => {
    const reg = 'http://127.0.0.1:3000/cb'
    expect(redirectUriMatches(reg, 'http://127.0.0.1:3000/cb')).toBe(true)
    expect(redirectUriMatches(reg, 'http://127.0.0.1:51234/cb')).toBe(true)
    expect(redirectUriMatches(reg, 'http://127.0.0.1/cb')).toBe(true)
    expect(redirectUriMatches('http://[::1]/cb', 'http://[::1]:8080/cb')).toBe(true)
    for (const other of [
      'http://127.0.0.1:3000/cb2',
      'http://127.0.0.1:3000/cb?x=1',
      'http://127.0.0.1:3000/cb#x',
      'http://[::1]:3000/cb',
      'http://localhost:3000/cb',
      'https://127.0.0.1:3000/cb',
      'http://user@127.0.0.1:3000/cb',
      'http://127.0.0.1:3000/./cb',
    ])
      expect(redirectUriMatches(reg, other), other).toBe(false)
    // localhost is not a loopback IP literal: exact match only
    expect(redirectUriMatches('http://localhost:3000/cb', 'http://localhost:3001/cb')).toBe(false)
  })
})

describe('registrable redirect URIs', () => {
  test.each([
    'https://app.example/cb',
    'http://127.0.0.1:3000/cb',
    'http://127.0.0.1/cb',
    'http://[::1]:8080/cb',
    'com.example.app:/oauth2redirect',
  ])('%s is accepted', (uri) => {
    expect(checkRegistrableRedirectUri(uri)).toEqual({})
  })

  test.each([
    ['http://app.example/cb', /must use https/],
    ['https://app.example/cb#frag', /fragment/],
    ['/cb', /absolute/],
    ['javascript:alert(1)', /scheme "javascript"/],
    ['https://user:pw@app.example/cb', /user information/],
  ])('%s is refused', (uri, reason) => {
    expect(checkRegistrableRedirectUri(uri).error).toMatch(reason)
  })

  test('localhost is accepted with a warning pointing at RFC 8252 §8.3', () => {
    const verdict = checkRegistrableRedirectUri('http://localhost:3000/cb')
    expect(verdict.error).toBeUndefined()
    expect(verdict.warning).toMatch(/RFC 8252 §8.3/)
  })
})
