import { describe, expect, test } from 'vitest'
import type { CheckResult, Exchange, Verdict } from '../harness/types.ts'
import { requirementIds, requirements, type RequirementId } from '../requirements.ts'
import { configNames } from './cause-detail.ts'
import { htmlReport, readEvidence, readableText } from './html.ts'
import { buildReport } from './json.ts'

// report.html is read by a person in a browser (report.spec.ts shows it at 1,280 px): here, what
// it holds and in which order, and that a whole run's transcripts keep it small.

const exchange = (id: string, n: number): Exchange => ({
  method: 'POST',
  url: `https://idp.test/auth/token?check=${id}&n=${n}&${'long_parameter=value&'.repeat(8)}`,
  requestHeaders: {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    'user-agent': 'idp-conformance',
  },
  requestBody: `grant_type=authorization_code&code=%5Bredacted%5D&client_id=app-1&client_secret=%5Bredacted%5D&redirect_uri=https%3A%2F%2Fclient.example%2Fcb&code_verifier=%5Bredacted%5D`,
  status: n % 3 ? 200 : 401,
  responseHeaders: {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    date: 'Fri, 27 Nov 2026 03:00:00 GMT',
    'x-request-id': `${id}-${n}`,
  },
  responseBody:
    n % 3
      ? JSON.stringify({
          access_token: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.[signature redacted]',
          token_type: 'Bearer',
          expires_in: 3600,
          scope: 'openid profile email read:documents',
          id_token:
            'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSIsIm5vbmNlIjoiMSJ9.[signature redacted]',
        })
      : '{"error":"invalid_client","error_description":"client authentication failed"}',
  error: undefined,
  durationMs: 12,
})

const result = (id: RequirementId, verdict: Verdict, exchanges = 14): CheckResult => ({
  id,
  ...requirements[id],
  verdict,
  message: verdict === 'pass' ? undefined : 'POST /auth/token answered HTTP 401',
  cause:
    verdict === 'fail' || verdict === 'warn'
      ? 'POST /auth/token answered HTTP 401 error=invalid_client'
      : undefined,
  notes: ['sign-in: through the browser'],
  exchanges: Array.from({ length: exchanges }, (_, n) => exchange(id, n)),
  screenshots: [],
  durationMs: 1200,
})

const report = (results: CheckResult[]) =>
  buildReport({
    results,
    target: { baseUrl: 'https://idp.test', embedded: false },
    version: 'test',
    startedAt: new Date('2026-11-27T03:00:00Z'),
    finishedAt: new Date('2026-11-27T03:03:12Z'),
    passed: false,
  })

const names = configNames({ clients: { main: { id: 'app-1' } }, users: {} })

describe('report.html', () => {
  // a run the size of a full one against a deployment: every check, 14 exchanges each
  const verdicts: Verdict[] = ['pass', 'pass', 'fail', 'pass', 'warn', 'skip', 'error']
  const results = requirementIds.map((id, i) => result(id, verdicts[i % verdicts.length] ?? 'pass'))
  const html = htmlReport(report(results), names)

  test('a full run with its transcripts stays well under 1 MB, every exchange kept', () => {
    expect(results.length).toBeGreaterThan(150)
    const raw = JSON.stringify(results.map((r) => r.exchanges)).length
    expect(raw).toBeGreaterThan(2_000_000)
    expect(Buffer.byteLength(html)).toBeLessThan(500_000)
    const evidence = readEvidence(html)
    // in report order (not passed first), every exchange of every check
    const order = [...html.matchAll(/<details id="check-([^"]+)"[^>]* data-i="(\d+)"/g)]
    expect(order).toHaveLength(results.length)
    for (const [, id, i] of order) {
      const shown = evidence.checks[Number(i)]
      const original = results.find((r) => r.id === id)
      expect(shown?.x.map((x) => x.line)).toEqual(
        original?.exchanges.map((x) => `${x.method} ${x.url} → ${x.status ?? ''}`),
      )
    }
    // the decoded JWTs are there for the reader, signatures still redacted
    expect(readableText(html)).toContain('payload {"sub":"alice","nonce":"1"}')
  })

  test('every check is collapsed; what did not pass comes first, then causes, threats, passes', () => {
    expect(html).not.toMatch(/<details[^>]* open/)
    const at = (marker: string): number => {
      const i = html.indexOf(marker)
      expect(i, marker).toBeGreaterThan(-1)
      return i
    }
    const positions = [
      at('id="summary"'),
      at('<section id="not-passed">'),
      at('<section id="causes">'),
      at('<section id="threats">'),
      at('<section id="passed">'),
    ]
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
    const notPassed = html.slice(at('<section id="not-passed">'), at('<section id="causes">'))
    expect(notPassed).not.toContain('data-verdict="pass"')
    // failures before warnings before skips within the section
    const firstOf = (v: string): number => notPassed.indexOf(`data-verdict="${v}"`)
    expect(firstOf('fail')).toBeLessThan(firstOf('error'))
    expect(firstOf('error')).toBeLessThan(firstOf('warn'))
    expect(firstOf('warn')).toBeLessThan(firstOf('skip'))
  })

  test('a shared cause shows the status, the error body and the setting behind it', () => {
    const causes = html.slice(
      html.indexOf('<section id="causes">'),
      html.indexOf('</section>', html.indexOf('<section id="causes">')),
    )
    expect(causes).toContain('POST /auth/token answered HTTP 401 error=invalid_client')
    expect(causes).toContain(
      'HTTP 401: {&#34;error&#34;:&#34;invalid_client&#34;,&#34;error_description&#34;:&#34;client authentication failed&#34;}',
    )
    expect(causes).toContain('Likely cause: clients.main.secret or clients.main.id')
  })

  test("the run's speed (why check limits were raised) is in report.json and under the time section", () => {
    const speed = {
      rounds: 12,
      roundMs: 4200,
      nominalMs: 2000,
      scale: 2.1,
      scaled: true,
      seed: { ms: 900, from: 'form post' as const },
    }
    const withSpeed = buildReport({
      results: [result('DISC-01', 'pass', 1)],
      target: { baseUrl: 'https://idp.test', embedded: false },
      version: 'test',
      startedAt: new Date('2026-11-27T03:00:00Z'),
      finishedAt: new Date('2026-11-27T03:03:12Z'),
      passed: true,
      speed,
    })
    expect((JSON.parse(JSON.stringify(withSpeed)) as { speed?: unknown }).speed).toEqual(speed)
    const page = htmlReport(withSpeed)
    const time = page.slice(page.indexOf('<section id="timing">'))
    expect(time.slice(0, time.indexOf('</section>'))).toContain(
      '<p id="speed">Speed: one browser round took 4200 ms (median of 12; nominal 2000 ms); before the first, 900 ms from the preflight&#39;s sign-in by form post, a lower bound of a browser round: check limits scaled ×2.1</p>',
    )
    // a run that timed nothing says nothing of its speed
    expect(report([]).speed).toBeUndefined()
    expect(htmlReport(report([]))).not.toContain('id="speed"')
  })

  test('counts are in the right number', () => {
    const one = htmlReport(report([result('DISC-01', 'fail', 1), result('DISC-02', 'fail', 1)]))
    expect(one).toContain('1 HTTP exchange<')
    expect(one).toContain('2 checks (2 FAIL)')
    expect(html).toContain('14 HTTP exchanges<')
  })

  test('the page has no way to run what a report carries: text is escaped, evidence is data', () => {
    const evil = { ...result('DISC-01', 'fail', 1), message: '<img src=x onerror=alert(1)>' }
    const page = htmlReport(report([evil]))
    expect(page).not.toContain('<img src=x')
    expect(page).toContain('&#60;img src=x onerror=alert(1)&#62;')
  })
})
