import {
  findNodeAtLocation,
  getNodeValue,
  parseTree,
  printParseErrorCode,
  type ParseError,
} from 'jsonc-parser'

/**
 * A JSON file (comments allowed, as in tsconfig.json) parsed with positions, so that every
 * problem can name its file, line and field. Parsing is jsonc-parser's, not ours.
 */
export interface JsonDocument {
  readonly file: string
  readonly text: string
  readonly value: unknown
  /** `FILE:LINE` of the value at `path`, or of its nearest parent that exists. */
  where(path: readonly (string | number)[]): string
}

export class RegistrationError extends Error {
  readonly problems: readonly string[]
  constructor(problems: readonly string[]) {
    super(`invalid registrations:\n  - ${problems.join('\n  - ')}`)
    this.name = 'RegistrationError'
    this.problems = problems
  }
}

const lineAt = (text: string, offset: number): number => {
  let line = 1
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

/** `clients[0].redirect_uris[1]`: how a path is shown to the person editing the file. */
export const showPath = (path: readonly (string | number)[]): string =>
  path
    .map((p, i) =>
      typeof p === 'number'
        ? `[${p}]`
        : /^[A-Za-z_][\w:-]*$/.test(p)
          ? i
            ? `.${p}`
            : p
          : `[${JSON.stringify(p)}]`,
    )
    .join('')

/** Parses `text` (read from `file`); a syntax error throws a RegistrationError with its line. */
export function parseJsonDocument(file: string, text: string): JsonDocument {
  const errors: ParseError[] = []
  const root = parseTree(text, errors, { allowTrailingComma: false, disallowComments: false })
  if (errors.length > 0 || !root) {
    throw new RegistrationError(
      errors.length > 0
        ? errors
            .slice(0, 5)
            .map(
              (e) =>
                `${file}:${lineAt(text, e.offset)}: JSON syntax error: ${printParseErrorCode(e.error)}`,
            )
        : [`${file}: the file is empty`],
    )
  }
  const value: unknown = getNodeValue(root)
  return {
    file,
    text,
    value,
    where(path) {
      for (let n = path.length; n >= 0; n--) {
        const node = findNodeAtLocation(root, [...path.slice(0, n)])
        if (node)
          return `${file}:${lineAt(text, node.parent?.type === 'property' ? node.parent.offset : node.offset)}`
      }
      return file
    },
  }
}
