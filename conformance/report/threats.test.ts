import { describe, expect, test } from 'vitest'
import { selectChecks, selectsSecurityProfile } from '../cli.ts'
import '../checks/index.ts'
import { WHOLE_SUBJECT, type CheckResult, type Verdict } from '../harness/types.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import {
  gatedShoulds,
  LOGIN_FORM,
  profileChecks,
  REFERRER_POLICY,
  REVOKED_REFRESH_TOKEN,
  threats,
  type Threat,
} from '../threats.ts'
import { formatSummary } from './terminal.ts'
import { markdownThreats, offThreat, threatTable } from './threats.ts'

const result = (id: RequirementId, verdict: Verdict): CheckResult => ({
  id,
  ...requirements[id],
  verdict,
  message: verdict === 'pass' ? undefined : 'why',
  notes: [],
  exchanges: [],
  screenshots: [],
  durationMs: 1,
})

const all = (verdict: Verdict): CheckResult[] =>
  [...new Set([...profileChecks(), ...selectChecks('SEC-*')])].map((id) => result(id, verdict))

describe('threat catalogue', () => {
  test('every RFC 9700 §4 threat (§4.1 to §4.17) has a row', () => {
    const sections = new Set((threats as readonly Threat[]).map((t) => t.section))
    for (let i = 1; i <= 17; i++) expect(sections).toContain(`RFC 9700 §4.${i}`)
  })

  test('an applicable threat names at least one check; the others say why', () => {
    for (const t of threats as readonly Threat[]) {
      if (t.applies === true) expect(t.checks.length).toBeGreaterThan(0)
      else expect(t.reason.length).toBeGreaterThan(10)
    }
  })
})

describe('security gate', () => {
  const gated = gatedShoulds((id) => requirements[id].level)

  test('holds at MUST every SHOULD behind an account takeover or a token theft, and only those', () => {
    expect([...gated.keys()].sort()).toEqual(
      [
        'CC-04',
        'CODE-03',
        'LOGIN-05',
        'LOGIN-07',
        'PKCE-08',
        'REV-03',
        'SEC-08',
        'SEC-10',
        'SEC-11',
        'TLS-03',
        'UI-12',
      ].sort(),
    )
    // a lock-out is a denial of service, not a takeover: SEC-01 stays a warning
    expect(gated.has('SEC-01')).toBe(false)
    expect(gated.get('REV-03')).toMatch(/^token theft \(RFC 9700 §4\.10 /)
    expect(gated.get('SEC-11')).toMatch(/^account takeover \(RFC 6819 §4\.4\.1\.6 /)
    // a token accepted in the URL leaks through logs and Referer (issue 30)
    expect(gated.get('UI-12')).toBe(
      'token theft (RFC 6819 §4.6.7 Token leakage via log files and HTTP referrers)',
    )
    expect(gated.get('LOGIN-07')).toBe(
      'account takeover (RFC 6749 §10.10 Credentials-guessing attacks on the login page)',
    )
    for (const id of gated.keys()) expect(requirements[id].level).toBe('SHOULD')
    // the gate only raises checks the profile runs
    for (const id of gated.keys()) expect(selectChecks('security')).toContain(id)
  })

  test('applies when --only names the security profile', () => {
    expect(selectsSecurityProfile('security')).toBe(true)
    expect(selectsSecurityProfile('PKCE, Security')).toBe(true)
    expect(selectsSecurityProfile('SEC-*')).toBe(false)
    expect(selectsSecurityProfile(undefined)).toBe(false)
  })
})

describe('threat table', () => {
  test('all checks passing: every applicable threat is mitigated', () => {
    const rows = threatTable(all('pass'))
    const applicable = rows?.filter((r) => r.reason === undefined) ?? []
    expect(applicable.length).toBeGreaterThan(40)
    expect(applicable.every((r) => r.status === 'mitigated')).toBe(true)
    expect(rows?.find((r) => r.section === 'RFC 9700 §4.6')?.status).toBe('not applicable')
  })

  test('a failed or warned check marks its threats not mitigated; a skipped one not shown', () => {
    const results = all('pass').map((r) =>
      r.id === 'SEC-03'
        ? result('SEC-03', 'warn')
        : r.id === 'LOGIN-04'
          ? result('LOGIN-04', 'skip')
          : r,
    )
    const rows = threatTable(results)
    expect(rows?.find((r) => r.section === 'RFC 9700 §4.4')?.status).toBe('not mitigated')
    expect(rows?.find((r) => r.section === 'RFC 9700 §4.12')?.status).toBe('not shown')
    expect(markdownThreats(rows ?? [])).toMatch(/RFC 9700 §4\.4 Mix-up attacks \| not mitigated/)
    expect(formatSummary(results)).toMatch(/NOT SHOWN RFC 9700 §4\.12 307 redirect: LOGIN-04 SKIP/)
  })

  test("a failure off the check's subject, or an inconclusive check, shows nothing about the threat", () => {
    // PKCE-06 refused the wrong verifier with 401 instead of 400 invalid_grant; UI-07 and
    // ROBUST-02 met user-info refusing the genuine token; AUTHZ-03 inconclusive
    const off = (id: RequirementId, aside: 'refused' | 'precondition'): CheckResult => ({
      ...result(id, 'fail'),
      aside,
    })
    const results = all('pass').map((r) =>
      r.id === 'PKCE-06'
        ? off('PKCE-06', 'refused')
        : r.id === 'UI-07' || r.id === 'ROBUST-02'
          ? off(r.id, 'refused')
          : r.id === 'REV-01'
            ? off('REV-01', 'precondition')
            : r.id === 'AUTHZ-03'
              ? result('AUTHZ-03', 'error')
              : r,
    )
    const rows = threatTable(results) ?? []
    const status = (section: string) => rows.find((r) => r.section === section)?.status
    expect(status('RFC 9700 §4.8')).toBe('not shown')
    expect(status('RFC 6819 §4.6.3')).toBe('not shown')
    expect(status('RFC 9700 §4.10')).toBe('not shown')
    expect(status('RFC 9700 §4.11')).toBe('not shown')
    expect(rows.some((r) => r.status === 'not mitigated')).toBe(false)
    expect(markdownThreats(rows)).toMatch(
      /RFC 9700 §4\.8 PKCE downgrade \[account takeover\] \| not shown \| .*PKCE-06 FAIL \(refused otherwise, not counted\)/,
    )
    // the same check failing on its own subject opens the threat
    const open = results.map((r) => (r.id === 'PKCE-06' ? result('PKCE-06', 'fail') : r))
    expect(threatTable(open)?.find((r) => r.section === 'RFC 9700 §4.8')?.status).toBe(
      'not mitigated',
    )
  })

  test("a failure on a part of the check's subject that is not the threat's leaves it not shown (issue 29, item 9)", () => {
    // REV-02 judges the revocation answer (INTERFACE.md §4.5) and the revoked token's refusal;
    // only the refusal is refresh-token protection (threats.ts parts)
    const rev02 = (subjects: readonly string[] | undefined): CheckResult[] =>
      all('pass').map((r) =>
        r.id === 'REV-02' ? { ...result('REV-02', 'fail'), ...(subjects ? { subjects } : {}) } : r,
      )
    const status = (results: CheckResult[], section: string) =>
      threatTable(results)?.find((r) => r.section === section)?.status
    const shape = rev02(['the revocation answer'])
    expect(status(shape, 'RFC 9700 §4.14')).toBe('not shown')
    expect(status(shape, 'RFC 6819 §4.1.2')).toBe('not shown')
    expect(markdownThreats(threatTable(shape) ?? [])).toMatch(
      /RFC 9700 §4\.14 Refresh token protection \[token theft\] \| not shown \| .*REV-02 FAIL \(on the revocation answer, not counted\)/,
    )
    // the revoked token still refreshing is the threat
    expect(status(rev02([REVOKED_REFRESH_TOKEN]), 'RFC 9700 §4.14')).toBe('not mitigated')
    expect(status(rev02(['the revocation answer', REVOKED_REFRESH_TOKEN]), 'RFC 6819 §4.1.2')).toBe(
      'not mitigated',
    )
    // a failure that names no part may be about anything: it counts, as before parts
    expect(status(rev02(undefined), 'RFC 9700 §4.14')).toBe('not mitigated')
    expect(status(rev02([WHOLE_SUBJECT, 'the revocation answer']), 'RFC 9700 §4.14')).toBe(
      'not mitigated',
    )
    // a skipped or inconclusive REV-02 was never counted
    const skipped = all('pass').map((r) => (r.id === 'REV-02' ? result('REV-02', 'skip') : r))
    expect(status(skipped, 'RFC 9700 §4.14')).toBe('not shown')
  })

  // blind round 5: RATE-01 failing on the token endpoint alone made the login page's credential
  // guessing NOT MITIGATED, and LOGIN-05's SameSite WARN the Referer leak
  test("the login page's guessing and the Referer leak count only their own parts of RATE-01/03 and LOGIN-05", () => {
    const failing = (id: RequirementId, verdict: Verdict, subjects: readonly string[]) =>
      all('pass').map((r) => (r.id === id ? { ...result(id, verdict), subjects } : r))
    const status = (results: CheckResult[], title: string) =>
      threatTable(results)?.find((r) => r.title === title)?.status
    const guessing = 'Credentials-guessing attacks on the login page'
    const referer = 'Credential leakage via Referer headers'
    expect(status(failing('RATE-01', 'fail', ['token endpoint']), guessing)).not.toBe(
      'not mitigated',
    )
    expect(status(failing('RATE-03', 'fail', ['token endpoint']), guessing)).not.toBe(
      'not mitigated',
    )
    expect(status(failing('RATE-01', 'fail', [LOGIN_FORM]), guessing)).toBe('not mitigated')
    expect(status(failing('RATE-03', 'fail', [LOGIN_FORM]), guessing)).toBe('not mitigated')
    // LOGIN-05 is SHOULD: its WARN counts where it is the threat's (RFC 9700 §4.2.4)
    expect(status(failing('LOGIN-05', 'warn', ['cookies']), referer)).not.toBe('not mitigated')
    expect(status(failing('LOGIN-05', 'warn', [REFERRER_POLICY]), referer)).toBe('not mitigated')
  })

  test('offThreat: a failure is elsewhere only when every part it failed on is another', () => {
    expect(offThreat(['a'], ['b'])).toEqual(['a'])
    expect(offThreat(['a', 'b'], ['b'])).toBeUndefined()
    expect(offThreat([WHOLE_SUBJECT], ['b'])).toBeUndefined()
    expect(offThreat(undefined, ['b'])).toBeUndefined()
    expect(offThreat(['a'], undefined)).toBeUndefined()
    expect(offThreat([], ['b'])).toBeUndefined()
  })

  test("every part a threat names is one a check's expectations can carry", () => {
    for (const t of threats as readonly Threat[])
      if (t.applies === true)
        for (const id of Object.keys(t.parts ?? {})) expect(t.checks).toContain(id)
  })

  test('a run without any profile check has no threat table', () => {
    expect(threatTable([result('DISC-11', 'pass')])).toBeUndefined()
  })

  test('--only security selects the SEC-* checks and every check the table names', () => {
    const selected = selectChecks('security')
    expect(selected).toEqual(expect.arrayContaining(['SEC-01', 'SEC-10', 'TLS-02', 'PKCE-06']))
    expect(selected).not.toContain('DISC-11')
  })
})
