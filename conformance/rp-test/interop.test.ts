import type { Browser } from '@playwright/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clients } from '../../fixtures/index.ts'
import { RP_CONTROL, RP_TESTS, type RpTest, type RpTestId } from '../../server/rp/catalogue.ts'
import { launchBrowser } from '../harness/browser.ts'
import { startEmbedded, type Embedded } from '../harness/embedded.ts'
import type { CheckResult, Verdict } from '../harness/types.ts'
import { RP_FIXTURE_CLIENT } from './cli.ts'
import {
  carelessClient,
  openidClientV5,
  openidClientV6,
  startRpApp,
  type RpClientSettings,
  type RpLibrary,
} from './interop/apps.ts'
import { browserSignIn } from './interop/browser-sign-in.ts'
import { joseRp } from './interop/jose-rp.ts'
import { runRpTests, type SignIn } from './runner.ts'

/**
 * The RP tests against real relying-party libraries, each signed in through Chromium: every
 * negative test refused and every positive one signed in, except where a library really accepts
 * a fault, which is written down here as a finding about that library with its spec section
 * (and expected, so a change in the library shows up). The careless control must be judged
 * failing. Beside the libraries, a relying party written by hand on jose (`interop/jose-rp.ts`)
 * is a second validation core, not built on oauth4webapi, with its own table below.
 */

/** What a library accepts, with the spec section it departs from: findings, not test failures. */
const LIBRARY_FINDINGS: Record<
  string,
  Partial<Record<string, { verdict: Verdict; why: string }>>
> = {
  'openid-client v6': {
    // oauth4webapi does not verify the signature of an ID token that came straight from the
    // token endpoint over TLS, as OpenID Connect Core §3.1.3.7 (6) allows in the code flow
    'rp-id_token-bad-sig-rs256-code-flow': {
      verdict: 'warn',
      why: 'no signature check on token-endpoint ID tokens (Core §3.1.3.7 (6) allows TLS instead)',
    },
    'rp-id_token-kid-unknown': {
      verdict: 'warn',
      why: 'the same: the kid is never looked up (Core §3.1.3.7 (6))',
    },
    'rp-id_token-bad-at_hash-code-flow': {
      verdict: 'info',
      why: 'at_hash is not checked in the code flow, which Core §3.1.3.8 makes a MAY',
    },
    // it never fetches the JWKS (no signature check, above), so the key tests are not exercised
    'rp-key-rotation-op-sign-key-native': {
      verdict: 'skip',
      why: 'never fetches the JWKS: no key is ever looked up, so rotation proves nothing',
    },
    'rp-key-rotation-op-sign-key': {
      verdict: 'skip',
      why: 'never fetches the JWKS: a key kept from the first sign-in is never looked up',
    },
    'rp-jwks-two-keys': {
      verdict: 'skip',
      why: 'never fetches the JWKS: which of two keys it would pick is never shown',
    },
    'rp-id_token-kid-absent-single-jwks': {
      verdict: 'skip',
      why: 'never fetches the JWKS: an ID token without kid is never matched to a key',
    },
    'rp-id_token-kid-absent-multiple-jwks': {
      verdict: 'skip',
      why: 'never fetches the JWKS: an ID token without kid is never matched to a key',
    },
  },
  'openid-client v5': {
    // Issuer.discover (lib/issuer.js) builds the Issuer from whatever issuer the document names;
    // only Issuer.webfinger compares it with the expected one (OIDC Discovery §4.3 is a MUST)
    'rp-discovery-issuer-not-matching-config': {
      verdict: 'fail',
      why: 'Issuer.discover never compares the document issuer with the URL it fetched (lib/issuer.js; OIDC Discovery §4.3 MUST)',
    },
    // it picks keys by kty/alg/use and refuses when several match and the ID token names no kid
    // ("multiple matching keys found in issuer's jwks_uri", lib/helpers/issuer.js), which the
    // Foundation allows
    'rp-id_token-kid-absent-multiple-jwks': {
      verdict: 'info',
      why: 'refuses an ID token without kid when two published keys match (allowed: Core §10.1)',
    },
    'rp-token_type-missing': {
      verdict: 'fail',
      why: 'uses the access token of a token response without token_type (RFC 6749 §5.1 makes token_type REQUIRED; §7.1: a client MUST NOT use a token whose type it does not understand)',
    },
  },
}

let embedded: Embedded | undefined
let browser: Browser | undefined
let settings: RpClientSettings

beforeAll(async () => {
  embedded = await startEmbedded()
  browser = await launchBrowser(embedded.target)
  const client = clients.find((c) => c.id === RP_FIXTURE_CLIENT)
  if (!client) throw new Error('no RP test fixture client')
  settings = { clientId: client.id, clientSecret: client.secret, caPem: embedded.target.ca }
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await embedded?.stop()
})

async function run(
  make: (s: RpClientSettings) => RpLibrary,
  options: { only?: readonly string[]; wrap?: (signIn: SignIn) => SignIn } = {},
): Promise<CheckResult[]> {
  if (!embedded || !browser) throw new Error('the embedded server or the browser did not start')
  const app = await startRpApp(make(settings))
  try {
    const signIn = browserSignIn(browser, app.url, { username: 'alice', password: 'wonderland' })
    return await runRpTests({
      baseUrl: embedded.target.baseUrl,
      dispatcher: embedded.target.dispatcher,
      signIn: options.wrap ? options.wrap(signIn) : signIn,
      ...(options.only ? { only: options.only } : {}),
    })
  } finally {
    await app.stop()
  }
}

const verdicts = (results: readonly CheckResult[]) =>
  Object.fromEntries(results.map((r) => [r.id, r.verdict]))

/** Every RP test's verdict is the one `expected` names, else pass; the message lists what did not pass. */
function expectVerdicts(
  results: readonly CheckResult[],
  expected: (id: string) => Verdict | undefined,
): void {
  expect(
    verdicts(results),
    results
      .filter((r) => r.verdict !== 'pass')
      .map((r) => `${r.id}: ${r.message ?? ''}`)
      .join('\n'),
  ).toEqual(Object.fromEntries(RP_TESTS.map((t) => [t.id, expected(t.id) ?? 'pass'])))
}

describe('RP tests against third-party relying-party libraries (Chromium sign-in)', () => {
  for (const [name, make] of [
    ['openid-client v6', openidClientV6],
    ['openid-client v5', openidClientV5],
  ] as const) {
    it(`${name}: refuses every negative test and signs in on every positive one, findings aside`, async () => {
      const results = await run(make)
      const findings = LIBRARY_FINDINGS[name] ?? {}
      expectVerdicts(results, (id) => findings[id]?.verdict)
      // each recorded finding is the library accepting that fault, or never reaching it, as
      // the judge words it
      // (or, for a positive test, not signing in)
      for (const [id, finding] of Object.entries(findings))
        expect(results.find((r) => r.id === id)?.message, finding?.why).toMatch(
          finding?.verdict === 'skip'
            ? /^not exercised: /
            : RP_TESTS.find((t) => t.id === id)?.kind === 'positive'
              ? /^your client did not sign in/
              : /^your client accepted/,
        )
      // the app refreshed through the library and called user-info with the new access token;
      // after a correct logout it turned down the redirect back whose state it did not send
      const message = (id: string) => results.find((r) => r.id === id)?.message
      expect(message('oidcc-client-test-refresh-token')).toMatch(
        /^signed in and refreshed: .*refresh token redeemed, user-info answered ×2 \(1 to a refreshed access token\)$/,
      )
      expect(message('rp-init-logout-other-state')).toMatch(
        /; your app turned down the redirect back with another state than the one it sent/,
      )
      expect(message('rp-init-logout-no-state')).toMatch(
        /; your app turned down the redirect back without the state it sent/,
      )
    }, 600_000)
  }

  it('the careless control is judged failing the negative tests it accepts', async () => {
    const results = await run(carelessClient)
    const byId = verdicts(results)
    // every positive test signs in: the judge does not fail a client for nothing; it never
    // fetches the JWKS, so the key tests are not exercised rather than passed; its logout
    // names the client by client_id, not by the ID token as id_token_hint: the three logout
    // tests fail; its refresh sends no client_secret (RFC 6749 §6: a confidential client MUST
    // authenticate) and goes on with the old access token: the refresh test fails
    const exercisedBy = (t: RpTest) => t.exercisedBy
    for (const t of RP_TESTS.filter((x) => x.kind === 'positive'))
      expect(byId[t.id], t.id).toBe(
        exercisedBy(t) === 'jwks'
          ? 'skip'
          : exercisedBy(t) === 'logout' || exercisedBy(t) === 'refresh'
            ? 'fail'
            : 'pass',
      )
    for (const id of ['rp-init-logout', 'rp-init-logout-other-state', 'rp-init-logout-no-state'])
      expect(results.find((r) => r.id === id)?.message, id).toMatch(
        /^your client called the end_session_endpoint without id_token_hint/,
      )
    expect(results.find((r) => r.id === 'oidcc-client-test-refresh-token')?.message).toMatch(
      /^the issuer refused your client's refresh_token grant: the token endpoint answered invalid_\w+: .*\(to a refresh_token grant\)/,
    )
    // every applicable negative test is not met, at its level
    for (const t of RP_TESTS.filter((x) => x.kind === 'negative'))
      expect(byId[t.id], t.id).toBe(
        t.level === 'MUST' ? 'fail' : t.level === 'SHOULD' ? 'warn' : 'info',
      )
    expect(results.some((r) => r.verdict === 'fail')).toBe(true)
  }, 600_000)

  it('openid-client v5 keeping its Issuer refuses the second sign-in after the key rotation', async () => {
    // a long-running app keeps the discovered Issuer, and with it the JWKS: its keystore
    // re-fetches on an unknown kid at most once a minute (lib/helpers/issuer.js, the 60 s
    // 'throttle' set at every fetch), so an ID token signed by a key published since its last
    // fetch is refused ("no valid key found in issuer's jwks_uri"): within a minute it behaves
    // as a client that keeps its first JWKS, and the test says so
    const [control, rotation] = await run((s) => openidClientV5(s, { keepIssuer: true }), {
      only: ['rp-key-rotation-op-sign-key'],
    })
    expect(control?.verdict, control?.message).toBe('pass')
    expect(rotation?.id).toBe('rp-key-rotation-op-sign-key')
    expect(rotation?.verdict, rotation?.message).toBe('warn')
    expect(rotation?.message).toMatch(
      /^sign-in 2 of 2: your client did not sign in .*the issuer saw: sign-in started, JWKS never fetched, signing key replaced, code redeemed/,
    )
    expect(rotation?.notes.join('\n')).toMatch(/no valid key found in issuer's jwks_uri/)
  }, 600_000)

  it('oidcc-client-test-refresh-token: a driver that ignores RP_TEST_REFRESH is not exercised, never passed', async () => {
    const [, refresh] = await run(openidClientV6, {
      only: ['oidcc-client-test-refresh-token'],
      wrap: (signIn) => (env) => signIn({ ...env, RP_TEST_REFRESH: '0' }),
    })
    expect(refresh?.verdict, refresh?.message).toBe('skip')
    expect(refresh?.message).toMatch(/^not exercised: your client signed in but never redeemed/)
  }, 600_000)

  it('rp-init-logout: openid-client v6 logs out and passes; a driver that ignores RP_TEST_LOGOUT is not exercised', async () => {
    const only = ['rp-init-logout']
    const [, logout] = await run(openidClientV6, { only })
    expect(logout?.verdict, logout?.message).toBe('pass')
    expect(logout?.message).toMatch(
      /^signed in and logged out: .*state sent and echoed unchanged.*logout called$/,
    )
    const [, ignored] = await run(openidClientV6, {
      only,
      wrap: (signIn) => (env) => signIn({ ...env, RP_TEST_LOGOUT: '0' }),
    })
    expect(ignored?.verdict, ignored?.message).toBe('skip')
    expect(ignored?.message).toMatch(/^not exercised: your client signed in but never sent/)
  }, 600_000)

  it('a client that cannot sign in at all is told the cause the issuer recorded', async () => {
    // openid-client v6 set to HTTP Basic, the default of many libraries: the control fails
    // and says why, with the fix, instead of "your client refused a correct sign-in"
    const [control, ...rest] = await run((s) => openidClientV6(s, 'basic'), {
      only: ['rp-id_token-aud'],
    })
    expect(control?.id).toBe(RP_CONTROL)
    expect(control?.verdict).toBe('fail')
    expect(control?.message).toMatch(
      /^your client did not sign in at an issuer that makes no fault .*the token endpoint answered invalid_client: client authentication must use client_secret_post.*\(client-auth\.basic: send client_id and client_secret as form fields/,
    )
    // and no refusal counts while the control does not sign in
    expect(rest.map((r) => r.verdict)).toEqual(['error'])
  }, 600_000)

  it('a driver that breaks after a real sign-in is ERROR on every test, never a refusal', async () => {
    // openid-client v6 refuses these faults, but the driver reports could-not-run for its own
    // reasons (here: always): not one negative test may pass on that
    const only = ['rp-id_token-alg-none-refused', 'rp-id_token-aud', 'rp-nonce-invalid']
    const results = await run(openidClientV6, {
      only,
      wrap: (signIn) => async (env) => {
        const real = await signIn(env)
        return { ...real, outcome: 'could-not-run', why: 'the driver crashed after the sign-in' }
      },
    })
    expect(results.map((r) => r.id)).toEqual([RP_CONTROL, ...only])
    for (const r of results) {
      expect(r.verdict, `${r.id}: ${r.message ?? ''}`).toBe('error')
      expect(r.message).toMatch(/^inconclusive: the sign-in could not run \(the driver crashed/)
    }
  }, 600_000)
})

/**
 * The hand-written RP on jose (`interop/jose-rp.ts`), a second validation core beside
 * oauth4webapi's: what its code does with each test. A positive test signs in unless a verdict
 * says otherwise; every refusal must come from the check its source makes for that fault (its
 * refusal names the section, or jose's error for that claim), not from some other failure.
 */
const JOSE_RP: Partial<Record<RpTestId, { verdict?: Verdict; why?: string; refusedBy: RegExp }>> = {
  // discover() compares the document's issuer with the URL it fetched (Discovery §4.3)
  'rp-discovery-issuer-not-matching-config': {
    refusedBy: /OIDC Discovery §4\.3: the discovery document names issuer/,
  },
  // jwtVerify checks the signature with the JWKS key the kid names (Core §3.1.3.7 (6))
  'rp-id_token-bad-sig-rs256-code-flow': { refusedBy: /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/ },
  // algorithms: ['RS256'] (Core §3.1.3.7 (7))
  'rp-id_token-alg-none-refused': { refusedBy: /ERR_JOSE_ALG_NOT_ALLOWED/ },
  // issuer: the discovered issuer (Core §3.1.3.7 (2))
  'rp-id_token-issuer-mismatch': { refusedBy: /unexpected "iss" claim value/ },
  // requiredClaims (Core §2)
  'rp-id_token-sub': { refusedBy: /missing required "sub" claim/ },
  'rp-id_token-iat': { refusedBy: /missing required "iat" claim/ },
  // audience: its client_id, and no other audience trusted (Core §3.1.3.7 (3))
  'rp-id_token-aud': { refusedBy: /unexpected "aud" claim value/ },
  'oidcc-client-test-missing-aud': { refusedBy: /missing required "aud" claim/ },
  'rp-id_token-aud-multiple-no-azp': {
    refusedBy: /Core §3\.1\.3\.7 \(3\): untrusted audiences rp-test-foreign-client/,
  },
  // exp with 60 s of leeway (Core §3.1.3.7 (9))
  'rp-id_token-expired': { refusedBy: /"exp" claim timestamp check failed/ },
  // the nonce compared exactly, absent included (Core §3.1.3.7 (11))
  'rp-nonce-invalid': { refusedBy: /Core §3\.1\.3\.7 \(11\): the ID token nonce differs/ },
  'rp-nonce-missing': { refusedBy: /Core §3\.1\.3\.7 \(11\): the ID token has no nonce/ },
  // the unknown kid re-fetches the JWKS (no cooldown), then no key matches
  'rp-id_token-kid-unknown': { refusedBy: /ERR_JWKS_NO_MATCHING_KEY/ },
  // the callback checks before the code is redeemed (RFC 6749 §10.12, RFC 9207 §2.4)
  'rp-response-state-mismatch': { refusedBy: /RFC 6749 §10\.12: the callback state differs/ },
  'rp-response-iss-mismatch': { refusedBy: /RFC 9207 §2\.4: the callback iss is/ },
  // the user-info sub compared with the ID token's (Core §5.3.4)
  'rp-userinfo-bad-sub-claim': { refusedBy: /Core §5\.3\.4: the user-info sub differs/ },
  // token_type must be Bearer (RFC 6749 §5.1, §7.1)
  'rp-token_type-missing': { refusedBy: /RFC 6749 §7\.1: the token response has token_type/ },
  // at_hash compared when present (Core §3.1.3.8, a MAY it takes)
  'rp-id_token-bad-at_hash-code-flow': { refusedBy: /Core §3\.1\.3\.8: at_hash does not match/ },
  'rp-id_token-kid-absent-multiple-jwks': {
    verdict: 'info',
    why: 'jose finds two keys for a token without kid and the RP does not try each (Core §10.1 requires the kid then)',
    refusedBy: /ERR_JWKS_MULTIPLE_MATCHING_KEYS/,
  },
}

describe('RP tests against a hand-written RP on jose (a second validation core)', () => {
  it('jose RP: every verdict is what its source does, each refusal by the check made for that fault', async () => {
    const results = await run(joseRp)
    expectVerdicts(
      results,
      (id) => (JOSE_RP as Record<string, { verdict?: Verdict } | undefined>)[id]?.verdict,
    )
    for (const t of RP_TESTS) {
      const r = results.find((x) => x.id === t.id)
      const entry = (JOSE_RP as Record<string, { why?: string; refusedBy: RegExp } | undefined>)[
        t.id
      ]
      // a negative test passed by a refusal names its check; a positive one signed in
      if (t.kind === 'negative')
        expect(entry, `${t.id}: no refusal expected in JOSE_RP`).toBeDefined()
      if (entry) expect(r?.notes.join('\n'), `${t.id} ${entry.why ?? ''}`).toMatch(entry.refusedBy)
    }
    // the key tests were exercised, not skipped: between the sign-ins the RP kept its JWKS and
    // re-fetched it for the new kid (no cooldown), so sign-in 2 fetched the JWKS again
    expect(results.find((r) => r.id === 'rp-key-rotation-op-sign-key')?.message).toMatch(
      /sign-in 2: [^;]*JWKS fetched/,
    )
  }, 600_000)
})
