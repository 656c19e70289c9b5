import { describe, expect, test } from 'vitest'
import { judge } from './judge.ts'

/** The assertion of a check that wants invalid_grant. */
const EXPECT = /error: expected invalid_grant, got/

describe('the self-test accepts a sabotage only when the check fails by its own assertion', () => {
  test('the expected assertion at the verdict of the level proves the check', () => {
    const observed = { verdict: 'fail', message: 'error: expected invalid_grant, got "x"' }
    expect(judge(observed, 'MUST', EXPECT)).toEqual([])
    expect(judge({ ...observed, verdict: 'warn' }, 'SHOULD', EXPECT)).toEqual([])
    expect(judge({ ...observed, verdict: 'info' }, 'MAY', EXPECT)).toEqual([])
  })

  test.each([
    ['a pass', 'pass', undefined, /verdict pass, expected fail/],
    ['a skip', 'skip', 'no second client in the target configuration', /verdict skip/],
    ['an inconclusive run', 'error', 'error: expected invalid_grant, got "x"', /verdict error/],
    [
      'a TypeError of the check',
      'fail',
      "Cannot read properties of undefined (reading 'error')",
      /not an assertion|does not match/,
    ],
    ['a timeout', 'fail', 'timed out after 60000 ms', /not an assertion/],
    [
      'a browser that did not start',
      'fail',
      "browserType.launch: Executable doesn't exist at /nowhere/chrome",
      /not an assertion/,
    ],
    ['a network failure', 'fail', 'fetch failed (connect ECONNREFUSED 127.0.0.1:1)', /not an/],
    [
      'another assertion of the same check',
      'fail',
      'status: expected HTTP 400, got 500 from https://127.0.0.1/auth/token',
      /does not match the expected assertion/,
    ],
    ['no message at all', 'fail', undefined, /no failure message/],
  ])('%s is rejected', (_, verdict, message, reason) => {
    const problems = judge({ verdict, message }, 'MUST', EXPECT)
    expect(problems.length).toBeGreaterThan(0)
    expect(problems.join('; ')).toMatch(reason)
  })

  test('a harness failure is rejected even when the pattern happens to match it', () => {
    const message = 'error: expected invalid_grant, got undefined (timed out after 60000 ms)'
    expect(judge({ verdict: 'fail', message }, 'MUST', EXPECT).join('; ')).toMatch(
      /not an assertion/,
    )
  })

  test('a SHOULD check must warn, not fail, and a MUST check must fail, not warn', () => {
    const message = 'error: expected invalid_grant, got "x"'
    expect(judge({ verdict: 'fail', message }, 'SHOULD', EXPECT)).not.toEqual([])
    expect(judge({ verdict: 'warn', message }, 'MUST', EXPECT)).not.toEqual([])
  })

  test('a global pattern gives the same answer every time', () => {
    const g = /expected invalid_grant/g
    const observed = { verdict: 'fail', message: 'error: expected invalid_grant, got "x"' }
    expect(judge(observed, 'MUST', g)).toEqual([])
    expect(judge(observed, 'MUST', g)).toEqual([])
  })
})
