import type { BrowserContext, Request, Response } from '@playwright/test'
import type { CheckContext } from './check.ts'
import type { HttpResponse } from './http.ts'
import { atIdp, idpOrigins } from './idp-origins.ts'
import { authorize } from './flows.ts'
import type { TargetUser } from './target.ts'

// A sign-in that takes several requests (an identifier-first login: the user name, then the
// password page; a script's JSON sign-in followed by a one-time code; a sign-in whose answer
// is a page that posts on): every POST the browser sends to the IdP's origins during one
// successful sign-in, from the login page to the redirect back to the client, is recorded in
// order, twice (two sign-ins in fresh browsers), so that the replay (credential-replay.ts) can
// send the same sequence with the raw client. What stays the same in both recordings is sent
// as recorded; the user's credentials are the replayed user's; a value that changed between
// the two (a state token, an interaction id, an anti-CSRF token) is taken from the replay's own
// earlier answers, where the recordings show the IdP handed it out. A changed value the
// recordings cannot place in an earlier answer (a one-time code the user typed, a value a
// script made up) leaves its hop unbuildable: the replay stops there, inconclusive, saying why.

/** One POST of the recorded sign-in, as the browser sent it. */
export interface RecordedHop {
  readonly url: string
  readonly method: string
  /** The page's own request headers (an anti-CSRF header, the content type). */
  readonly headers: Readonly<Record<string, string>>
  readonly encoding: 'form' | 'json'
  /**
   * The body's members (first level of a JSON object), as sent: a form's as strings, a JSON
   * object's with their JSON types (a `"remember": true` stays a boolean).
   */
  readonly members: Readonly<Record<string, unknown>>
  /** Whether the browser sent it as a navigation (a form post) or a script's call. */
  readonly navigation: boolean
  /** How many answers of the IdP the browser had received before it was sent. */
  readonly before: number
}

/** One recorded sign-in: its POSTs and every answer of the IdP (answerText) in order. */
export interface Recording {
  readonly hops: readonly RecordedHop[]
  readonly answers: readonly string[]
}

/**
 * Where a slot's value comes from in the replay. A body member's constant (`V` unknown) keeps
 * the type it was sent with; the other parts of a request are strings.
 */
export type Source<V = string> =
  | { readonly kind: 'constant'; readonly value: V }
  | { readonly kind: 'username' | 'password' }
  /**
   * Found in an earlier answer right after `context`; read as a run of `chars`. `json`: the
   * member was sent as a JSON value that is not a string (a number), and is sent as one again.
   */
  | {
      readonly kind: 'carried'
      readonly context: string
      readonly chars: string
      readonly json?: boolean
    }
  | { readonly kind: 'unresolved'; readonly why: string }

/** A hop of the plan: each part of the request (URL path segment, query, member, header). */
export interface PlannedHop {
  readonly method: string
  readonly origin: string
  readonly path: readonly Source[]
  readonly query: readonly (readonly [string, Source])[]
  readonly members: readonly (readonly [string, Source<unknown>])[]
  readonly headers: readonly (readonly [string, Source])[]
  readonly encoding: 'form' | 'json'
  readonly navigation: boolean
  /** How the hop reads in messages: `hop 2 of 3 (POST /login/password)`. */
  readonly name: string
}

export interface HopPlan {
  readonly hops: readonly PlannedHop[]
  /** The hop that carries the password (the credential request). */
  readonly credential: number
  /** The hop that carries the user name (the credential hop or an earlier one), if any. */
  readonly identifier: number | undefined
}

/** The most POSTs a recorded sign-in may take (a provider that keeps asking is not replayed). */
export const MAX_HOPS = 6

/** How long one recorded answer's body may take to be read. */
const BODY_MS = 5000

/** Request headers that are the browser's, not the page's (credential-replay.ts's list). */
export const BROWSER_HEADERS =
  /^(cookie|origin|referer|host|content-length|connection|user-agent|accept-(encoding|language)|sec-.*|upgrade-insecure-requests|cache-control|pragma|priority)$/i

/** An answer as the carry-over searches it: status, address, Location, then the body. */
const answerText = (status: number, url: string, location: string | null, body: string): string =>
  `HTTP ${status} ${url}\nlocation: ${location ?? ''}\n\n${body}`

/** A raw-client answer as the carry-over searches it. */
export const httpAnswer = (res: HttpResponse): string =>
  answerText(res.status, res.url, res.headers.get('location'), res.text)

/**
 * A browser's answer as the carry-over searches it; its body unread after BODY_MS. Never
 * rejects (an unreadable body is read as empty).
 */
export async function browserAnswer(res: Response): Promise<string> {
  const redirect = res.status() >= 300 && res.status() < 400
  let timer: NodeJS.Timeout | undefined
  const body = redirect
    ? ''
    : await Promise.race([
        res.text().catch(() => ''),
        new Promise<string>((resolve) => (timer = setTimeout(() => resolve(''), BODY_MS))),
      ]).finally(() => clearTimeout(timer))
  return answerText(res.status(), res.url(), res.headers()['location'] ?? null, body)
}

/** Whether a browser response is an answer the carry-over reads (a page or a script's data). */
export const isAnswer = (res: Response, origins: ReadonlySet<string>): boolean =>
  ['document', 'xhr', 'fetch'].includes(res.request().resourceType()) && atIdp(origins, res.url())

/** A request body's members: a URL-encoded form's, or a JSON object's first level. */
export interface BodyMembers {
  readonly encoding: 'form' | 'json'
  /** As sent: a form's values are strings, a JSON object's keep their JSON types. */
  readonly members: Record<string, unknown>
}

/**
 * The members of a request's body (the recorded sign-in's POSTs, the captured credential
 * request), when it is a URL-encoded form or a JSON object; undefined for any other body.
 */
export function bodyMembers(contentType: string, body: string): BodyMembers | undefined {
  const type = contentType.toLowerCase()
  if (type.startsWith('application/x-www-form-urlencoded'))
    return { encoding: 'form', members: Object.fromEntries(new URLSearchParams(body)) }
  if (/^application\/([\w.+-]+\+)?json\b/.test(type)) {
    try {
      const json: unknown = JSON.parse(body)
      if (json && typeof json === 'object' && !Array.isArray(json))
        return { encoding: 'json', members: { ...(json as Record<string, unknown>) } }
    } catch {
      return undefined
    }
  }
  return undefined
}

/** A member's value as text, for comparing and searching (a JSON value in its JSON form). */
const memberText = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)

/** A request the browser sent, as a recorded hop; an Error when its body cannot be replayed. */
function hopOf(req: Request, before: number): RecordedHop | Error {
  const headers = req.headers()
  const body = bodyMembers(headers['content-type'] ?? '', req.postData() ?? '')
  const where = `POST ${new URL(req.url()).pathname}`
  if (!body)
    return new Error(
      `${where}: its body is neither a URL-encoded form nor a JSON object (${headers['content-type'] ?? 'no content type'})`,
    )
  return {
    url: req.url(),
    method: req.method(),
    headers: Object.fromEntries(
      Object.entries(headers).filter(([n]) => !BROWSER_HEADERS.test(n) && !n.startsWith(':')),
    ),
    encoding: body.encoding,
    members: body.members,
    navigation: req.isNavigationRequest(),
    before,
  }
}

/**
 * Signs `user` in once in a fresh browser (the authorization request of `authorize`, every
 * page answered as a sign-in would) and records every POST to the IdP's origins and every
 * answer of the IdP on the way. Throws an Error when the sign-in did not reach the client with
 * a code, or a POST's body is neither a form nor JSON.
 */
export async function recordSignIn(ctx: CheckContext, user: TargetUser): Promise<Recording> {
  const context: BrowserContext = await ctx.newBrowserContext()
  const origins = idpOrigins(ctx.target)
  const answers: Promise<string>[] = []
  const hops: (RecordedHop | Error)[] = []
  const onResponse = (res: Response): void => {
    if (isAnswer(res, origins)) answers.push(browserAnswer(res))
  }
  const onRequest = (req: Request): void => {
    if (req.method() === 'POST' && atIdp(origins, req.url())) hops.push(hopOf(req, answers.length))
  }
  context.on('response', onResponse)
  context.on('request', onRequest)
  let callback: URL | undefined
  try {
    callback = (await authorize(ctx, { context, user })).callback
  } finally {
    context.off('response', onResponse)
    context.off('request', onRequest)
    // the answers' reads are awaited on every path, a sign-in that threw too (each bounded)
    await Promise.all(answers)
  }
  const texts = await Promise.all(answers)
  if (!callback?.searchParams.get('code'))
    throw new Error("the browser's own sign-in, recorded to be replayed, did not reach the client")
  const failed = hops.find((h): h is Error => h instanceof Error)
  if (failed) throw failed
  if (hops.length === 0) throw new Error("the browser's own sign-in sent no POST to the IdP")
  if (hops.length > MAX_HOPS)
    throw new Error(
      `the browser's own sign-in took ${hops.length} POSTs (at most ${MAX_HOPS} are replayed)`,
    )
  return { hops: hops as RecordedHop[], answers: texts }
}

/** The characters a carried value is read as: letters and digits, and those of the values. */
function charsOf(...values: string[]): string {
  const extra = new Set(values.join('').match(/[-_.~+/=%:]/g) ?? [])
  return [...extra].join('')
}

const tokenRun = (chars: string): RegExp =>
  new RegExp(`^[A-Za-z0-9${chars.replace(/[-\\\]^/]/g, (c) => `\\${c}`)}]+`)

/**
 * The values following `context` in `answers` (latest answer holding it first), each read as
 * a run of `chars`: one answer's distinct values, or none.
 */
function valuesAfter(answers: readonly string[], context: string, chars: string): string[] {
  const run = tokenRun(chars)
  for (const text of [...answers].reverse()) {
    const found = new Set<string>()
    for (let at = text.indexOf(context); at >= 0; at = text.indexOf(context, at + 1)) {
      const value = run.exec(text.slice(at + context.length))?.[0]
      if (value) found.add(value)
    }
    if (found.size > 0) return [...found]
  }
  return []
}

/**
 * Where a value that changed between the recordings was handed out: the text right before it
 * in an earlier answer of the first recording that finds, in both recordings, exactly the
 * value each of them sent (the longest such context of 32, 24, 16 or 8 characters).
 */
function locate(
  one: { value: string; answers: readonly string[] },
  two: { value: string; answers: readonly string[] },
): Source {
  const chars = charsOf(one.value, two.value)
  if (!tokenRun(chars).test(one.value) || tokenRun(chars).exec(one.value)?.[0] !== one.value)
    return { kind: 'unresolved', why: 'its value is not a token the replay can read' }
  for (const text of [...one.answers].reverse())
    for (let at = text.indexOf(one.value); at >= 0; at = text.indexOf(one.value, at + 1))
      for (const length of [32, 24, 16, 8]) {
        const context =
          text
            .slice(Math.max(0, at - length), at)
            .split('\n')
            .at(-1) ?? ''
        if (context.length < 4) continue
        const a = valuesAfter(one.answers, context, chars)
        const b = valuesAfter(two.answers, context, chars)
        if (a.length === 1 && a[0] === one.value && b.length === 1 && b[0] === two.value)
          return { kind: 'carried', context, chars }
      }
  return {
    kind: 'unresolved',
    why: 'it changed between two recorded sign-ins and no earlier answer of the IdP holds it (a one-time code typed in, a value a script made up?)',
  }
}

/** How one part of a hop is sent, from its values in the two recordings. */
function sourceOf(
  a: string,
  b: string,
  user: TargetUser,
  answers: readonly [readonly string[], readonly string[]],
): Source {
  if (a === user.username && b === user.username) return { kind: 'username' }
  if (a === user.password && b === user.password) return { kind: 'password' }
  if (a === b) return { kind: 'constant', value: a }
  return locate({ value: a, answers: answers[0] }, { value: b, answers: answers[1] })
}

/**
 * How a body member is sent, from its values in the two recordings: compared as text
 * (sourceOf), a constant sent with the type it was recorded with, a carried value that was
 * sent as a JSON number (or other non-string) sent as one again.
 */
function memberSourceOf(
  a: unknown,
  b: unknown,
  user: TargetUser,
  answers: readonly [readonly string[], readonly string[]],
): Source<unknown> {
  const source = sourceOf(memberText(a), memberText(b), user, answers)
  if (source.kind === 'constant') return { kind: 'constant', value: a }
  if (source.kind === 'carried' && typeof a !== 'string') return { ...source, json: true }
  return source
}

/**
 * The plan of a sign-in's replay from two recordings of it (by `user`): each hop's parts and
 * where their values come from. Throws an Error when the two differ in shape (a different
 * number of POSTs, other addresses or members) or no POST carries the password.
 */
export function planHops(one: Recording, two: Recording, user: TargetUser): HopPlan {
  if (one.hops.length !== two.hops.length)
    throw new Error(
      `two recorded sign-ins took ${one.hops.length} and ${two.hops.length} POSTs: no sequence to replay`,
    )
  const hops = one.hops.map((a, i): PlannedHop => {
    const b = two.hops[i] as RecordedHop
    const [ua, ub] = [new URL(a.url), new URL(b.url)]
    const name = `hop ${i + 1} of ${one.hops.length} (${a.method} ${ua.pathname})`
    const segments = [ua.pathname.split('/'), ub.pathname.split('/')] as const
    const same = (x: readonly string[], y: readonly string[]) =>
      x.length === y.length && x.every((k, at) => k === y[at])
    const queryNames = [[...ua.searchParams.keys()], [...ub.searchParams.keys()]] as const
    if (
      a.method !== b.method ||
      ua.origin !== ub.origin ||
      segments[0].length !== segments[1].length ||
      !same(queryNames[0], queryNames[1]) ||
      !same(Object.keys(a.members).sort(), Object.keys(b.members).sort()) ||
      !same(Object.keys(a.headers).sort(), Object.keys(b.headers).sort()) ||
      a.encoding !== b.encoding
    )
      throw new Error(
        `${name}: the two recorded sign-ins sent it differently: no sequence to replay`,
      )
    const answers = [one.answers.slice(0, a.before), two.answers.slice(0, b.before)] as const
    const src = (x: string, y: string) => sourceOf(x, y, user, answers)
    return {
      method: a.method,
      origin: ua.origin,
      path: segments[0].map((s, at) => src(s, segments[1][at] ?? '')),
      query: [...ua.searchParams].map(([k, v], at) => [
        k,
        src(v, [...ub.searchParams][at]?.[1] ?? ''),
      ]),
      members: Object.entries(a.members).map(([k, v]) => [
        k,
        memberSourceOf(v, b.members[k], user, answers),
      ]),
      headers: Object.entries(a.headers).map(([k, v]) => [k, src(v, b.headers[k] ?? '')]),
      encoding: a.encoding,
      navigation: a.navigation,
      name,
    }
  })
  const carries = (kind: 'username' | 'password') =>
    hops.findIndex((h) => h.members.some(([, s]) => s.kind === kind))
  const credential = carries('password')
  if (credential < 0) throw new Error('no POST of the recorded sign-in carries the password')
  const identifier = carries('username')
  return { hops, credential, identifier: identifier < 0 ? undefined : identifier }
}

/** A hop ready to send: its URL, the members besides the credentials, and its headers. */
export interface BuiltHop {
  readonly url: string
  /** With the types they were recorded with (a JSON body's numbers and booleans stay so). */
  readonly members: Record<string, unknown>
  readonly headers: Record<string, string>
  /** The names of the members that carry the user name and the password, if it does. */
  readonly usernameField: string | undefined
  readonly passwordField: string | undefined
}

/**
 * Builds `hop` from the replay's own answers so far (httpAnswer, browserAnswer): every carried
 * value read where the recordings show the IdP handed it out. Returns why not, naming the part,
 * when a value is unresolved or is not (or not once) in the replay's answers.
 */
export function buildHop(hop: PlannedHop, answers: readonly string[]): BuiltHop | string {
  const problems: string[] = []
  const value = (part: string, source: Source): string => {
    if (source.kind === 'constant') return source.value
    if (source.kind === 'unresolved') {
      problems.push(`${part}: ${source.why}`)
      return ''
    }
    if (source.kind !== 'carried') return ''
    const found = valuesAfter(answers, source.context, source.chars)
    if (found.length !== 1)
      problems.push(
        `${part}: ${found.length === 0 ? 'no answer of the IdP in this replay holds it where the recorded ones did' : `the replay's answers hold ${found.length} different values where the recorded ones held one`}`,
      )
    return found[0] ?? ''
  }
  // a member: a constant with its recorded type, a carried number read back as one
  const member = (part: string, source: Source<unknown>): unknown => {
    if (source.kind === 'constant') return source.value
    const before = problems.length
    const text = value(part, source)
    if (source.kind !== 'carried' || !source.json || problems.length > before) return text
    try {
      return JSON.parse(text) as unknown
    } catch {
      problems.push(
        `${part}: it was sent as a JSON value that is not a string, and what the replay's answers hold where the recorded ones held it is not JSON`,
      )
      return text
    }
  }
  const path = hop.path.map((s, at) => value(`path segment ${at}`, s)).join('/')
  const url = new URL(`${hop.origin}${path}`)
  for (const [k, s] of hop.query) url.searchParams.append(k, value(`query parameter "${k}"`, s))
  const members: Record<string, unknown> = {}
  let usernameField: string | undefined
  let passwordField: string | undefined
  for (const [k, s] of hop.members) {
    if (s.kind === 'username') usernameField = k
    else if (s.kind === 'password') passwordField = k
    else members[k] = member(`member "${k}"`, s)
  }
  const headers = Object.fromEntries(
    hop.headers.map(([k, s]) => [k, value(`header ${k}`, s)] as const),
  )
  if (problems.length > 0) return `${hop.name} cannot be built: ${problems.join('; ')}`
  return { url: url.toString(), members, headers, usernameField, passwordField }
}

/** The body of a built hop with `user`'s credentials in their members. */
export function hopBody(
  hop: Pick<PlannedHop, 'encoding'>,
  members: Readonly<Record<string, unknown>>,
): string {
  return hop.encoding === 'json'
    ? JSON.stringify(members)
    : new URLSearchParams(
        Object.entries(members).map(([k, v]): [string, string] => [k, String(v)]),
      ).toString()
}

const plans = new WeakMap<CheckContext, Promise<HopPlan>>()

/**
 * The check's plan of its sign-in's replay: two sign-ins of the primary user recorded in
 * fresh browsers (once per check) and compared. Rejects with why no plan was made.
 */
export function plannedSignIn(ctx: CheckContext): Promise<HopPlan> {
  let plan = plans.get(ctx)
  if (!plan) {
    const user = ctx.target.users.primary
    plan = (async () => {
      const one = await recordSignIn(ctx, user)
      const two = await recordSignIn(ctx, user)
      return planHops(one, two, user)
    })()
    plans.set(ctx, plan)
  }
  return plan
}
