import { gunzipSync, gzipSync } from 'node:zlib'
import { describeSpeed } from '../harness/pace.ts'
import type { CheckResult, Exchange } from '../harness/types.ts'
import type { RunReport } from './json.ts'
import { htmlThreats, THREAT_CSS } from './threats.ts'
import { countsLine, groupByCause, timing, type CauseGroup } from './summary.ts'
import { escapeHtml } from './escape.ts'
import { causeDetail, type ConfigNames } from './cause-detail.ts'
import { plural } from './words.ts'

/** Decodes the header and payload of anything that looks like a JWT in a text, for the reader. */
function decodedJwts(text: string | undefined): string[] {
  if (!text) return []
  const found = text.match(/eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+/g) ?? []
  return [...new Set(found)].map((jwt) => {
    const [h, p] = jwt.split('.')
    try {
      const header = Buffer.from(h ?? '', 'base64url').toString('utf8')
      const payload = Buffer.from(p ?? '', 'base64url').toString('utf8')
      return `header ${header}\npayload ${payload}`
    } catch {
      return 'undecodable JWT'
    }
  })
}

/** One exchange as the page shows it (plain text: the page's script puts it in text nodes). */
interface ShownExchange {
  /** "POST https://…/auth/token → 401" */
  readonly line: string
  readonly ms: number
  readonly request: string
  readonly response: string
  readonly jwt?: string
}

function shownExchange(x: Exchange): ShownExchange {
  const headers = (h: Readonly<Record<string, string>>): string =>
    Object.entries(h)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n')
  const jwts = decodedJwts(
    `${x.requestBody ?? ''} ${x.responseBody ?? ''} ${Object.values(x.responseHeaders).join(' ')}`,
  )
  return {
    line: `${x.method} ${x.url} → ${x.status ?? x.error ?? 'no response'}`,
    ms: Math.round(x.durationMs),
    request: `${headers(x.requestHeaders)}${x.requestBody ? `\n\n${x.requestBody}` : ''}`,
    response: `${headers(x.responseHeaders)}${x.responseBody ? `\n\n${x.responseBody}` : ''}`,
    ...(jwts.length ? { jwt: jwts.join('\n\n') } : {}),
  }
}

/**
 * The evidence of every check (its HTTP transcript and screenshots), gzipped and base64-encoded
 * in one block that the page's script opens when a check is: the transcripts of a full run are
 * megabytes of repeated headers, and the file stays small (report.json keeps them as they are).
 * Each screenshot is stored once however many checks took the same one.
 */
export interface Evidence {
  /** By check, in report order: the exchanges and the indexes of its screenshots. */
  readonly checks: readonly {
    readonly x: readonly ShownExchange[]
    /** Each screenshot's caption and its index in `images`. */
    readonly s: readonly { readonly name: string; readonly i: number }[]
  }[]
  readonly images: readonly string[]
}

function evidenceOf(checks: readonly CheckResult[]): Evidence {
  const images: string[] = []
  const index = new Map<string, number>()
  const shot = (png: string): number => {
    let i = index.get(png)
    if (i === undefined) {
      i = images.push(png) - 1
      index.set(png, i)
    }
    return i
  }
  return {
    checks: checks.map((c) => ({
      x: c.exchanges.map(shownExchange),
      s: c.screenshots.map((s) => ({ name: s.name, i: shot(s.png) })),
    })),
    images,
  }
}

/** The id of the element that carries the gzipped evidence (base64). */
export const EVIDENCE_ID = 'evidence'

/** The evidence block of a report.html, decoded (what the page's script shows). */
export function readEvidence(html: string): Evidence {
  const block = new RegExp(`<script [^>]*id="${EVIDENCE_ID}">([A-Za-z0-9+/=]*)</script>`).exec(html)
  if (!block) throw new Error('report.html has no evidence block')
  return JSON.parse(gunzipSync(Buffer.from(block[1] ?? '', 'base64')).toString('utf8')) as Evidence
}

/** Everything a reader of report.html can see as text: the page and its evidence, opened. */
export function readableText(html: string): string {
  const evidence = readEvidence(html)
  return [
    html,
    ...evidence.checks.flatMap((c) => [
      ...c.x.flatMap((x) => [x.line, x.request, x.response, x.jwt ?? '']),
      ...c.s.map((s) => s.name),
    ]),
    ...evidence.images,
  ].join('\n')
}

/** Order on the page: what did not pass first, gravest first; passes last; run order within. */
const ORDER = ['fail', 'error', 'notrun', 'warn', 'info', 'skip', 'pass']
const label = (v: string): string => (v === 'notrun' ? 'NOT RUN' : v.toUpperCase())

/** The answer and the setting to look at under a cause, when there are. */
const detailHtml = (g: CauseGroup, names: ConfigNames | undefined): string => {
  const d = causeDetail(g, names)
  return `${d.answer ? `<div class="answer">${escapeHtml(d.answer)}</div>` : ''}${d.setting ? `<div class="setting">Likely cause: ${escapeHtml(d.setting)}</div>` : ''}`
}

function checkHtml(c: CheckResult, i: number, detail: string): string {
  const why = [c.message, ...(c.more ?? []).map((m) => `also: ${m}`)].filter((m): m is string =>
    Boolean(m),
  )
  const evidence = c.exchanges.length + c.screenshots.length
  return `<details id="check-${escapeHtml(c.id)}" class="check ${c.verdict}" data-verdict="${c.verdict}" data-i="${i}">
<summary><span class="v">${label(c.verdict)}</span> <b>${escapeHtml(c.id)}</b> [${c.level}] ${escapeHtml(c.title)} <span class="src">${escapeHtml(c.source)} · ${(c.durationMs / 1000).toFixed(1)} s</span>${why.map((m) => `<span class="msg">${escapeHtml(m)}</span>`).join('')}${detail}</summary>
${c.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('')}<div class="evidence">${evidence ? `${plural(c.exchanges.length, 'HTTP exchange')}${c.screenshots.length ? `, ${plural(c.screenshots.length, 'screenshot')}` : ''}` : 'no HTTP exchange recorded'}</div>
</details>`
}

/**
 * One self-contained HTML file that fits a 1,280 px window: the verdict, the checks that did not
 * pass (collapsed to one line and their message each, opened one at a time for the transcript),
 * the causes they share with the answer and the setting behind each, the threat table, where
 * the time went, then the checks that passed. `names` maps the target configuration's names,
 * for the setting a cause points at.
 */
export function htmlReport(report: RunReport, names?: ConfigNames): string {
  const indexed = report.checks.map((c, i) => ({ c, i }))
  const sorted = indexed.sort((a, b) => ORDER.indexOf(a.c.verdict) - ORDER.indexOf(b.c.verdict))
  const groups = groupByCause(report.checks)
  // a check alone with its cause shows the cause's detail under its own message
  const alone = new Map(
    groups.filter((g) => g.results.length === 1).map((g) => [g.results[0], detailHtml(g, names)]),
  )
  const rows = (list: typeof sorted): string =>
    list.map(({ c, i }) => checkHtml(c, i, alone.get(c) ?? '')).join('\n')
  const notPassed = sorted.filter(({ c }) => c.verdict !== 'pass')
  const passed = sorted.filter(({ c }) => c.verdict === 'pass')
  const shared = groups.filter((g) => g.results.length > 1)
  const link = (id: string): string => `<a href="#check-${escapeHtml(id)}">${escapeHtml(id)}</a>`
  const causesHtml = shared.length
    ? `<section id="causes"><h2>Causes shared by several checks</h2><ul>${shared
        .map(
          (g) =>
            `<li class="${g.verdict}"><span class="v">${label(g.verdict)}</span> <span class="cause">${escapeHtml(g.cause)}</span>: ${plural(g.results.length, 'check')} (${(
              ['fail', 'error', 'warn'] as const
            )
              .filter((v) => g.counts[v])
              .map((v) => `${g.counts[v]} ${label(v)}`)
              .join(
                ', ',
              )}): ${g.results.map((r) => link(r.id)).join(', ')}${detailHtml(g, names)}</li>`,
        )
        .join('')}</ul></section>`
    : ''
  const t = timing(report.checks, 10)
  // why check limits were raised (or not): the run's measured browser round (pace.ts)
  const speed = report.speed && describeSpeed(report.speed)
  const timingHtml = `<section id="timing"><h2>Where the time went</h2>
<p>Run: ${((Date.parse(report.finishedAt) - Date.parse(report.startedAt)) / 1000).toFixed(1)} s wall time. Slowest checks: ${t.slowest.map((s) => `${link(s.id)} ${(s.durationMs / 1000).toFixed(1)} s`).join(', ')}</p>
<p>Time per area (sum of check durations; parallel checks overlap): ${t.areas.map((a) => `${escapeHtml(a.area)} ${(a.durationMs / 1000).toFixed(1)} s`).join(', ')}</p>${speed ? `\n<p id="speed">Speed: ${escapeHtml(speed)}</p>` : ''}</section>`
  const evidence = gzipSync(JSON.stringify(evidenceOf(report.checks)), { level: 9 }).toString(
    'base64',
  )
  const c = report.counts
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conformance report: ${escapeHtml(report.target.baseUrl)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem auto;padding:0 1rem;max-width:75rem;color:#222;overflow-wrap:anywhere}
h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:1.5rem}.summary span{margin-right:1rem}
.check{border:1px solid #ddd;border-radius:4px;margin:.3rem 0;padding:.25rem .6rem}
.check summary{cursor:pointer}.v{display:inline-block;min-width:3.4rem;font-weight:bold}
.fail .v{color:#c5221f}.error .v{color:#a142f4}.notrun .v{color:#5f6368;font-style:italic}.warn .v{color:#b06000}.info .v{color:#1967d2}.skip .v{color:#5f6368}.pass .v{color:#137333}
.src{color:#5f6368;font-size:.85em}.msg{display:block;margin:.15rem 0 0 3.6rem;color:#c5221f;white-space:pre-wrap}.note{color:#5f6368;margin:.3rem 0}
.answer,.setting{margin:.15rem 0 0 3.6rem;font-size:.9em}.answer{font-family:monospace;color:#444}.setting{color:#174ea6;font-weight:bold}
#causes li{margin:.4rem 0}.cause{font-family:monospace}
.evidence{color:#5f6368;font-size:.85em;margin:.3rem 0}
pre{background:#f6f8fa;padding:.4rem;margin:.3rem 0;white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;max-height:30rem;overflow-y:auto}
.x{border-top:1px dashed #ccc;margin-top:.4rem}.line{font-family:monospace}.ms{color:#5f6368}
img{max-width:min(100%,40rem);border:1px solid #ccc;display:block;margin:.3rem 0}
#causes a,#threats a,#timing a{white-space:nowrap}#contents a{margin-right:1rem}
${THREAT_CSS}
</style></head><body>
<h1>Conformance report</h1>
<p>Target <code>${escapeHtml(report.target.baseUrl)}</code>${report.target.embedded ? ' (embedded reference server)' : ''}; suite ${escapeHtml(report.suite.version)}; ${escapeHtml(report.startedAt)}.</p>
${report.stopped ? `<p class="msg" id="stopped">The run was stopped before its end (${escapeHtml(report.stopped)}): the checks marked NOT RUN did not run, or not to their end.</p>\n` : ''}<p class="summary" id="summary"><strong>${report.passed ? 'PASSED' : 'FAILED'}</strong>
<span>${escapeHtml(countsLine(c))}</span></p>
<p id="filters">Show: ${(['fail', 'error', 'notrun', 'warn', 'info', 'skip', 'pass'] as const).map((v) => `<label><input type="checkbox" value="${v}" checked> ${v}</label>`).join(' ')}. Open a check for its notes and its HTTP transcript (secrets redacted; in full in report.json).</p>
<p id="contents">${[
    notPassed.length ? `<a href="#not-passed">Not passed (${notPassed.length})</a>` : '',
    shared.length ? `<a href="#causes">Shared causes (${shared.length})</a>` : '',
    report.threats ? '<a href="#threats">Threats</a>' : '',
    '<a href="#timing">Time</a>',
    passed.length ? `<a href="#passed">Passed (${passed.length})</a>` : '',
  ].join('')}</p>
<noscript><p class="msg">The transcripts and screenshots are opened by this page's script: report.json has them.</p></noscript>
${notPassed.length ? `<section id="not-passed"><h2>Not passed (${notPassed.length})</h2>\n${rows(notPassed)}\n</section>` : ''}
${causesHtml}
${report.threats ? htmlThreats(report.threats) : ''}
${timingHtml}
${passed.length ? `<section id="passed"><h2>Passed (${passed.length})</h2>\n${rows(passed)}\n</section>` : ''}
<script type="application/gzip+base64" id="${EVIDENCE_ID}">${evidence}</script>
<script>
for (const box of document.querySelectorAll('#filters input')) box.addEventListener('change', () => {
  for (const el of document.querySelectorAll('.check[data-verdict="' + box.value + '"]')) el.hidden = !box.checked
})
let evidence
function loadEvidence() {
  evidence ??= (async () => {
    const bytes = Uint8Array.from(atob(document.getElementById('${EVIDENCE_ID}').textContent), (ch) => ch.charCodeAt(0))
    const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text()
    return JSON.parse(text)
  })()
  return evidence
}
function el(tag, cls, text) {
  const e = document.createElement(tag)
  if (cls) e.className = cls
  if (text !== undefined) e.textContent = text
  return e
}
async function show(check) {
  const box = check.querySelector('.evidence')
  if (!box || box.dataset.shown) return
  box.dataset.shown = '1'
  try {
    const all = await loadEvidence()
    const mine = all.checks[Number(check.dataset.i)]
    box.replaceChildren()
    for (const s of mine.s) {
      const figure = el('figure')
      const img = el('img')
      img.src = 'data:image/png;base64,' + all.images[s.i]
      img.alt = s.name
      figure.append(img, el('figcaption', '', s.name))
      box.append(figure)
    }
    for (const x of mine.x) {
      const div = el('div', 'x')
      const line = el('div', 'line', x.line + ' ')
      line.append(el('span', 'ms', x.ms + ' ms'))
      div.append(line, el('pre', 'req', x.request), el('pre', 'res', x.response))
      if (x.jwt) div.append(el('pre', 'jwt', x.jwt))
      box.append(div)
    }
  } catch (err) {
    box.textContent = 'The transcript could not be opened here (' + err + '): report.json has it.'
  }
}
for (const check of document.querySelectorAll('details.check'))
  check.addEventListener('toggle', () => { if (check.open) void show(check) })
function openTarget() {
  const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)))
  if (target && target.tagName === 'DETAILS') target.open = true
}
addEventListener('hashchange', openTarget)
openTarget()
</script>
</body></html>
`
}
