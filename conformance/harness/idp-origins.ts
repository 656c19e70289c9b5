import type { Target } from './target.ts'

/**
 * The origins that are the IdP's own (issue 29, blind round 4, S1): the authorization endpoint
 * may hand the browser to a login UI on another origin (a separate login app), and nothing in
 * RFC 6749 or OIDC Core puts the login UI on the authorization endpoint's origin (RFC 6749
 * §3.1: "The way in which the authorization server authenticates the resource owner ... is
 * beyond the scope of this specification"). A redirect to one of these origins stays "at the
 * IdP"; a redirect to a client URI is refused before this rule is asked, and any other origin
 * is off the IdP. The origins are:
 * - the base URL's;
 * - those of the endpoints the discovery document advertises (endpoints.ts), once read;
 * - the target's `idpOrigins` (README, target reference);
 * - those the harness's own browser sign-ins went through on their way from the authorization
 *   endpoint to the client with a code (`learnSignInOrigins`), never a client's.
 */

/** Origins learned from successful browser sign-ins, by the target's base URL. */
const learned = new Map<string, Set<string>>()

/** The origin of a URL, or undefined when it is none. */
export const originOf = (url: string): string | undefined => {
  try {
    const origin = new URL(url).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}

/**
 * Records the origins of the main-frame documents a browser sign-in passed through, once it
 * ended at the client with a code (`callback`): the login UI the IdP itself sent the browser
 * to. The client's origins (`clientOrigins`) are never learned.
 */
export function learnSignInOrigins(
  target: Pick<Target, 'baseUrl'>,
  origins: readonly string[],
  callback: string | undefined,
  clientOrigins: readonly string[],
): void {
  if (!callback) return
  let code = false
  try {
    const back = new URL(callback)
    code = back.searchParams.has('code') && !back.searchParams.has('error')
  } catch {
    return
  }
  if (!code) return
  const clients = new Set(clientOrigins)
  let set = learned.get(target.baseUrl)
  for (const origin of origins) {
    if (clients.has(origin) || !/^https?:\/\//.test(origin)) continue
    if (!set) learned.set(target.baseUrl, (set = new Set()))
    set.add(origin)
  }
}

/** Forgets what `learnSignInOrigins` learned for a target (tests). */
export function forgetSignInOrigins(target: Pick<Target, 'baseUrl'>): void {
  learned.delete(target.baseUrl)
}

/** Every origin that is the IdP's own for `target` (see above). */
export function idpOrigins(
  target: Pick<Target, 'baseUrl' | 'idpOrigins' | 'endpoints'>,
): ReadonlySet<string> {
  const origins = new Set<string>()
  const add = (url: string | undefined): void => {
    const origin = url === undefined ? undefined : originOf(url)
    if (origin) origins.add(origin)
  }
  add(target.baseUrl)
  for (const url of Object.values(target.endpoints?.urls ?? {})) add(url)
  for (const url of target.idpOrigins ?? []) add(url)
  for (const origin of learned.get(target.baseUrl) ?? []) origins.add(origin)
  return origins
}

/** Whether `url` is at one of the IdP's origins. */
export const atIdp = (origins: ReadonlySet<string>, url: URL | string): boolean => {
  const origin = typeof url === 'string' ? originOf(url) : url.origin
  return origin !== undefined && origins.has(origin)
}

/** The IdP's origins as a message lists them. */
export const describeOrigins = (origins: ReadonlySet<string>): string => [...origins].join(', ')

/** The origins of the absolute http(s) URIs among a raw query's or form's values. */
export function originsNamed(raw: string): Set<string> {
  const origins = new Set<string>()
  for (const [, value] of new URLSearchParams(raw)) {
    if (!URL.canParse(value)) continue
    const url = new URL(value)
    if (url.protocol === 'https:' || url.protocol === 'http:') origins.add(url.origin)
  }
  return origins
}

/**
 * How a redirect to an origin the suite does not know as the IdP's, and that the request did
 * not name, reads (after "redirected to" / "sent the browser to"): not judged, since what RFC
 * 6749 §4.1.2.1 and §3.1.2.4 forbid is a redirect to the URI the request carried, and the suite
 * cannot tell a login UI or error page of the provider's own on another origin from another
 * site. Before any sign-in of the suite's reached the client (`--no-preflight`), only the base
 * URL, the discovery document and `idpOrigins` name the IdP's origins, so the message says to
 * declare them (`declared`: the target configuration has `idpOrigins`).
 */
export const unknownOrigin = (to: URL, declared: boolean | undefined): string =>
  `${to.origin}${to.pathname}, an origin neither known as the IdP's nor named by the request: the suite cannot tell whether it is the IdP's own page (a login UI on an origin of its own is ${declared ? 'added to' : 'declared with'} idpOrigins in the target configuration)`
