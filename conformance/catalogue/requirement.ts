import type { Level } from '../harness/types.ts'

/** One catalogue row (shared/REQUIREMENTS.md): written once, repeated nowhere else. */
export interface Requirement {
  readonly area: string
  readonly level: Level
  readonly source: string
  readonly title: string
}
