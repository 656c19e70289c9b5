import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import {
  RP_CONTROL,
  RP_NOT_SERVED,
  RP_TESTS,
  rpTest,
  type RpTest,
} from '../../server/rp/catalogue.ts'
import type { RpEvent, RpEventKind, RpLogoutCall } from '../../server/rp/observations.ts'
import { startEmbedded } from '../harness/embedded.ts'
import { rpTestMain } from './cli.ts'
import {
  commandSignIn,
  judge,
  judgeSignIns,
  rpOutcome,
  runRpTests,
  selectRpTests,
} from './runner.ts'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent } from 'undici'
import type { CheckResult, Verdict } from '../harness/types.ts'

const io = () => {
  const out = new PassThrough()
  const err = new PassThrough()
  let o = ''
  let e = ''
  out.on('data', (c: Buffer) => (o += c.toString()))
  err.on('data', (c: Buffer) => (e += c.toString()))
  return { io: { out, err, env: { NO_COLOR: '1' } }, out: () => o, err: () => e }
}

const ev = (...kinds: [RpEventKind, string?][]): RpEvent[] =>
  kinds.map(([kind, detail], i) => ({
    seq: i + 1,
    at: '',
    test: 't',
    kind,
    clientId: undefined,
    detail,
  }))

const test = (id: string): RpTest => {
  const t = rpTest(id)
  if (!t) throw new Error(id)
  return t
}

/**
 * The logout the issuer recorded after a sign-in: by default a correct one (an ID token it
 * issued as id_token_hint, a registered post_logout_redirect_uri, state sent), `call` changed.
 */
const logout = (call: Partial<RpLogoutCall> = {}): RpEvent[] =>
  ev(['logout', 'GET …']).map((e) => ({
    ...e,
    seq: 10,
    logout: { hint: 'issued-here', redirectUri: 'registered', state: true, ...call },
  }))

const SIGNED_IN = { outcome: 'signed-in', exitCode: 0 } as const
const REFUSED = { outcome: 'refused', exitCode: 2 } as const
const BROKEN = { outcome: 'could-not-run', exitCode: 1, why: 'the command exited 1' } as const

describe('rp-test judge', () => {
  const aud = test('rp-id_token-aud')
  const delivered = ev(['authorize'], ['fault-delivered'], ['token-issued'])

  it('passes a negative test refused with nothing used, saying what the issuer saw', () => {
    const j = judge(aud, REFUSED, delivered, true)
    expect(j.verdict).toBe('pass')
    expect(j.message).toMatch(/the issuer saw: sign-in started, JWKS never fetched, code redeemed/)
  })
  it('fails a MUST negative test whose sign-in reported signed in', () => {
    const j = judge(aud, SIGNED_IN, delivered, true)
    expect(j.verdict).toBe('fail')
    expect(j.message).toMatch(/^your client accepted an ID token issued to another client/)
    expect(j.message).toMatch(/reported signed in \(exit 0\)/)
    expect(j.message).toMatch(/OpenID Connect Core §3\.1\.3\.7 \(3\)/)
  })
  it('fails a negative test whose command refused but whose tainted token was used', () => {
    const j = judge(aud, REFUSED, [...delivered, ...ev(['tainted-use', 'called user-info'])], true)
    expect(j.verdict).toBe('fail')
    expect(j.message).toMatch(/called user-info/)
  })
  it('fails on a page marked signed-in even when the command refused', () => {
    expect(judge(aud, REFUSED, [...delivered, ...ev(['signed-in'])], true).verdict).toBe('fail')
  })
  it('warns, not fails, for a SHOULD and records a MAY', () => {
    expect(
      judge(test('rp-id_token-bad-sig-rs256-code-flow'), SIGNED_IN, delivered, true).verdict,
    ).toBe('warn')
    expect(
      judge(test('rp-id_token-bad-at_hash-code-flow'), SIGNED_IN, delivered, true).verdict,
    ).toBe('info')
  })
  it('a sign-in that could not run is ERROR on every test, never a refusal (issue 31)', () => {
    for (const t of RP_TESTS) {
      const j = judge(t, BROKEN, delivered, true)
      expect(j.verdict, t.id).toBe('error')
      expect(j.message).toMatch(/^inconclusive: the sign-in could not run \(the command exited 1\)/)
    }
  })
  it('but a use of what a fault tainted is an acceptance even when the driver broke', () => {
    const j = judge(aud, BROKEN, [...delivered, ...ev(['tainted-use', 'called user-info'])], true)
    expect(j.verdict).toBe('fail')
    expect(j.message).not.toMatch(/reported signed in/)
  })
  it('never passes a run that did not reach the fault or the issuer', () => {
    expect(judge(aud, REFUSED, [], true).verdict).toBe('error')
    expect(judge(aud, REFUSED, ev(['authorize']), true).verdict).toBe('error')
    const na = judge(
      test('rp-nonce-invalid'),
      SIGNED_IN,
      ev(['authorize'], ['not-applicable', 'no nonce']),
      true,
    )
    expect(na.verdict).toBe('skip')
    expect(na.message).toMatch(/^not exercised: no nonce;/)
  })
  it('the discovery test: a refusal before any sign-in counts only when the document was served', () => {
    const t = test('rp-discovery-issuer-not-matching-config')
    const served = ev(['discovery'], ['fault-delivered'])
    const refused = judge(t, REFUSED, served, true)
    expect(refused.verdict).toBe('pass')
    expect(refused.message).toMatch(/the issuer saw: discovery fetched, no sign-in started/)
    // never fetched: "never started a sign-in" stays inconclusive
    expect(judge(t, REFUSED, [], true).verdict).toBe('error')
    // a sign-in reported without starting one here proves nothing either way
    expect(judge(t, SIGNED_IN, served, true).verdict).toBe('error')
    // a driver that broke after the document was served is no refusal
    expect(judge(t, BROKEN, served, true).verdict).toBe('error')
    // and no other test counts a sign-in never started as a refusal
    expect(judge(aud, REFUSED, served, true).verdict).toBe('error')
    const used = judge(
      t,
      REFUSED,
      [...served, ...ev(['authorize'], ['tainted-use', 'started a sign-in there'])],
      true,
    )
    expect(used.verdict).toBe('fail')
    expect(used.message).toMatch(/^your client accepted a discovery document whose issuer differs/)
    const signedIn = judge(t, SIGNED_IN, [...served, ...ev(['authorize'], ['token-issued'])], true)
    expect(signedIn.verdict).toBe('fail')
    // a client configured without discovery never got the fault
    const statically = judge(t, SIGNED_IN, ev(['authorize'], ['token-issued']), true)
    expect(statically.verdict).toBe('skip')
    expect(statically.message).toMatch(/^not exercised: your client never fetched this issuer's/)
  })
  it('the rotation between sign-ins (rp-key-rotation-op-sign-key) passes only when both sign-ins fetched the JWKS and signed in', () => {
    const t = test('rp-key-rotation-op-sign-key')
    expect(t.signIns).toBe(2)
    const fetched = ev(['authorize'], ['jwks'], ['token-issued'])
    const rotated = ev(['authorize'], ['key-rotated'], ['jwks'], ['token-issued'])
    const both = judgeSignIns(
      t,
      [
        { run: SIGNED_IN, events: fetched },
        { run: SIGNED_IN, events: rotated },
      ],
      true,
    )
    expect(both.verdict).toBe('pass')
    expect(both.message).toMatch(
      /^signed in 2 times: .*; sign-in 1: sign-in started, JWKS fetched, code redeemed; sign-in 2: sign-in started, JWKS fetched, signing key replaced, code redeemed$/,
    )
    // a client that kept its first JWKS cannot verify the second ID token, and refuses it
    const cached = judgeSignIns(
      t,
      [
        { run: SIGNED_IN, events: fetched },
        { run: REFUSED, events: ev(['authorize'], ['key-rotated'], ['token-issued']) },
      ],
      true,
    )
    // a SHOULD (Core §10.1.1 has no requirement keyword): a warning
    expect(cached.verdict).toBe('warn')
    expect(cached.message).toMatch(
      /^sign-in 2 of 2: your client did not sign in .*re-fetch the JWKS/,
    )
    expect(cached.message).toMatch(/JWKS never fetched, signing key replaced/)
    // one that never looked a key up in the first sign-in proves nothing about keeping it
    const never = judgeSignIns(
      t,
      [
        { run: SIGNED_IN, events: ev(['authorize'], ['token-issued']) },
        { run: SIGNED_IN, events: rotated },
      ],
      true,
    )
    expect(never.verdict).toBe('skip')
    expect(never.message).toMatch(/^not exercised: in sign-in 1 of 2, your client signed in/)
    // a second sign-in without a fetch did not verify the new key: not exercised, not passed
    expect(
      judgeSignIns(
        t,
        [
          { run: SIGNED_IN, events: fetched },
          { run: SIGNED_IN, events: ev(['authorize'], ['key-rotated'], ['token-issued']) },
        ],
        true,
      ).verdict,
    ).toBe('skip')
    // a broken driver in either sign-in is inconclusive
    expect(
      judgeSignIns(
        t,
        [
          { run: SIGNED_IN, events: fetched },
          { run: BROKEN, events: rotated },
        ],
        true,
      ).verdict,
    ).toBe('error')
  })
  it('a refusal proves nothing when the control did not sign in', () => {
    expect(judge(aud, REFUSED, delivered, false).verdict).toBe('error')
  })
  it('passes a positive test only when it signed in and redeemed a code here', () => {
    const extra = test('rp-token-response-extra-members')
    expect(judge(extra, SIGNED_IN, ev(['authorize'], ['token-issued']), true).verdict).toBe('pass')
    expect(judge(extra, SIGNED_IN, ev(['authorize']), true).verdict).toBe('error')
    expect(judge(extra, REFUSED, ev(['authorize'], ['token-issued']), true).verdict).toBe('fail')
  })
  it('a key test without a JWKS fetch is not exercised, not passed (issue 31)', () => {
    for (const id of ['rp-key-rotation-op-sign-key-native', 'rp-jwks-two-keys']) {
      const j = judge(test(id), SIGNED_IN, ev(['authorize'], ['token-issued']), true)
      expect(j.verdict, id).toBe('skip')
      expect(j.message).toMatch(/^not exercised: your client signed in without fetching/)
      expect(
        judge(test(id), SIGNED_IN, ev(['authorize'], ['jwks'], ['token-issued']), true).verdict,
      ).toBe('pass')
    }
  })
  it('rp-scope-userinfo-claims without a user-info call is not exercised, not passed', () => {
    const t = test('rp-scope-userinfo-claims')
    const j = judge(t, SIGNED_IN, ev(['authorize'], ['token-issued']), true)
    expect(j.verdict).toBe('skip')
    expect(j.message).toMatch(/^not exercised: your client signed in without calling user-info/)
    expect(
      judge(t, SIGNED_IN, ev(['authorize'], ['token-issued'], ['userinfo']), true).verdict,
    ).toBe('pass')
  })
  it('a refusal of the kid-absent multiple-key test is recorded (MAY), never failed', () => {
    const t = test('rp-id_token-kid-absent-multiple-jwks')
    expect(judge(t, REFUSED, ev(['authorize'], ['jwks'], ['token-issued']), true).verdict).toBe(
      'info',
    )
  })
  it('states a use of the access token only when one was recorded (rp-token_type-missing)', () => {
    const t = test('rp-token_type-missing')
    const bare = judge(t, SIGNED_IN, delivered, true)
    expect(bare.verdict).toBe('fail')
    expect(bare.message).not.toMatch(/used its access token|called user-info/)
    const used = judge(
      t,
      SIGNED_IN,
      [...delivered, ...ev(['tainted-use', 'called user-info with the access token'])],
      true,
    )
    expect(used.message).toMatch(/called user-info with the access token/)
  })
  it('judges the user-info test by what the client did with the user-info response', () => {
    const t = test('rp-userinfo-bad-sub-claim')
    const signedIn = ev(['authorize'], ['token-issued'])
    const never = judge(t, SIGNED_IN, signedIn, true)
    expect(never.verdict).toBe('skip')
    expect(never.message).toMatch(/^not exercised: your client never called user-info/)
    const answered = [...signedIn, ...ev(['userinfo'], ['fault-delivered'])]
    // refusing the response while keeping the ID token's session counts as refusing it
    expect(judge(t, REFUSED, answered, true).verdict).toBe('pass')
    const kept = judge(t, SIGNED_IN, answered, true)
    expect(kept.verdict).toBe('fail')
    expect(kept.message).toMatch(/a refusal of the response counts/)
  })
  describe('rp-init-logout: judged by the logout the issuer recorded', () => {
    const t = test('rp-init-logout')
    const signedIn = ev(['authorize'], ['token-issued'])
    it('called with the hint, a registered URI and state, the redirect handled: PASS', () => {
      const j = judge(t, SIGNED_IN, [...signedIn, ...logout()], true)
      expect(j.verdict).toBe('pass')
      expect(j.message).toMatch(
        /^signed in and logged out: id_token_hint an ID token this issuer issued, post_logout_redirect_uri registered, state sent and echoed unchanged/,
      )
      expect(j.message).toMatch(/the issuer saw: .*code redeemed, logout called$/)
    })
    it('never called: not exercised, saying RP_TEST_LOGOUT asked for it', () => {
      const j = judge(t, SIGNED_IN, signedIn, true)
      expect(j.verdict).toBe('skip')
      expect(j.message).toMatch(
        /^not exercised: your client signed in but never sent the user to this issuer's end_session_endpoint \(the command got RP_TEST_LOGOUT=1/,
      )
    })
    it('a missing or foreign id_token_hint fails, whatever the command reported', () => {
      for (const run of [SIGNED_IN, REFUSED, BROKEN]) {
        const missing = judge(t, run, [...signedIn, ...logout({ hint: 'missing' })], true)
        expect(missing.verdict, run.outcome).toBe('fail')
        expect(missing.message).toMatch(
          /^your client called the end_session_endpoint without id_token_hint/,
        )
      }
      const foreign = judge(
        t,
        SIGNED_IN,
        [...signedIn, ...logout({ hint: 'not-issued-here' })],
        true,
      )
      expect(foreign.verdict).toBe('fail')
      expect(foreign.message).toMatch(
        /with an id_token_hint that is not an ID token this issuer issued/,
      )
      expect(foreign.message).toMatch(/RP-Initiated Logout 1\.0 §2/)
    })
    it('an unregistered or missing post_logout_redirect_uri fails', () => {
      const unregistered = judge(
        t,
        SIGNED_IN,
        [...signedIn, ...logout({ redirectUri: 'not-registered' })],
        true,
      )
      expect(unregistered.verdict).toBe('fail')
      expect(unregistered.message).toMatch(
        /^your client called the end_session_endpoint with a post_logout_redirect_uri not registered for your client/,
      )
      const none = judge(t, SIGNED_IN, [...signedIn, ...logout({ redirectUri: 'missing' })], true)
      expect(none.verdict).toBe('fail')
      expect(none.message).toMatch(/without post_logout_redirect_uri/)
      // both wrong: both said
      const both = judge(
        t,
        SIGNED_IN,
        [...signedIn, ...logout({ hint: 'missing', redirectUri: 'not-registered' })],
        true,
      )
      expect(both.message).toMatch(/without id_token_hint .* and with a post_logout_redirect_uri/)
    })
    it('state dropped by the client: passes (state is OPTIONAL) and says the round trip carried none', () => {
      const j = judge(t, SIGNED_IN, [...signedIn, ...logout({ state: false })], true)
      expect(j.verdict).toBe('pass')
      expect(j.message).toMatch(/no state sent \(OPTIONAL, RP-Initiated Logout §2\)/)
    })
    it('the redirect back refused after a correct logout fails; a broken driver after one is ERROR', () => {
      const refused = judge(t, REFUSED, [...signedIn, ...logout()], true)
      expect(refused.verdict).toBe('fail')
      expect(refused.message).toMatch(
        /^your client refused the redirect back from a correct logout \(the sign-in command reported refused/,
      )
      const broken = judge(t, BROKEN, [...signedIn, ...logout()], true)
      expect(broken.verdict).toBe('error')
      expect(broken.message).toMatch(/^inconclusive: the sign-in could not run/)
    })
    it('a client that did not sign in is judged as on any positive test', () => {
      expect(judge(t, REFUSED, ev(['authorize']), true).verdict).toBe('fail')
      expect(judge(t, SIGNED_IN, ev(['authorize']), true).verdict).toBe('error')
    })
  })
  describe('rp-init-logout-other-state and -no-state: the logout judged as rp-init-logout, the handling of the redirect back recorded', () => {
    const signedIn = ev(['authorize'], ['token-issued'])
    const back = ev(['fault-delivered', 'redirected back from logout …']).map((e) => ({
      ...e,
      seq: 11,
    }))
    for (const [id, words] of [
      ['rp-init-logout-other-state', 'with another state than the one it sent'],
      ['rp-init-logout-no-state', 'without the state it sent'],
    ] as const) {
      const t = test(id)
      it(`${id}: accepted or turned down, a correct logout passes and says which`, () => {
        const accepted = judge(t, SIGNED_IN, [...signedIn, ...logout(), ...back], true)
        expect(accepted.verdict).toBe('pass')
        expect(accepted.message).toContain(
          `your app accepted the redirect back ${words} (the sign-in command reported signed in (exit 0)): recorded, not judged`,
        )
        const turnedDown = judge(t, REFUSED, [...signedIn, ...logout(), ...back], true)
        expect(turnedDown.verdict).toBe('pass')
        expect(turnedDown.message).toMatch(
          /^logged out: id_token_hint an ID token this issuer issued, post_logout_redirect_uri registered, state sent; your app turned down the redirect back/,
        )
        expect(turnedDown.message).toMatch(/the issuer saw: .*code redeemed, logout called$/)
      })
      it(`${id}: a driver that breaks after the logout is ERROR, never a pass`, () => {
        const broken = judge(t, BROKEN, [...signedIn, ...logout(), ...back], true)
        expect(broken.verdict).toBe('error')
        expect(broken.message).toMatch(/^inconclusive: the sign-in could not run/)
      })
      it(`${id}: a logout without state is not exercised (the Foundation skips it), one without a hint fails`, () => {
        const stateless = judge(t, SIGNED_IN, [...signedIn, ...logout({ state: false })], true)
        expect(stateless.verdict).toBe('skip')
        expect(stateless.message).toMatch(
          /^not exercised: your client's logout request carried no state \(OPTIONAL, RP-Initiated Logout §2\)/,
        )
        for (const run of [SIGNED_IN, REFUSED, BROKEN]) {
          const j = judge(t, run, [...signedIn, ...logout({ hint: 'missing' })], true)
          expect(j.verdict).toBe('fail')
          expect(j.message).toMatch(
            /^your client called the end_session_endpoint without id_token_hint/,
          )
        }
        const never = judge(t, SIGNED_IN, signedIn, true)
        expect(never.verdict).toBe('skip')
        expect(never.message).toMatch(/RP_TEST_LOGOUT=1/)
        // a logout with state the issuer did not answer with its redirect back proves nothing
        expect(judge(t, REFUSED, [...signedIn, ...logout()], true).verdict).toBe('error')
      })
    }
  })

  describe('oidcc-client-test-refresh-token: judged by the refresh and the user-info call the issuer recorded', () => {
    const t = test('oidcc-client-test-refresh-token')
    const signedIn = ev(['authorize'], ['token-issued'], ['userinfo'])
    const refreshed = ev(['refreshed', 'the refresh_token grant answered a new access token'])
    const used = ev(['userinfo', 'user-info answered …']).map((e) => ({
      ...e,
      grant: 'refresh_token' as const,
    }))
    const refusedRefresh = ev([
      'issuer-refused',
      'the token endpoint answered invalid_client: …',
    ]).map((e) => ({ ...e, grant: 'refresh_token' as const }))
    it('refreshed and user-info called with the new access token: PASS, saying so', () => {
      const j = judge(t, SIGNED_IN, [...signedIn, ...refreshed, ...used], true)
      expect(j.verdict).toBe('pass')
      expect(j.message).toMatch(
        /^signed in and refreshed: .*the issuer saw: sign-in started, JWKS never fetched, code redeemed, refresh token redeemed, user-info answered ×2 \(1 to a refreshed access token\)$/,
      )
    })
    it('never refreshed, or never used the new access token: not exercised, never passed', () => {
      const none = judge(t, SIGNED_IN, signedIn, true)
      expect(none.verdict).toBe('skip')
      expect(none.message).toMatch(/^not exercised: .*the command got RP_TEST_REFRESH=1/)
      const unused = judge(t, SIGNED_IN, [...signedIn, ...refreshed, ...ev(['userinfo'])], true)
      expect(unused.verdict).toBe('skip')
      expect(unused.message).toMatch(
        /^not exercised: your client redeemed its refresh token but never called user-info with the access token the refresh answered/,
      )
    })
    it('a refresh the issuer refused fails on its record, whatever the command reported', () => {
      for (const run of [SIGNED_IN, REFUSED, BROKEN]) {
        const j = judge(t, run, [...signedIn, ...refusedRefresh], true)
        expect(j.verdict).toBe('fail')
        expect(j.message).toMatch(
          /^the issuer refused your client's refresh_token grant: the token endpoint answered invalid_client/,
        )
      }
    })
    it('a refusal after a correct refresh fails; a driver that breaks after one is ERROR', () => {
      const refused = judge(t, REFUSED, [...signedIn, ...refreshed], true)
      expect(refused.verdict).toBe('fail')
      expect(refused.message).toMatch(/^your client did not finish after a correct refresh/)
      const broken = judge(t, BROKEN, [...signedIn, ...refreshed, ...used], true)
      expect(broken.verdict).toBe('error')
      expect(broken.message).toMatch(/^inconclusive: the sign-in could not run/)
    })
  })

  it('oidcc-client-test-missing-aud: refused passes, signed in fails (MUST), a broken driver is ERROR', () => {
    const t = test('oidcc-client-test-missing-aud')
    expect(judge(t, REFUSED, delivered, true).verdict).toBe('pass')
    const accepted = judge(t, SIGNED_IN, delivered, true)
    expect(accepted.verdict).toBe('fail')
    expect(accepted.message).toMatch(/^your client accepted an ID token without aud/)
    expect(accepted.message).toMatch(/OpenID Connect Core §2 \(aud REQUIRED/)
    const broken = judge(t, BROKEN, delivered, true)
    expect(broken.verdict).toBe('error')
    expect(broken.message).toMatch(/^inconclusive: the sign-in could not run/)
  })

  it('the failed control says the cause the issuer recorded, in plain words', () => {
    const j = judge(
      test(RP_CONTROL),
      REFUSED,
      [
        ...ev(
          ['authorize'],
          [
            'issuer-refused',
            'the token endpoint answered invalid_client: client authentication must use client_secret_post',
          ],
        ).map((e) => (e.kind === 'issuer-refused' ? { ...e, finding: 'client-auth.basic' } : e)),
      ],
      false,
    )
    expect(j.verdict).toBe('fail')
    expect(j.message).toMatch(/^your client did not sign in at an issuer that makes no fault/)
    expect(j.message).toMatch(/invalid_client: client authentication must use client_secret_post/)
    expect(j.message).toMatch(/client-auth\.basic: send client_id and client_secret as form fields/)
    expect(j.message).not.toMatch(/It should the control/)
  })
  it('selects exact IDs, globs for more, and runs the control first', () => {
    expect(selectRpTests(['rp-id_token-aud']).map((t) => t.id)).toEqual([
      RP_CONTROL,
      'rp-id_token-aud',
    ])
    expect(selectRpTests(['rp-nonce-*']).map((t) => t.id)).toEqual([
      RP_CONTROL,
      'rp-nonce-invalid',
      'rp-nonce-missing',
    ])
    expect(selectRpTests(['rp-nonce'])).toEqual([test(RP_CONTROL)])
    // a former ID runs the renamed test (ours), not the Foundation's test of that name
    expect(selectRpTests(['rp-id_token-sig-none']).map((t) => t.id)).toEqual([
      RP_CONTROL,
      'rp-id_token-alg-none-refused',
    ])
    // the rotation between two sign-ins took the Foundation's ID; its former ID still runs it,
    // and the rotation just before signing has the Foundation's -native ID
    expect(selectRpTests(['rp-key-rotation-between-sign-ins']).map((t) => t.id)).toEqual([
      RP_CONTROL,
      'rp-key-rotation-op-sign-key',
    ])
    expect(test('rp-key-rotation-op-sign-key').signIns).toBe(2)
    expect(test('rp-key-rotation-op-sign-key').foundation?.id).toBe('rp-key-rotation-op-sign-key')
    expect(test('rp-key-rotation-op-sign-key-native').signIns).toBeUndefined()
    expect(test('rp-key-rotation-op-sign-key-native').foundation?.id).toBe(
      'rp-key-rotation-op-sign-key-native',
    )
    expect(selectRpTests(undefined)[0]?.id).toBe(RP_CONTROL)
  })
  it('passes a run only when every MUST was exercised and passed', () => {
    const r = (id: string, verdict: Verdict) =>
      ({ id, level: test(id).level, verdict }) as unknown as CheckResult
    const base = [r(RP_CONTROL, 'pass'), r('rp-id_token-aud', 'pass')]
    expect(rpOutcome(base).passed).toBe(true)
    const unexercised = [...base, r('rp-nonce-invalid', 'skip')]
    expect(rpOutcome(unexercised).passed).toBe(false)
    expect(rpOutcome(unexercised, true).passed).toBe(true)
    expect(rpOutcome(unexercised).line).toBe(
      'MUST: 2 PASS, 0 FAIL, 0 WARN, 0 INFO, 1 not exercised, 0 ERROR',
    )
    expect(rpOutcome([...base, r('rp-nonce-invalid', 'error')], true).passed).toBe(false)
    expect(rpOutcome([...base, r('rp-id_token-kid-unknown', 'warn')]).passed).toBe(true)
    expect(rpOutcome([r(RP_CONTROL, 'error'), r('rp-id_token-aud', 'error')]).passed).toBe(false)
  })
})

describe('the sign-in command contract', () => {
  const run = (command: string, timeoutMs = 20_000) =>
    commandSignIn(command, { timeoutMs, baseEnv: process.env })({
      RP_TEST_ISSUER: 'https://127.0.0.1:1/rp/x',
      RP_TEST_ID: 'x',
      RP_TEST_EXPECT: 'refuse',
      RP_TEST_SIGNED_IN_URL: 'https://127.0.0.1:1/rp/x/signed-in',
      RP_TEST_SIGN_IN: '1',
      RP_TEST_SIGN_INS: '1',
      RP_TEST_LOGOUT: '0',
      RP_TEST_REFRESH: '0',
    })
  it('exit 0 is signed in; the refusal line is refused whatever the exit code', async () => {
    expect((await run('exit 0')).outcome).toBe('signed-in')
    expect(await run('echo "RP_TEST_RESULT=refused"; exit 2')).toMatchObject({
      outcome: 'refused',
      exitCode: 2,
    })
    expect((await run('echo noise; echo " RP_TEST_RESULT=refused "')).outcome).toBe('refused')
    // reported, then hung: the report stands
    expect((await run('echo RP_TEST_RESULT=refused; sleep 30', 1000)).outcome).toBe('refused')
  })
  it('anything else could not run: another exit code, a line on stderr, a signal, the timeout', async () => {
    expect(await run('exit 1')).toMatchObject({
      outcome: 'could-not-run',
      why: 'the command exited 1 without printing RP_TEST_RESULT=refused',
    })
    expect((await run('exit 2')).outcome).toBe('could-not-run')
    expect((await run('echo RP_TEST_RESULT=refused >&2; exit 2')).outcome).toBe('could-not-run')
    expect((await run('echo RP_TEST_RESULT=refused-ish; exit 2')).outcome).toBe('could-not-run')
    expect((await run('kill -9 $$')).why).toMatch(/killed by SIGKILL/)
    const slow = await run('sleep 30', 500)
    expect(slow.outcome).toBe('could-not-run')
    expect(slow.why).toMatch(/timed out/)
  })
})

describe('a server whose observations cannot be read', () => {
  it('makes every test inconclusive instead of crashing the run', async () => {
    // /rp answers, the observations do not (a proxy error, a server going away mid-run)
    let signIns = 0
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/rp' ? 200 : 502, { 'content-type': 'application/json' })
      res.end(req.url === '/rp' ? '{"tests":[],"last":0}' : '{"error":"bad gateway"}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const dispatcher = new Agent()
    try {
      const { port } = server.address() as AddressInfo
      const results = await runRpTests({
        baseUrl: `http://127.0.0.1:${port}`,
        dispatcher,
        only: ['rp-id_token-aud'],
        signIn: () => {
          signIns += 1
          return Promise.resolve({ outcome: 'signed-in', exitCode: 0, output: '' })
        },
      })
      expect(signIns).toBe(2)
      expect(results.map((r) => [r.id, r.verdict])).toEqual([
        [RP_CONTROL, 'error'],
        ['rp-id_token-aud', 'error'],
      ])
      expect(results[1]?.message).toMatch(
        /^inconclusive: could not read what the test issuer observed \(GET .* HTTP 502\)/,
      )
    } finally {
      await dispatcher.close()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe('a test of two sign-ins', () => {
  it('runs the sign-in twice at the same issuer, numbered, and judges both', async () => {
    // a stand-in server: each sign-in's observations are those of a client that fetched the JWKS
    let last = 0
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      if (req.url === '/rp') {
        res.end(JSON.stringify({ tests: [], last }))
        return
      }
      last += 3
      const kinds = ['authorize', 'jwks', 'token-issued']
      res.end(
        JSON.stringify({
          last,
          events: kinds.map((kind, i) => ({ seq: last - 2 + i, at: '', test: 'x', kind })),
        }),
      )
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const dispatcher = new Agent()
    try {
      const { port } = server.address() as AddressInfo
      const seen: string[] = []
      const results = await runRpTests({
        baseUrl: `http://127.0.0.1:${port}`,
        dispatcher,
        only: ['rp-key-rotation-op-sign-key'],
        signIn: (env) => {
          seen.push(`${env.RP_TEST_ID} ${env.RP_TEST_SIGN_IN}/${env.RP_TEST_SIGN_INS}`)
          return Promise.resolve(
            env.RP_TEST_SIGN_IN === '2'
              ? { outcome: 'refused', exitCode: 2, output: 'refused the second' }
              : { outcome: 'signed-in', exitCode: 0, output: '' },
          )
        },
      })
      expect(seen).toEqual([
        `${RP_CONTROL} 1/1`,
        'rp-key-rotation-op-sign-key 1/2',
        'rp-key-rotation-op-sign-key 2/2',
      ])
      const rotation = results[1]
      expect(rotation?.verdict).toBe('warn')
      expect(rotation?.message).toMatch(/^sign-in 2 of 2: your client did not sign in/)
      expect(rotation?.notes.filter((n) => /^sign-in \d of 2: issuer /.test(n))).toHaveLength(2)
      expect(rotation?.notes).toContain('output (last lines):\nrefused the second')
    } finally {
      await dispatcher.close()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe('idp-conformance rp-test', () => {
  it('--list prints every test, one per line: ID, level, kind, its Foundation test', async () => {
    const t = io()
    expect(await rpTestMain(['--list'], t.io)).toBe(0)
    const rows = t
      .out()
      .trim()
      .split('\n')
      .map((l) => l.split('\t'))
    // the served tests first, then the Foundation's RP tests not served here
    expect(rows.map((r) => r[0])).toEqual([
      ...RP_TESTS.map((x) => x.id),
      ...RP_NOT_SERVED.map((x) => x.id),
    ])
    expect(new Set(rows.map((r) => r[0])).size).toBe(rows.length)
    for (const r of rows) expect(r, r[0]).toHaveLength(4)
    const served = new Set<string>(RP_TESTS.map((x) => x.id))
    for (const r of rows.slice(RP_TESTS.length)) {
      expect(r.slice(1, 3), r[0]).toEqual(['-', 'not served'])
      expect(r[3]?.startsWith(`OpenID Foundation ${r[0]} (`), r[0]).toBe(true)
      expect(r[3], r[0]).toMatch(/\): \S/)
    }
    // every Foundation RP test of the Basic, config and RP-Initiated RP plans (their rp-… names,
    // as OIDCCClientBasicTestPlan, OIDCCClientConfigTestPlan and the logout modules give them)
    // is served under its own ID or listed as not served, with its reason
    for (const id of [
      'rp-response_type-code',
      'rp-id_token-issuer-mismatch',
      'rp-id_token-sub',
      'rp-id_token-aud',
      'rp-id_token-iat',
      'rp-id_token-kid-absent-single-jwks',
      'rp-id_token-kid-absent-multiple-jwks',
      'rp-id_token-sig-rs256',
      'rp-id_token-sig-none',
      'rp-id_token-bad-sig-rs256',
      'rp-userinfo-bearer-header',
      'rp-userinfo-bad-sub-claim',
      'rp-nonce-invalid',
      'rp-scope-userinfo-claims',
      'rp-token_endpoint-client_secret_basic',
      'rp-discovery-openid-configuration',
      'rp-discovery-jwks_uri-keys',
      'rp-discovery-issuer-not-matching-config',
      'rp-key-rotation-op-sign-key-native',
      'rp-key-rotation-op-sign-key',
      'rp-init-logout',
      'rp-init-logout-other-state',
      'rp-init-logout-no-state',
      // and of the comprehensive and refresh token RP plans (their module names)
      'oidcc-client-test-missing-aud',
      'oidcc-client-test-refresh-token',
    ])
      expect(
        rows.map((r) => r[0]),
        id,
      ).toContain(id)
    // a Foundation test one of ours only relates to is listed too, saying which of ours covers it
    for (const x of RP_TESTS as readonly RpTest[])
      if (x.foundation && !served.has(x.foundation.id))
        expect(rows.find((r) => r[0] === x.foundation?.id)?.[3], x.id).toContain(x.id)
    expect(rows.find((r) => r[0] === 'rp-id_token-sig-none')?.[3]).toMatch(
      /opposite test is served as rp-id_token-alg-none-refused/,
    )
    expect(rows.find((r) => r[0] === 'rp-token_endpoint-client_secret_basic')?.[3]).toMatch(
      /client_secret_post is the only/,
    )
    expect(rows.find((r) => r[0] === 'rp-key-rotation-op-sign-key')).toEqual([
      'rp-key-rotation-op-sign-key',
      'SHOULD',
      'positive',
      expect.stringMatching(
        /^OpenID Foundation rp-key-rotation-op-sign-key: same test, lower level/,
      ),
    ])
    expect(rows.find((r) => r[0] === 'rp-key-rotation-op-sign-key-native')?.slice(1, 4)).toEqual([
      'MUST',
      'positive',
      expect.stringMatching(/^OpenID Foundation rp-key-rotation-op-sign-key-native: same test/),
    ])
    expect(rows.find((r) => r[0] === 'rp-id_token-alg-none-refused')).toEqual([
      'rp-id_token-alg-none-refused',
      'MUST',
      'negative',
      expect.stringMatching(/^OpenID Foundation rp-id_token-sig-none: opposite direction/),
    ])
    expect(rows.find((r) => r[0] === 'rp-id_token-expired')?.[3]).toMatch(/^ours/)
    // every Foundation test that could be served here is: none is left "not served yet"
    for (const r of rows) expect(r[3], r[0]).not.toMatch(/not served yet/)
    for (const id of [
      'oidcc-client-test-missing-aud',
      'oidcc-client-test-refresh-token',
      'rp-init-logout-other-state',
      'rp-init-logout-no-state',
    ])
      expect(rows.find((r) => r[0] === id)?.slice(1, 4), id).toEqual([
        'MUST',
        expect.stringMatching(/^(positive|negative)$/),
        expect.stringMatching(new RegExp(`^OpenID Foundation ${id}: same test`)),
      ])
  })

  it('refuses bad usage with exit 2', async () => {
    for (const args of [
      [],
      ['--run', 'true', '--only', 'nope'],
      // exact IDs: a prefix names nothing (a glob does)
      ['--run', 'true', '--only', 'rp-nonce'],
      ['--run', 'true', '--timeout', '0'],
    ]) {
      const t = io()
      expect(await rpTestMain(args, t.io)).toBe(2)
      expect(t.err()).toMatch(/idp-conformance rp-test:/)
    }
    // a Foundation test --list shows as not served is refused with its reason
    const t = io()
    expect(await rpTestMain(['--run', 'true', '--only', 'rp-registration-dynamic'], t.io)).toBe(2)
    expect(t.err()).toMatch(
      /not served here: rp-registration-dynamic \(INTERFACE\.md has no registration endpoint/,
    )
  })

  it('a command that exits 1 is ERROR on every test, never a pass, and the run exits 1', async () => {
    const t = io()
    // the negative tests and the tests whose second leg (logout, refresh) the command reports
    const only = [
      'rp-id_token-aud',
      'oidcc-client-test-missing-aud',
      'oidcc-client-test-refresh-token',
      'rp-init-logout*',
    ]
    const code = await rpTestMain(['--run', 'exit 1', '--only', only.join(','), '--quiet'], t.io)
    expect(code).toBe(1)
    expect(t.out()).toMatch(
      /ERROR rp-id_token-sig-rs256 .*\n.*inconclusive: the sign-in could not run/,
    )
    for (const id of [
      'rp-id_token-aud',
      'oidcc-client-test-missing-aud',
      'oidcc-client-test-refresh-token',
      'rp-init-logout',
      'rp-init-logout-other-state',
      'rp-init-logout-no-state',
    ])
      expect(t.out()).toMatch(new RegExp(`ERROR ${id} `))
    expect(t.out()).not.toMatch(/PASS /)
    expect(t.out()).toMatch(
      /MUST: 0 PASS, 0 FAIL, 0 WARN, 0 INFO, 0 not exercised, 7 ERROR\nFAILED \(/,
    )
  })

  it('a refusal reported without reaching the issuer is still inconclusive', async () => {
    const t = io()
    const code = await rpTestMain(
      ['--run', 'echo RP_TEST_RESULT=refused', '--only', 'rp-id_token-aud', '--quiet'],
      t.io,
    )
    expect(code).toBe(1)
    expect(t.out()).toMatch(
      /ERROR rp-id_token-aud .*\n.*never started a sign-in at this test issuer/,
    )
  })

  it('runs against a separately started server (--base-url, --ca) and writes JUnit and JSON', async () => {
    const embedded = await startEmbedded()
    const dir = mkdtempSync(join(tmpdir(), 'rp-test-cli-'))
    try {
      writeFileSync(join(dir, 'ca.pem'), embedded.target.ca ?? '')
      const t = io()
      const code = await rpTestMain(
        [
          // the command sees the test issuer and the CA it is given
          '--run',
          'test -n "$RP_TEST_ISSUER" && test -f "$RP_TEST_CA" && exit 1; exit 7',
          '--base-url',
          embedded.target.baseUrl,
          '--ca',
          join(dir, 'ca.pem'),
          '--only',
          'rp-nonce-*',
          '--report-dir',
          join(dir, 'out'),
          '--json',
        ],
        t.io,
      )
      expect(code).toBe(1)
      const report = JSON.parse(t.out()) as {
        passed: boolean
        checks: { id: string; verdict: string; notes: string[] }[]
      }
      expect(report.passed).toBe(false)
      expect(report.checks.map((c) => c.id)).toEqual([
        RP_CONTROL,
        'rp-nonce-invalid',
        'rp-nonce-missing',
      ])
      expect(report.checks[0]?.notes[0]).toMatch(/exit code 1$/)
      const junit = readFileSync(join(dir, 'out', 'junit.xml'), 'utf8')
      expect(junit).toContain('name="rp-nonce-invalid [MUST]')
      expect(JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8'))).toEqual(report)
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await embedded.stop()
    }
  })

  it('an unreachable --base-url exits 3', async () => {
    const t = io()
    expect(await rpTestMain(['--run', 'true', '--base-url', 'https://127.0.0.1:1'], t.io)).toBe(3)
  })
})
