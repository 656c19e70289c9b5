/** A check-ID glob (`PKCE-*`, `TOK-0?`) as a case-insensitive regular expression of whole IDs. */
export function idGlob(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    'i',
  )
}
