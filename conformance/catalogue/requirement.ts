/** MUST failures fail a run; SHOULD failures warn; MAY checks are recorded only. */
export type Level = 'MUST' | 'SHOULD' | 'MAY'

/** One catalogue row (shared/REQUIREMENTS.md): written once, repeated nowhere else. */
export interface Requirement {
  readonly area: string
  readonly level: Level
  readonly source: string
  readonly title: string
}
