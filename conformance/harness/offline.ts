import { CheckFailure, scopeList } from './expect.ts'
import type { HttpResponse } from './http.ts'

/**
 * Whether offline access was granted to a request that asked for `offline_access`, judged by its
 * evidence (OIDC Core §11: offline access is what the refresh token is for): a `refresh_token`
 * that the token endpoint accepts. The token response's `scope` member naming `offline_access`
 * is the usual sign of it, but a response whose `scope` is empty or leaves it out is a deviation
 * of that member (RFC 6749 §5.1; TOK-02 judges it), not a grant that did not happen: then the
 * refresh token is presented once (`refresh`) and the grant stands when it is accepted, with a
 * note (one deviation, one failure). Throws a CheckFailure starting with `notGranted` when
 * neither the scope nor a working refresh token shows the grant; returns the note to add, if any.
 * A response with `offline_access` in its scope and no refresh token is left to the caller (its
 * own message).
 */
export async function expectOfflineGranted(
  granted: { readonly scope: string | undefined; readonly refreshToken: string | undefined },
  refresh: (refreshToken: string) => Promise<Pick<HttpResponse, 'status' | 'json'>>,
  notGranted: string,
): Promise<string | undefined> {
  const scope = granted.scope ?? ''
  if (scopeList(scope).includes('offline_access')) return undefined
  const rt = granted.refreshToken
  if (rt === undefined || rt === '')
    throw new CheckFailure(`${notGranted} (scope "${scope}", and no refresh_token)`)
  const res = await refresh(rt)
  const body = res.json
  const works =
    res.status === 200 &&
    typeof body === 'object' &&
    body !== null &&
    typeof (body as Record<string, unknown>).access_token === 'string'
  if (!works) {
    const error =
      typeof body === 'object' && body !== null
        ? (body as Record<string, unknown>).error
        : undefined
    throw new CheckFailure(
      `${notGranted} (scope "${scope}"), and the refresh_token issued with it is refused at the token endpoint (HTTP ${res.status}${typeof error === 'string' ? ` ${error}` : ''})`,
    )
  }
  return `the token response's scope "${scope}" leaves out offline_access, but its refresh_token works at the token endpoint: offline access was granted (the scope member is TOK-02's to judge, RFC 6749 §5.1)`
}
