import fc from 'fast-check'

/**
 * Mutations of a token that is not a JWS (ROBUST-02 against a provider whose access tokens are
 * opaque, a format AT-01 and JWKS-04 judge): nothing is assumed of the token's contents, so no
 * segment is decoded as JSON. Each changes the token's characters, never leaves it as it was, and
 * none only adds what an HTTP parser may strip (trailing whitespace, RFC 9110 §5.5) or what
 * RFC 6750 §2.1 allows between "Bearer" and the token (spaces).
 */
export type OpaqueMutation =
  | { readonly kind: 'char-flip'; readonly at: number; readonly bit: number }
  | { readonly kind: 'truncate'; readonly keep: number }
  | { readonly kind: 'padding'; readonly pad: '=' | '==' | '.' | 'A' }
  | { readonly kind: 'insert'; readonly at: number; readonly char: string }
  | { readonly kind: 'oversized'; readonly length: number }

export const opaqueMutationArb: fc.Arbitrary<OpaqueMutation> = fc.oneof(
  fc.record({ kind: fc.constant('char-flip'), at: fc.nat(), bit: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant('truncate'), keep: fc.nat() }),
  fc.record({ kind: fc.constant('padding'), pad: fc.constantFrom('=', '==', '.', 'A') }),
  fc.record({
    kind: fc.constant('insert'),
    at: fc.nat(),
    char: fc.constantFrom('A', '-', '_', '!', '*', ' ', '%00'),
  }),
  fc.record({ kind: fc.constant('oversized'), length: fc.integer({ min: 8193, max: 12_000 }) }),
)

/** Flips one of the low seven bits of a character, keeping it printable ASCII where it can. */
function flipped(c: string, bit: number): string {
  const code = c.charCodeAt(0) ^ (1 << bit)
  return code > 0x20 && code < 0x7f && code !== c.charCodeAt(0) ? String.fromCharCode(code) : '~'
}

/** Applies a mutation to a real token; the result always differs from it. */
export function mutateOpaque(m: OpaqueMutation, token: string): string {
  const at = (n: number) => n % Math.max(1, token.length)
  switch (m.kind) {
    case 'char-flip': {
      const i = at(m.at)
      const c = token[i] ?? 'A'
      const to = flipped(c, m.bit)
      const other = to !== c ? to : c === '~' ? '!' : '~'
      return `${token.slice(0, i)}${other}${token.slice(i + 1)}`
    }
    case 'truncate':
      return token.length > 1 ? token.slice(0, (m.keep % (token.length - 1)) + 1) : ''
    case 'padding':
      return `${token}${m.pad}`
    case 'insert': {
      // inside the token, never before it: RFC 6750 §2.1 allows several spaces after "Bearer"
      const i = token.length > 1 ? 1 + (m.at % (token.length - 1)) : token.length
      return `${token.slice(0, i)}${m.char}${token.slice(i)}`
    }
    case 'oversized':
      return `${token}${'x'.repeat(Math.max(1, m.length - token.length))}`
  }
}
