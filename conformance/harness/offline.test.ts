import { describe, expect, test } from 'vitest'
import { CheckFailure } from './expect.ts'
import { expectOfflineGranted } from './offline.ts'

// Blind round 3 fault 2: offline access judged by its evidence, the scope member left to TOK-02.
describe('expectOfflineGranted', () => {
  const never = () => Promise.reject(new Error('the refresh token must not be presented'))
  const answering = (status: number, json: unknown) => {
    const presented: string[] = []
    return {
      presented,
      refresh: (rt: string) => {
        presented.push(rt)
        return Promise.resolve({ status, json })
      },
    }
  }

  test('offline_access in the scope: granted, nothing presented, nothing noted', async () => {
    await expect(
      expectOfflineGranted({ scope: 'openid offline_access', refreshToken: 'rt' }, never, 'x'),
    ).resolves.toBeUndefined()
  })

  test('an empty scope with a refresh token that works: granted, noted as the scope member’s deviation', async () => {
    const r = answering(200, { access_token: 'at', token_type: 'Bearer' })
    const note = await expectOfflineGranted({ scope: '', refreshToken: 'rt-1' }, r.refresh, 'x')
    expect(r.presented).toEqual(['rt-1'])
    expect(note).toMatch(
      /^the token response's scope "" leaves out offline_access, but its refresh_token works .*TOK-02/,
    )
  })

  test('a refresh token the token endpoint refuses: not granted, a failure naming the answer', async () => {
    const r = answering(400, { error: 'invalid_grant' })
    const judged = expectOfflineGranted(
      { scope: 'openid', refreshToken: 'rt' },
      r.refresh,
      'not granted',
    )
    await expect(judged).rejects.toBeInstanceOf(CheckFailure)
    await expect(judged).rejects.toThrow(
      'not granted (scope "openid"), and the refresh_token issued with it is refused at the token endpoint (HTTP 400 invalid_grant)',
    )
  })

  test('neither offline_access in the scope nor a refresh token: not granted', async () => {
    await expect(
      expectOfflineGranted({ scope: undefined, refreshToken: undefined }, never, 'not granted'),
    ).rejects.toThrow('not granted (scope "", and no refresh_token)')
  })
})
