import { createHttp } from './http.ts'
import type { Target } from './target.ts'

/**
 * Where the harness sends each endpoint's requests: the URL the target's discovery document
 * advertises (OIDC Discovery §3, RFC 8414 §2), read once per run, so that a deployment that
 * mounts an endpoint elsewhere fails DISC-03 (which alone judges the paths against INTERFACE.md
 * §2.7) and is still measured on everything else. The interface's paths (INTERFACE.md §1) are
 * the fallback, said in a note of every check that used one.
 */

export const DISCOVERY = '/.well-known/openid-configuration'

/** The discovery documents' endpoint members and the paths INTERFACE.md §1 gives them. */
export const DISCOVERY_ENDPOINTS = {
  authorization_endpoint: '/auth/authorize',
  token_endpoint: '/auth/token',
  userinfo_endpoint: '/auth/user-info',
  jwks_uri: '/.well-known/jwks.json',
  end_session_endpoint: '/auth/logout',
  introspection_endpoint: '/auth/introspect',
  revocation_endpoint: '/auth/revoke',
} as const

export type EndpointName = keyof typeof DISCOVERY_ENDPOINTS

/** The endpoints of one target, as its discovery document gave them. */
export interface Endpoints {
  readonly urls: Readonly<Record<EndpointName, string>>
  /** The endpoints at the interface's path instead, and why (discovery unreachable, no member). */
  readonly fallbacks: Readonly<Partial<Record<EndpointName, string>>>
}

/** How long reading the discovery document may take before the interface's paths are used. */
export const DISCOVERY_TIMEOUT_MS = 10_000

const NAMES = Object.keys(DISCOVERY_ENDPOINTS) as EndpointName[]

/** The interface's path of an endpoint on the target (INTERFACE.md §1). */
const atInterfacePath = (target: Pick<Target, 'baseUrl'>, name: EndpointName): string =>
  target.baseUrl + DISCOVERY_ENDPOINTS[name]

/** The URL of an endpoint: the advertised one when the run read it, else the interface's path. */
export function endpointUrl(
  target: Pick<Target, 'baseUrl'> & { readonly endpoints?: Endpoints | undefined },
  name: EndpointName,
): string {
  return target.endpoints?.urls[name] ?? atInterfacePath(target, name)
}

/**
 * How messages and notes name an endpoint: the path of the URL its requests went to (the origin
 * too when that is not the target's), so a provider that mounts it elsewhere than the interface
 * reads its own path in the report.
 */
export function endpointLabel(
  target: Pick<Target, 'baseUrl'> & { readonly endpoints?: Endpoints | undefined },
  name: EndpointName,
): string {
  const url = new URL(endpointUrl(target, name))
  return url.origin === new URL(target.baseUrl).origin
    ? url.pathname
    : `${url.origin}${url.pathname}`
}

/**
 * The endpoint an interface path stands for, when `pathOrUrl` is one (with or without a query):
 * the raw requests name endpoints by their interface path (requests.ts).
 */
export function endpointNamed(pathOrUrl: string): EndpointName | undefined {
  const path = pathOrUrl.split(/[?#]/)[0]
  return NAMES.find((name) => DISCOVERY_ENDPOINTS[name] === path)
}

/**
 * Why an advertised endpoint is not used, or undefined when it is: an absolute URL without
 * credentials or fragment (RFC 8414 §2), over https, or over the target's own origin (a
 * plain-HTTP test deployment); client secrets are never sent anywhere else.
 */
function unusable(value: unknown, base: URL): string | undefined {
  if (value === undefined) return 'the discovery document does not name it'
  if (typeof value !== 'string') return `the discovery document gives ${JSON.stringify(value)}`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `the discovery document gives ${JSON.stringify(value.slice(0, 200))}, not a URL`
  }
  if (url.username || url.password || url.hash)
    return 'the advertised URL has credentials or a fragment'
  if (url.protocol !== 'https:' && url.origin !== base.origin)
    return `the advertised URL ${url.origin} is neither https nor the target's origin`
  return undefined
}

/**
 * Reads the target's discovery document once (bounded by DISCOVERY_TIMEOUT_MS) and returns every
 * endpoint's URL; never throws: what cannot be read falls back to the interface's path, with why.
 */
export async function resolveEndpoints(
  target: Pick<Target, 'baseUrl' | 'ca'>,
  timeoutMs = DISCOVERY_TIMEOUT_MS,
): Promise<Endpoints> {
  const base = new URL(target.baseUrl)
  let doc: Record<string, unknown> | undefined
  let why: string | undefined
  try {
    // not a check's exchange: the checks that judge the document (DISC-*) fetch it themselves
    const res = await createHttp(target, AbortSignal.timeout(timeoutMs)).get(DISCOVERY)
    if (res.status !== 200) why = `the discovery document answered HTTP ${res.status}`
    else if (res.json === null || typeof res.json !== 'object' || Array.isArray(res.json))
      why = 'the discovery document is not a JSON object'
    else doc = res.json as Record<string, unknown>
  } catch (err) {
    why = `the discovery document could not be read (${(err as Error).message.slice(0, 200)})`
  }
  const urls = {} as Record<EndpointName, string>
  const fallbacks: Partial<Record<EndpointName, string>> = {}
  for (const name of NAMES) {
    const not = why ?? unusable(doc?.[name], base)
    if (not === undefined) urls[name] = doc?.[name] as string
    else {
      urls[name] = atInterfacePath(target, name)
      fallbacks[name] = not
    }
  }
  return { urls, fallbacks }
}

/** The note of a check that used an endpoint at the interface's path instead of discovery's. */
export const fallbackNote = (name: EndpointName, why: string): string =>
  `${name}: requests went to the interface's path ${DISCOVERY_ENDPOINTS[name]}, as ${why}`
