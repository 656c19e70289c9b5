/** MUST failures fail a run; SHOULD failures warn; MAY checks are recorded only. */
export type Level = 'MUST' | 'SHOULD' | 'MAY'

/** pass; fail (MUST not met); warn (SHOULD not met); info (MAY, recorded); skip (could not run). */
export type Verdict = 'pass' | 'fail' | 'warn' | 'info' | 'skip'

/** One HTTP exchange, secrets and tokens redacted. */
export interface Exchange {
  readonly method: string
  readonly url: string
  readonly requestHeaders: Readonly<Record<string, string>>
  readonly requestBody: string | undefined
  readonly status: number | undefined
  readonly responseHeaders: Readonly<Record<string, string>>
  readonly responseBody: string | undefined
  /** Set when no response came (connection refused, TLS failure, …). */
  readonly error: string | undefined
  readonly durationMs: number
}

export interface CheckResult {
  readonly id: string
  readonly title: string
  readonly level: Level
  readonly source: string
  readonly area: string
  readonly verdict: Verdict
  /** Why it failed, warned or was skipped. */
  readonly message: string | undefined
  /** Observations that do not change the verdict (SHOULD-level notes, measured values). */
  readonly notes: readonly string[]
  readonly exchanges: readonly Exchange[]
  /** PNG screenshots, base64. */
  readonly screenshots: readonly { name: string; png: string }[]
  readonly durationMs: number
}
