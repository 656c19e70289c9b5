import { WHOLE_SUBJECT, type Aside, type CheckResult } from '../harness/types.ts'
import type { RequirementId } from '../requirements.ts'
import { type Harm, profileChecks, threats, type Threat } from '../threats.ts'
import { escapeHtml } from './escape.ts'
import { markdownCell } from './escape.ts'

/**
 * mitigated: every check behind the threat ran and passed; not mitigated: one of them failed,
 * warned or noted a MAY on its own subject, on a part of it that is the threat's; not shown:
 * none did, but one was inconclusive, skipped, not run, or failed on something other than its
 * subject (a precondition, or the shape of a refusal: CheckResult.aside) or on a part of its
 * subject that is not the threat's (CheckResult.subjects, threats.ts `parts`: the Content-Type
 * of REV-02's revocation answer under refresh-token protection), which says nothing about the
 * attack; not applicable and
 * unobservable (applies, but no black-box check can see it) come from the catalogue.
 */
export type ThreatStatus =
  'mitigated' | 'not mitigated' | 'not shown' | 'unobservable' | 'not applicable'

/** One check behind a threat, as this run left it. */
export interface ThreatCheck {
  readonly id: string
  /** Its verdict (undefined: not run). */
  readonly verdict: string | undefined
  /** Why its failure is not counted against the threat (CheckResult.aside). */
  readonly aside?: Aside
  /**
   * Set when it failed only on parts of its subject that are not this threat's (CheckResult.
   * subjects against threats.ts `parts`): the parts it failed on, not counted.
   */
  readonly elsewhere?: readonly string[]
}

export interface ThreatRow {
  readonly section: string
  readonly title: string
  readonly attack: string
  readonly status: ThreatStatus
  /** The checks behind the row and their verdicts in this run (undefined: not run). */
  readonly checks: readonly ThreatCheck[]
  /** Why the threat does not apply or cannot be observed. */
  readonly reason?: string
  /** What the attack wins: its SHOULD checks fail a security-profile run (threats.ts, Harm). */
  readonly harm?: Harm
}

/** The row's title, with the harm that makes its SHOULD checks fail the security profile. */
const titled = (r: ThreatRow): string => (r.harm ? `${r.title} [${r.harm}]` : r.title)

const NOT_MET = new Set(['fail', 'warn', 'info'])

/**
 * A threat is open only on a check that did not meet its own subject: a failure aside from it
 * (a precondition, a refusal shaped otherwise), an inconclusive or a skipped check shows
 * nothing either way.
 */
function statusOf(checks: readonly ThreatCheck[]): ThreatStatus {
  if (
    checks.some(
      (c) => c.verdict !== undefined && NOT_MET.has(c.verdict) && !c.aside && !c.elsewhere,
    )
  )
    return 'not mitigated'
  return checks.every((c) => c.verdict === 'pass') ? 'mitigated' : 'not shown'
}

/**
 * The threat table of a run, or undefined when the run checked nothing of the security profile
 * (a run of `--only PKCE-*` has no threat table).
 */
export function threatTable(results: readonly CheckResult[]): ThreatRow[] | undefined {
  const profile = new Set<string>(profileChecks())
  if (!results.some((r) => profile.has(r.id) || r.area === 'Security')) return undefined
  const verdict = new Map(results.map((r) => [r.id, r.verdict as string]))
  const asides = new Map(results.flatMap((r) => (r.aside ? [[r.id, r.aside] as const] : [])))
  const subjects = new Map(
    results.flatMap((r) => (r.subjects ? [[r.id, r.subjects] as const] : [])),
  )
  const behind = (
    id: string,
    parts?: Partial<Record<RequirementId, readonly string[]>>,
  ): ThreatCheck => {
    const why = asides.get(id)
    const elsewhere = offThreat(subjects.get(id), parts?.[id as RequirementId])
    return {
      id,
      verdict: verdict.get(id),
      ...(why ? { aside: why } : {}),
      ...(elsewhere ? { elsewhere } : {}),
    }
  }
  return (threats as readonly Threat[]).map((t): ThreatRow => {
    const base = { section: t.section, title: t.title, attack: t.attack }
    if (t.applies === false)
      return {
        ...base,
        status: 'not applicable',
        checks: (t.evidence ?? []).map((id) => behind(id)),
        reason: t.reason,
      }
    if (t.applies === 'unobservable')
      return { ...base, status: 'unobservable', checks: [], reason: t.reason }
    const parts = t.parts
    const checks = t.checks.map((id) => behind(id, parts))
    return { ...base, status: statusOf(checks), checks, ...(t.harm ? { harm: t.harm } : {}) }
  })
}

/**
 * The parts a failed check failed on when none of them is one of the threat's `parts` (and
 * none is a failure without a part's name, WHOLE_SUBJECT): its failure is about something
 * else. Undefined when the failure counts: no parts named on either side, or one in common.
 */
export function offThreat(
  failedOn: readonly string[] | undefined,
  threatParts: readonly string[] | undefined,
): readonly string[] | undefined {
  if (!failedOn || !threatParts || failedOn.length === 0) return undefined
  return failedOn.some((s) => s === WHOLE_SUBJECT || threatParts.includes(s)) ? undefined : failedOn
}

/** How many threats are in each status. */
export function countThreats(rows: readonly ThreatRow[]): Record<ThreatStatus, number> {
  const counts: Record<ThreatStatus, number> = {
    mitigated: 0,
    'not mitigated': 0,
    'not shown': 0,
    unobservable: 0,
    'not applicable': 0,
  }
  for (const r of rows) counts[r.status]++
  return counts
}

const ASIDE: Record<Aside, string> = {
  precondition: 'on a precondition, not counted',
  refused: 'refused otherwise, not counted',
}

/** A check's verdict as the table shows it: "PKCE-06 FAIL (refused otherwise, not counted)". */
const verdictOf = (c: ThreatCheck): string =>
  c.verdict === 'notrun'
    ? 'NOT RUN (stopped)'
    : `${c.verdict ? c.verdict.toUpperCase() : 'not run'}${c.aside ? ` (${ASIDE[c.aside]})` : c.elsewhere && c.verdict && NOT_MET.has(c.verdict) ? ` (on ${c.elsewhere.join(', ')}, not counted)` : ''}`

const checkList = (row: ThreatRow): string =>
  row.checks.map((c) => `${c.id} ${verdictOf(c)}`).join(', ')

/** The terminal's threat summary: totals, then every threat not shown mitigated. */
export function formatThreats(rows: readonly ThreatRow[]): string {
  const c = countThreats(rows)
  const lines = [
    '',
    `Threats (RFC 9700 §4, RFC 6819 §4): ${c.mitigated} mitigated, ${c['not mitigated']} not mitigated, ${c['not shown']} not shown, ${c.unobservable} not observable from outside, ${c['not applicable']} not applicable`,
  ]
  for (const r of rows)
    if (r.status === 'not mitigated' || r.status === 'not shown')
      lines.push(`  ${r.status.toUpperCase()} ${r.section} ${titled(r)}: ${checkList(r)}`)
  return lines.join('\n')
}

/** The Markdown threat table (summary.md). */
export function markdownThreats(rows: readonly ThreatRow[]): string {
  const c = countThreats(rows)
  const lines = [
    '### Threats',
    '',
    `${c.mitigated} mitigated, ${c['not mitigated']} not mitigated, ${c['not shown']} not shown, ${c.unobservable} not observable from outside, ${c['not applicable']} not applicable.`,
    '',
    '| threat | status | checks or reason |',
    '|---|---|---|',
  ]
  for (const r of rows)
    lines.push(
      `| ${markdownCell(`${r.section} ${titled(r)}`)} | ${r.status} | ${markdownCell([r.reason, checkList(r)].filter(Boolean).join('; '))} |`,
    )
  lines.push('')
  return lines.join('\n')
}

/** The HTML threat table (report.html): one row per threat, its checks linked to their results. */
export function htmlThreats(rows: readonly ThreatRow[]): string {
  const c = countThreats(rows)
  const body = rows
    .map((r) => {
      const cls = r.status.replace(/ /g, '-')
      const links = r.checks
        .map(
          (x) =>
            `<a href="#check-${escapeHtml(x.id)}">${escapeHtml(x.id)}</a> <span class="tv">${escapeHtml(x.verdict ? verdictOf(x).toLowerCase() : 'not run')}</span>`,
        )
        .join(', ')
      const checks = r.reason ? `${escapeHtml(r.reason)}${links ? `<br>${links}` : ''}` : links
      return `<tr class="threat ${cls}"><td>${escapeHtml(r.section)}</td><td><b>${escapeHtml(titled(r))}</b><br><span class="src">${escapeHtml(r.attack)}</span></td><td class="ts">${escapeHtml(r.status)}</td><td>${checks}</td></tr>`
    })
    .join('\n')
  return `<section id="threats"><h2>Threats (RFC 9700 §4, RFC 6819 §4)</h2>
<p>${c.mitigated} mitigated, ${c['not mitigated']} not mitigated, ${c['not shown']} not shown, ${c.unobservable} not observable from outside, ${c['not applicable']} not applicable.</p>
<table><thead><tr><th>section</th><th>threat</th><th>status</th><th>checks or reason</th></tr></thead>
<tbody>
${body}
</tbody></table></section>`
}

/** The table's styles, for the report's stylesheet. */
export const THREAT_CSS = `table{border-collapse:collapse;margin:.5rem 0 1rem}td,th{border:1px solid #ddd;padding:.25rem .5rem;vertical-align:top;text-align:left}
.threat.mitigated .ts{color:#137333}.threat.not-mitigated .ts{color:#c5221f;font-weight:bold}.threat.not-shown .ts{color:#b06000}.threat.not-applicable .ts,.threat.unobservable .ts{color:#5f6368}.tv{color:#5f6368}`
