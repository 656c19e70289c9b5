import type { BrowserContext, Cookie, Response } from '@playwright/test'

/**
 * The cookies an IdP sets in a browser context while a sign-in goes on there: the Set-Cookie
 * lines of the browser's responses from the IdP (redirect hops included), and the cookies the
 * context holds for the IdP's hosts once the sign-in ended (a cookie a script set, or one
 * whose header the browser did not show). LOGIN-05 judges them (blind round 6c: the session
 * cookie was set at the resume after a push page, in the browser, and the replayed login post
 * set none).
 */
export interface IdpCookies {
  /** Set-Cookie lines that set a value (clearing ones left out). */
  readonly lines: string[]
  /** The cookies the browser held for the IdP's hosts when the sign-in ended. */
  readonly held: Cookie[]
}

/** A browser response's Set-Cookie lines, one per cookie; none if unreadable within 5 s. */
export function setCookieLines(response: Response): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    response
      .headerValues('set-cookie')
      .then((values) => values.flatMap((v) => v.split('\n')))
      .catch(() => []),
    new Promise<string[]>((resolve) => {
      timer = setTimeout(() => resolve([]), 5000)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** A Set-Cookie line that sets a value (clearing ones are left out, as cookiesSet does). */
export const setsValue = (c: string): boolean =>
  !/^[^=]+=\s*(;|$)/.test(c) && !/;\s*max-age=0\b/i.test(c)

/** Whether a cookie held for `domain` (a leading dot: a domain cookie) is sent to `host`. */
export function domainMatches(domain: string, host: string): boolean {
  const d = domain.replace(/^\./, '').toLowerCase()
  const h = host.toLowerCase()
  return h === d || (domain.startsWith('.') && h.endsWith(`.${d}`))
}

/**
 * Starts recording the IdP's cookies in `context` (the responses from `origins`); `collect`
 * stops, awaits every header read (each bounded) and reads what the context holds for the
 * hosts of `origins`. Call `collect` on every path: it leaves no promise behind.
 */
export function watchIdpCookies(
  context: BrowserContext,
  origins: Iterable<string>,
): { collect: () => Promise<IdpCookies> } {
  const idp = new Set(origins)
  const pending: Promise<string[]>[] = []
  const onResponse = (r: Response): void => {
    if (URL.canParse(r.url()) && idp.has(new URL(r.url()).origin)) pending.push(setCookieLines(r))
  }
  context.on('response', onResponse)
  return {
    collect: async () => {
      context.off('response', onResponse)
      const lines = (await Promise.all(pending)).flat().filter(setsValue)
      const hosts = [...idp].map((o) => new URL(o).hostname)
      const held = (await context.cookies().catch(() => [])).filter((c) =>
        hosts.some((h) => domainMatches(c.domain, h)),
      )
      return { lines, held }
    },
  }
}

/**
 * The cookies to judge: every line, and for a held cookie no line names (a script's
 * document.cookie, a header the browser hid), a line written from the browser's view of it.
 * Chromium reports a cookie set without SameSite as Lax, so such a cookie's SameSite is the
 * browser's effective one: `fromBrowser` names them, for a note.
 */
export function cookiesToJudge(
  lines: readonly string[],
  held: readonly Cookie[],
): { lines: string[]; fromBrowser: string[] } {
  const named = new Set(lines.map((l) => l.split('=')[0]?.trim()))
  const extra = held.filter((c) => !named.has(c.name))
  return {
    lines: [
      ...lines,
      ...extra.map(
        (c) =>
          `${c.name}=[held]; Path=${c.path}${c.secure ? '; Secure' : ''}${c.httpOnly ? '; HttpOnly' : ''}; SameSite=${c.sameSite}`,
      ),
    ],
    fromBrowser: [...new Set(extra.map((c) => c.name))],
  }
}
