/** MUST failures fail a run; SHOULD failures warn; MAY checks are recorded only. */
export type Level = 'MUST' | 'SHOULD' | 'MAY'

/** One catalogue row (shared/REQUIREMENTS.md): written once, repeated nowhere else. */
export interface Requirement {
  readonly area: string
  readonly level: Level
  readonly source: string
  readonly title: string
}

/** A catalogue row as an area file writes it: the area is the file's, given once. */
export type Row = Omit<Requirement, 'area'>

/**
 * The rows of one area file, each given the area's name (the label reports group by), so no
 * row repeats it and no row can name another area.
 */
export function area<const Rows extends Record<string, Row>>(
  name: string,
  rows: Rows,
): { readonly [Id in keyof Rows]: Rows[Id] & { readonly area: string } } {
  return Object.fromEntries(
    Object.entries(rows).map(([id, row]) => [id, { area: name, ...row }]),
  ) as { readonly [Id in keyof Rows]: Rows[Id] & { readonly area: string } }
}
