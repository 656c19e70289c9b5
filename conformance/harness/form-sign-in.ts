import type { BrowserContext } from '@playwright/test'
import { parse, type DefaultTreeAdapterTypes } from 'parse5'
import { CookieJar } from 'tough-cookie'
import type { Http, HttpResponse } from './http.ts'
import { APPROVE_LABEL, CONSENT_WORDS, LOGOUT_LABEL, REFUSE_LABEL } from './interaction-words.ts'
import type { TargetUser } from './target.ts'

type Element = DefaultTreeAdapterTypes.Element
type Node = DefaultTreeAdapterTypes.ChildNode | DefaultTreeAdapterTypes.Document

/** The login form of an HTML page, as a browser would submit it with a user's credentials. */
export interface LoginFormFields {
  /** Where the form posts (absolute). */
  readonly action: string
  /** Its hidden fields (a CSRF token, an interaction id), in document order. */
  readonly hidden: readonly (readonly [string, string])[]
  readonly usernameField: string
  readonly passwordField: string
  /** The submit control's name and value, when it has a name (not the cancel control). */
  readonly submit: readonly (readonly [string, string])[]
}

const attr = (el: Element, name: string): string | undefined =>
  el.attrs.find((a) => a.name === name)?.value

function* elements(node: Node): Generator<Element> {
  for (const child of 'childNodes' in node ? node.childNodes : []) {
    if ('tagName' in child) yield child
    if ('childNodes' in child) yield* elements(child)
  }
  // a <template>'s content is not part of the form a browser submits
}

/**
 * The first form with a password input in `html`, read the way captureLoginForm (LOGIN-03)
 * reads it in the browser: hidden fields, the username input (autocomplete=username, name
 * username or login, or type email), the password input and a named submit control that is
 * not the cancel button. Parsed by parse5 (the WHATWG HTML parsing algorithm), never by
 * pattern. Undefined when the page has no such form, or its fields are not named.
 */
export function readLoginForm(html: string, pageUrl: string): LoginFormFields | undefined {
  const document = parse(html)
  const all = [...elements(document)]
  const base = all.find((e) => e.tagName === 'base' && attr(e, 'href') !== undefined)
  const baseUrl = base ? new URL(attr(base, 'href') ?? '', pageUrl).href : pageUrl
  for (const form of all.filter((e) => e.tagName === 'form')) {
    const inside = [...elements(form)]
    const inputs = inside.filter((e) => e.tagName === 'input')
    const type = (e: Element) => (attr(e, 'type') ?? 'text').toLowerCase()
    const password = inputs.find((e) => type(e) === 'password')
    if (!password) continue
    const username = inputs.find(
      (e) =>
        attr(e, 'autocomplete') === 'username' ||
        attr(e, 'name') === 'username' ||
        attr(e, 'name') === 'login' ||
        type(e) === 'email',
    )
    const submit = inside.find(
      (e) =>
        (e.tagName === 'button' &&
          (attr(e, 'type') ?? 'submit') === 'submit' &&
          attr(e, 'value') !== 'cancel') ||
        (e.tagName === 'input' && type(e) === 'submit'),
    )
    const usernameField = username ? attr(username, 'name') : undefined
    const passwordField = attr(password, 'name')
    if (!usernameField || !passwordField) return undefined
    const submitName = submit ? attr(submit, 'name') : undefined
    return {
      action: new URL(attr(form, 'action') ?? '', baseUrl).href,
      hidden: inputs
        .filter((e) => type(e) === 'hidden' && attr(e, 'name'))
        .map((e) => [attr(e, 'name') ?? '', attr(e, 'value') ?? ''] as const),
      usernameField,
      passwordField,
      submit: submitName ? [[submitName, submit ? (attr(submit, 'value') ?? '') : '']] : [],
    }
  }
  return undefined
}

/** A page's one form that approves or moves on (a consent page's Allow, a "Continue"). */
export interface ApproveForm {
  /** Where the form goes (absolute). */
  readonly action: string
  readonly method: 'GET' | 'POST'
  /** What a browser submits: its hidden and checked fields, then the named submit control. */
  readonly fields: readonly (readonly [string, string])[]
  /** How the page reads to the logs: `continue (built-in: "Continue")`, as the browser's. */
  readonly label: string
}

/** Script types a browser runs; any other type (application/ld+json, a template) is data. */
const RUNNABLE_SCRIPT = /^(|text\/javascript|application\/javascript|module|text\/ecmascript)$/i

/** The text of an element as it reads (whitespace collapsed), without scripts and styles. */
function textOf(el: Element): string {
  const parts: string[] = []
  const walk = (node: Node): void => {
    for (const child of 'childNodes' in node ? node.childNodes : []) {
      if (child.nodeName === '#text' && 'value' in child) parts.push(child.value)
      else if ('tagName' in child && child.tagName !== 'script' && child.tagName !== 'style')
        walk(child)
    }
  }
  walk(el)
  return parts.join(' ').replace(/\s+/g, ' ').trim()
}

/**
 * The server-rendered consent page or "continue" interstitial in `html`, as the browser
 * driver's built-in answer reads it (browser.ts, the same words: interaction-words.ts): the
 * page's only form that asks nothing of the user (hidden fields, checkboxes and radios as
 * served) and whose only submit control approves or moves on ("Allow", "Continue") and never
 * refuses, cancels or signs out. Undefined whenever the page is not such a plain form, so the
 * browser decides: a page that runs scripts (what they do to the form is only known by running
 * them), a refresh, a login form, a logout confirmation (any sign-out control on the page), a
 * form with fields to fill or with more than one submit control, two approving forms, a
 * multipart form. With `onlyControl`, anything else a user could press or choose on the page
 * (a checkbox, a second submit) leaves it to the browser too. Parsed by parse5 (the WHATWG HTML
 * parsing algorithm), never by pattern.
 */
export function readApproveForm(
  html: string,
  pageUrl: string,
  options: {
    /**
     * The page may be one a configured interaction describes (whose steps the replay cannot
     * run): answered only when its one submit is the only thing on the whole page a user
     * could press or choose (no checkbox, radio, field or second submit anywhere), so any
     * steps that answer the page can only press it.
     */
    readonly onlyControl?: boolean
  } = {},
): ApproveForm | undefined {
  const document = parse(html)
  const all = [...elements(document)]
  const type = (e: Element) => (attr(e, 'type') ?? '').toLowerCase()
  if (all.some((e) => e.tagName === 'script' && RUNNABLE_SCRIPT.test(type(e).trim())))
    return undefined
  if (all.some((e) => e.tagName === 'meta' && /refresh/i.test(attr(e, 'http-equiv') ?? '')))
    return undefined
  if (all.some((e) => e.tagName === 'input' && type(e) === 'password')) return undefined
  const isSubmit = (e: Element): boolean =>
    (e.tagName === 'button' && (type(e) || 'submit') === 'submit') ||
    (e.tagName === 'input' && (type(e) === 'submit' || type(e) === 'image'))
  const labelOf = (e: Element): string =>
    e.tagName === 'input'
      ? (attr(e, 'value') ?? attr(e, 'alt') ?? '').replace(/\s+/g, ' ').trim()
      : textOf(e) || (attr(e, 'aria-label') ?? '')
  const shown = (e: Element): boolean =>
    attr(e, 'hidden') === undefined && attr(e, 'disabled') === undefined
  const submits = all.filter((e) => isSubmit(e) && shown(e))
  if (options.onlyControl) {
    const choices = all.filter(
      (e) =>
        e.tagName === 'select' ||
        e.tagName === 'textarea' ||
        (e.tagName === 'input' && !['hidden', 'submit', 'image'].includes(type(e))),
    )
    if (submits.length !== 1 || choices.length > 0) return undefined
  }
  // a page with a sign-out control is a logout confirmation: the built-in answers never press
  if (submits.some((e) => LOGOUT_LABEL.test(labelOf(e)))) return undefined
  const base = all.find((e) => e.tagName === 'base' && attr(e, 'href') !== undefined)
  const baseUrl = base ? new URL(attr(base, 'href') ?? '', pageUrl).href : pageUrl
  const found: ApproveForm[] = []
  for (const form of all.filter((e) => e.tagName === 'form')) {
    const inside = [...elements(form)]
    const id = attr(form, 'id')
    // controls tied to the form by its id (form="…") belong to it wherever they stand
    const own = (e: Element): boolean =>
      attr(e, 'form') === undefined
        ? inside.includes(e)
        : id !== undefined && attr(e, 'form') === id
    const controls = all.filter(
      (e) => ['input', 'button', 'select', 'textarea'].includes(e.tagName) && own(e),
    )
    const buttons = submits.filter(own)
    if (buttons.length !== 1) continue
    const [button] = buttons
    if (!button) continue
    const label = labelOf(button)
    if (!APPROVE_LABEL.test(label) || REFUSE_LABEL.test(label)) continue
    // a field the user would fill (or choose in a list) is no one-button form
    const fills = controls.some(
      (e) =>
        e.tagName === 'select' ||
        e.tagName === 'textarea' ||
        (e.tagName === 'input' &&
          !['hidden', 'checkbox', 'radio', 'submit', 'image', 'button', 'reset'].includes(type(e))),
    )
    if (fills) continue
    const method = (attr(form, 'method') ?? 'get').toLowerCase()
    if (method !== 'get' && method !== 'post') continue
    if (method === 'post' && /multipart/i.test(attr(form, 'enctype') ?? '')) continue
    const fields: (readonly [string, string])[] = []
    for (const e of controls) {
      const name = attr(e, 'name')
      if (!name || e.tagName !== 'input' || attr(e, 'disabled') !== undefined) continue
      if (type(e) === 'hidden') fields.push([name, attr(e, 'value') ?? ''])
      else if ((type(e) === 'checkbox' || type(e) === 'radio') && attr(e, 'checked') !== undefined)
        fields.push([name, attr(e, 'value') ?? 'on'])
    }
    const submitName = attr(button, 'name')
    if (submitName && type(button) !== 'image')
      fields.push([submitName, attr(button, 'value') ?? ''])
    const consent =
      submits.some((e) => REFUSE_LABEL.test(labelOf(e))) ||
      CONSENT_WORDS.test(textOf(all.find((e) => e.tagName === 'body') ?? form))
    const action = attr(button, 'formaction') ?? attr(form, 'action') ?? ''
    found.push({
      action: new URL(action, baseUrl).href,
      method: method === 'post' ? 'POST' : 'GET',
      fields,
      label: `${consent ? 'consent' : 'continue'} (built-in: "${label}")`,
    })
  }
  // two forms that would each approve: which one the page means is not for the replay to guess
  return found.length === 1 ? found[0] : undefined
}

/**
 * The text of the page's first element whose own words match `words` (a login page's error
 * message, as it reads), or undefined when none does. Scripts and styles are not text.
 */
export function textMatching(html: string, words: RegExp): string | undefined {
  const own = (el: Element): string =>
    el.childNodes
      .map((c) => (c.nodeName === '#text' && 'value' in c ? c.value : ''))
      .join(' ')
      .replace(/\s+/g, ' ')
  const found = [...elements(parse(html))].find(
    (e) => e.tagName !== 'script' && e.tagName !== 'style' && words.test(own(e)),
  )
  return found ? textOf(found).slice(0, 200) : undefined
}

/** The page's title as a browser shows it (for messages), or undefined when it has none. */
export function pageTitle(html: string): string | undefined {
  const title = [...elements(parse(html))].find((e) => e.tagName === 'title')
  return title ? textOf(title).slice(0, 120) || undefined : undefined
}

/** How a sign-in by form post ended. */
export type FormSignIn =
  | {
      readonly kind: 'signed-in'
      /** The client URI the IdP redirected to (never fetched). */
      readonly callback: string
      /** Every cookie the IdP set on the way: the new session. */
      readonly jar: CookieJar
    }
  /** Not signed in this way (no plain login form, a refusal, a script-driven step): why. */
  | {
      readonly kind: 'not-signed-in'
      readonly why: string
      /**
       * The IdP's answer to the credential post when it was its login form again (the page a
       * refused password gets; the preflight reads it for an error).
       */
      readonly loginAgain?: HttpResponse | undefined
    }

/**
 * Sends a request to the IdP as a browser would: HTML accepted, the jar's cookies for the URL,
 * and on a POST the IdP's own Origin (a browser submitting a form at the IdP sends it).
 */
export function browserLike(
  http: Http,
  jar: CookieJar,
  idp: string,
): (
  at: string,
  init?: { method?: 'POST'; form?: Record<string, string | readonly string[]> },
) => Promise<HttpResponse> {
  return async (at, init = {}) => {
    const cookie = await jar.getCookieString(at)
    return http.request(at, {
      ...init,
      headers: {
        accept: 'text/html',
        ...(init.method === 'POST' ? { origin: idp } : {}),
        ...(cookie ? { cookie } : {}),
      },
    })
  }
}

/**
 * Signs `user` in without a browser: sends the authorization request, follows the IdP's
 * redirects to its login page, reads the form (readLoginForm), posts the credentials with the
 * cookies the IdP set and the IdP's Origin, as a browser submitting the form would, and follows
 * the redirects until one leaves for a client origin. Every request goes through the check's
 * `http` (recorded in its transcript). For checks whose subject comes after the sign-in (a
 * session to log out, a session identifier to sample), not the login page itself: a login
 * that needs scripts or configured steps does not sign in this way, and the caller then uses
 * the browser.
 */
export async function signInByFormPost(
  http: Http,
  url: string,
  user: TargetUser,
  clientOrigins: readonly string[],
  /** The cookies the browser holds (a session that may still live): sent as it would. */
  jar: CookieJar = new CookieJar(),
): Promise<FormSignIn> {
  const idp = new URL(url).origin
  const send = browserLike(http, jar, idp)
  const isClient = (u: URL): boolean => u.origin !== idp && clientOrigins.includes(u.origin)
  const shown = await followWithJar(http, jar, await send(url), idp, isClient)
  if ('client' in shown)
    return { kind: 'not-signed-in', why: 'the IdP redirected to the client without a login page' }
  const page = shown.stopped
  const form = page.status === 200 ? readLoginForm(page.text, page.url) : undefined
  if (!form)
    return {
      kind: 'not-signed-in',
      why: `the IdP's answer (HTTP ${page.status}) holds no login form with named username and password fields`,
    }
  const posted = await send(form.action, {
    method: 'POST',
    form: {
      ...Object.fromEntries(form.hidden),
      ...Object.fromEntries(form.submit),
      [form.usernameField]: user.username,
      [form.passwordField]: user.password,
    },
  })
  const end = await followWithJar(http, jar, posted, idp, isClient)
  if ('client' in end) return { kind: 'signed-in', callback: end.client.toString(), jar }
  const again = readLoginForm(end.stopped.text, end.stopped.url) ? end.stopped : undefined
  return {
    kind: 'not-signed-in',
    why: `the credential post ended at the IdP (HTTP ${end.stopped.status}${again ? ', its login form again' : ''}) instead of the client`,
    ...(again ? { loginAgain: again } : {}),
  }
}

/**
 * Follows the IdP's redirects from `first` the way a browser would: the Set-Cookie headers of
 * every answer go into `jar` (path and expiry rules included), and each hop at the IdP is sent
 * with the cookies the jar holds for it, until a redirect goes to a client URI (`isClient`:
 * returned, never fetched), leaves the IdP, or an answer is no redirect (returned, as the
 * `stopped` answer); at most 10 hops. `hops` collects every answer after the first.
 */
export async function followWithJar(
  http: Http,
  jar: CookieJar,
  first: HttpResponse,
  /** The IdP's origin, or all of them (idp-origins.ts). */
  idp: string | ReadonlySet<string>,
  isClient: (url: URL) => boolean,
  hops: HttpResponse[] = [],
): Promise<{ readonly client: URL } | { readonly stopped: HttpResponse }> {
  let res = first
  for (let hop = 0; hop < 10; hop++) {
    for (const set of res.headers.getSetCookie())
      await jar.setCookie(set, res.url, { ignoreError: true }).catch(() => undefined)
    const location = res.headers.get('location')
    if (res.status < 300 || res.status >= 400 || !location) return { stopped: res }
    const next = new URL(location, res.url)
    if (isClient(next)) return { client: next }
    if (typeof idp === 'string' ? next.origin !== idp : !idp.has(next.origin))
      return { stopped: res }
    const cookie = await jar.getCookieString(next.toString())
    res = await http.request(next.toString(), {
      headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) },
    })
    hops.push(res)
  }
  return { stopped: res }
}

/** Puts the cookies of `jar` into the browser context: the session is the context's now. */
export async function giveSession(context: BrowserContext, jar: CookieJar): Promise<void> {
  const cookies = (await jar.serialize()).cookies
  await context.addCookies(
    cookies.flatMap((c) => {
      if (typeof c.key !== 'string' || typeof c.domain !== 'string') return []
      const expires = typeof c.expires === 'string' ? Date.parse(c.expires) / 1000 : -1
      // an unset SameSite is Lax to a browser
      const sameSite =
        c.sameSite === 'strict' ? 'Strict' : c.sameSite === 'none' ? 'None' : ('Lax' as const)
      return [
        {
          name: c.key,
          value: typeof c.value === 'string' ? c.value : '',
          // a leading dot makes it a domain cookie to Playwright; without, host-only
          domain: c.hostOnly === false ? `.${c.domain}` : c.domain,
          path: typeof c.path === 'string' ? c.path : '/',
          expires: Number.isFinite(expires) ? expires : -1,
          httpOnly: c.httpOnly === true,
          secure: c.secure === true,
          // Chromium refuses SameSite=None without Secure: such a cookie goes in as Lax
          sameSite: sameSite === 'None' && c.secure !== true ? ('Lax' as const) : sameSite,
        },
      ]
    }),
  )
}
