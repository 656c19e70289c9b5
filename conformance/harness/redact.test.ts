import fc from 'fast-check'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { reportFiles, terminalOutput } from '../report/all-formats.ts'
import { readableText } from '../report/html.ts'
import { requirements, type RequirementId } from '../requirements.ts'
import { createHttp } from './http.ts'
import {
  MAX_RECORDED_BODY,
  redactBody,
  redactHeaders,
  redactResult,
  redactText,
  redactUrl,
  rememberIssued,
  rememberSecret,
} from './redact.ts'
import type { CheckResult, Exchange } from './types.ts'

// Reports are CI artifacts: no secret, password, code or token may survive into any format.

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60)

/** Every way a report may spell a string: raw, JSON-escaped, HTML-escaped, URL-encoded. */
const spellings = (s: string): string[] => [
  s,
  JSON.stringify(s).slice(1, -1),
  s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`),
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
  encodeURIComponent(s),
]

function expectAbsent(outputs: Record<string, string>, secret: string, where: string): void {
  for (const [format, text] of Object.entries(outputs))
    for (const spelling of spellings(secret))
      expect(text.includes(spelling), `${where}: secret found in ${format}`).toBe(false)
}

const ID = 'TOK-01' as RequirementId
const resultWith = (exchanges: readonly Exchange[], message?: string, notes: string[] = []) =>
  redactResult({
    id: ID,
    ...requirements[ID],
    verdict: 'fail',
    message,
    notes,
    exchanges,
    screenshots: [{ name: message ?? 'page', png: '' }],
    durationMs: 1,
  } satisfies CheckResult)

const reports = (result: CheckResult): Record<string, string> => {
  const files = reportFiles([result], {
    target: { baseUrl: 'https://idp.test', embedded: false },
    version: 'test',
    startedAt: new Date(),
    finishedAt: new Date(),
    verdict: {
      passed: false,
      problems: [`${result.id}: ${result.message ?? ''}`],
      excused: [],
      unused: [],
    },
  })
  // report.html's transcripts are compressed: read as its reader sees them, opened
  return {
    terminal: terminalOutput([result]),
    ...files,
    'report.html': readableText(files['report.html']),
  }
}

/** Secrets as real deployments make them: long, from a token alphabet or any printable ASCII. */
const secretArb = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{16,64}$/),
  fc
    .string({
      unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
      minLength: 12,
      maxLength: 40,
    })
    // a run of the alphabet long enough that it cannot be part of the surrounding markup
    .filter((s) => /[A-Za-z0-9]{4}/.test(s)),
)
const fieldArb = fc.constantFrom(
  'client_secret',
  'password',
  'code_verifier',
  'refresh_token',
  'access_token',
  'token',
  'code',
  'csrf',
)

describe('transcripts: secrets never reach a report', () => {
  let server: Server
  let base: string
  /** What the next response of the test server is. */
  let answer: { type: string; body: string; headers?: Record<string, string>; status?: number }

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeHead(answer.status ?? 200, { 'content-type': answer.type, ...answer.headers })
        res.end(answer.body)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
  })

  const ok = { type: 'text/plain', body: 'ok' }

  test('a secret field in a form body, at any position and size, is redacted before truncation', async () => {
    await fc.assert(
      fc.asyncProperty(
        secretArb,
        fieldArb,
        fc.integer({ min: 0, max: 2 * MAX_RECORDED_BODY }),
        async (secret, field, padding) => {
          answer = ok
          const http = createHttp({ baseUrl: base, ca: undefined })
          await http.postForm('/token', { padding: 'x'.repeat(padding), [field]: secret })
          expectAbsent(reports(resultWith(http.exchanges)), secret, `form ${field}`)
        },
      ),
      { numRuns: RUNS },
    )
  })

  test('a secret field in a multipart body is redacted whole', async () => {
    await fc.assert(
      fc.asyncProperty(secretArb, fieldArb, async (secret, field) => {
        answer = ok
        const http = createHttp({ baseUrl: base, ca: undefined })
        const boundary = '----idp-conformance-boundary'
        const body = [
          `--${boundary}`,
          'Content-Disposition: form-data; name="grant_type"',
          '',
          'client_credentials',
          `--${boundary}`,
          `Content-Disposition: form-data; name="${field}"`,
          '',
          secret,
          `--${boundary}--`,
          '',
        ].join('\r\n')
        await http.request('/token', {
          method: 'POST',
          body,
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        })
        expectAbsent(reports(resultWith(http.exchanges)), secret, `multipart ${field}`)
      }),
      { numRuns: RUNS },
    )
  })

  test('tokens handed out in JSON, HTML, redirects and cookies are redacted, then and later', async () => {
    await fc.assert(
      fc.asyncProperty(
        secretArb,
        fc.constantFrom('json', 'json-truncated', 'html-input', 'fragment', 'query', 'cookie'),
        async (secret, shape) => {
          const http = createHttp({ baseUrl: base, ca: undefined })
          const html = secret
            .replace(/&/g, '&amp;')
            .replace(/"/g, '&quot;')
            .replace(/</g, '&lt;')
            .replace(/>/g, '&gt;')
          answer = {
            json: { type: 'application/json', body: JSON.stringify({ access_token: secret }) },
            'json-truncated': {
              type: 'text/html',
              body: `<pre>{"refresh_token": ${JSON.stringify(secret)}, "tail": "${'y'.repeat(100)}`,
            },
            'html-input': {
              type: 'text/html',
              body: `<form><input type="hidden" name="csrf" value="${html}"></form>`,
            },
            fragment: {
              type: 'text/plain',
              body: '',
              status: 302,
              headers: {
                location: `https://client.example/cb#access_token=${encodeURIComponent(secret)}&state=s`,
              },
            },
            query: {
              type: 'text/plain',
              body: '',
              status: 303,
              headers: {
                location: `https://client.example/cb?code=${encodeURIComponent(secret)}&state=s`,
              },
            },
            cookie: {
              type: 'text/plain',
              body: '',
              headers: { 'set-cookie': `__Host-session=${encodeURIComponent(secret)}; Path=/` },
            },
          }[shape]
          await http.get('/issue')
          // the handed-out value travels on: a later request sends it in the clear
          answer = { type: 'text/plain', body: `echo ${secret}` }
          await http.request('/echo', {
            method: 'POST',
            body: `presented ${secret} here`,
            headers: { 'content-type': 'text/plain' },
          })
          const result = resultWith(http.exchanges, `got ${secret} back`)
          // a cookie is not a handed-out token: only its header is redacted by field
          if (shape === 'cookie')
            expectAbsent(reports(resultWith(http.exchanges.slice(0, 1))), secret, shape)
          else expectAbsent(reports(result), secret, shape)
        },
      ),
      { numRuns: RUNS },
    )
  })

  test('a secret of the configuration is redacted from any text: bodies, messages, notes', async () => {
    await fc.assert(
      fc.asyncProperty(
        secretArb,
        fc.constantFrom('text/html', 'text/plain', 'application/json', 'application/xml'),
        async (secret, type) => {
          rememberSecret(secret)
          answer = { type, body: `<p>the client secret is ${secret}</p>` }
          const http = createHttp({ baseUrl: base, ca: undefined })
          await http.request('/page', {
            method: 'POST',
            body: JSON.stringify({ note: `x${secret}y` }),
            headers: { 'content-type': 'application/json', 'x-debug': secret },
          })
          const result = resultWith(http.exchanges, `expected 401, ${secret}`, [
            `note with ${secret}`,
          ])
          expectAbsent(reports(result), secret, type)
        },
      ),
      { numRuns: RUNS },
    )
  })
})

describe('redaction rules', () => {
  test("an issued token's prefix is redacted, a configured secret's and a JWT header's are not", () => {
    // blind round 5 F7: "not a JWT: gbK3CfcShSAEap48vKTh…" showed an opaque token's first 20
    const opaque = 'gbK3CfcShSAEap48vKThQz7Lw0pXy2MnBv5RtUe1'
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwcmVmaXgifQ.c2lnbmF0dXJlLXByZWZpeA'
    rememberIssued({ access_token: opaque, id_token: jwt })
    rememberSecret('prefix-client-secret-value')
    const said = redactText(`not a JWT: ${opaque.slice(0, 20)}… and ${opaque.slice(0, 12)}`)
    expect(said).toBe('not a JWT: [redacted]… and [redacted]')
    // fewer characters than a secret's start may share with other text stay
    expect(redactText(`short ${opaque.slice(0, 11)}!`)).toBe(`short ${opaque.slice(0, 11)}!`)
    // a configured secret's start may be a client id's: only whole secrets are replaced
    expect(redactText('client prefix-client-secret')).toBe('client prefix-client-secret')
    // an issued value's start inside another value is that value's, not the token's: the
    // self-test's branding record handed out "conformance-secret" and the message naming
    // "conformance-client" read "[redacted]client"
    rememberIssued({ client_secret: 'conformance-secret-handed-out' })
    expect(redactText('branding of conformance-client: carries it')).toBe(
      'branding of conformance-client: carries it',
    )
    // another JWT of the target shares the header: kept
    const other = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJvdGhlciJ9.b3RoZXItc2lnbmF0dXJl'
    expect(redactText(other)).toBe('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJvdGhlciJ9.[signature redacted]')
  })

  test('form values are replaced whole, no prefix kept', () => {
    const out = redactBody(
      'client_id=app&client_secret=s3cr3t-value&scope=openid',
      'application/x-www-form-urlencoded',
    )
    expect(out).toContain('client_id=app')
    expect(out).toContain('scope=openid')
    expect(out).not.toContain('s3cr')
  })

  test('JWTs keep header and payload, lose the signature', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz'
    expect(redactText(`Bearer ${jwt} seen`)).toBe(
      'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.[signature redacted] seen',
    )
    expect(
      JSON.parse(redactBody(JSON.stringify({ id_token: jwt }), 'application/json') ?? ''),
    ).toEqual({
      id_token: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.[signature redacted]',
    })
  })

  test('URL fragments and queries are redacted by field, other parameters kept', () => {
    const out = redactUrl(
      'https://c.example/cb?code=abcdefgh&state=xyz#access_token=tok123456&token_type=Bearer',
    )
    expect(out).toContain('state=xyz')
    expect(out).toContain('token_type=Bearer')
    expect(out).not.toContain('abcdefgh')
    expect(out).not.toContain('tok123456')
  })

  // blind round 6d (S5): a script page's route was printed #%2Flogin%3Fuid=…, which does not
  // open the same route
  test("a fragment is printed as the page had it (a script page's route), its secret fields redacted", () => {
    expect(redactUrl('https://idp.example/signin#/login?uid=Ab3_x-Y')).toBe(
      'https://idp.example/signin#/login?uid=Ab3_x-Y',
    )
    const out = redactUrl('https://c.example/cb#/done?state=s1&code=abcdefgh&x=a%2Fb')
    expect(out).toMatch(/^https:\/\/c\.example\/cb#\/done\?state=s1&code=[^&]+&x=a%2Fb$/)
    expect(out).not.toContain('abcdefgh')
  })

  test('headers: credentials and cookie values go, cookie attributes stay', () => {
    const out = redactHeaders({
      Authorization: 'Basic Y2xpZW50OnNlY3JldA==',
      'set-cookie': '__Host-sid=abcdef123456; Path=/; Max-Age=60; Secure; HttpOnly; SameSite=Lax',
      location: 'https://c.example/cb?code=abcdefgh',
      'content-type': 'application/json',
    })
    expect(out).toEqual({
      Authorization: 'Basic [redacted]',
      'set-cookie': '__Host-sid=[redacted]; Path=/; Max-Age=60; Secure; HttpOnly; SameSite=Lax',
      location: 'https://c.example/cb?code=%5Bredacted%5D',
      'content-type': 'application/json',
    })
  })

  test('a body is redacted before it is cut: a secret across the cut leaves no prefix', () => {
    const secret = 'Z'.repeat(40)
    const body = `${'a'.repeat(MAX_RECORDED_BODY - 10)}&client_secret=${secret}`
    const out = redactBody(body, 'application/x-www-form-urlencoded') ?? ''
    expect(out.endsWith('…[truncated]')).toBe(true)
    expect(out).not.toContain('ZZZZ')
  })

  test('text that names no secret is left alone', () => {
    const text = '<p>HTTP status code: 400, error=invalid_grant, code_challenge=abc</p>'
    expect(redactText(text)).toBe(text)
  })
})
