import type { Exchange } from '../harness/types.ts'
import type { RunReport } from './json.ts'
import { htmlThreats, THREAT_CSS } from './threats.ts'
import { countsLine, groupByCause, groupChecks, timing } from './summary.ts'
import { escapeHtml } from './escape.ts'

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

function exchangeHtml(x: Exchange): string {
  const reqHeaders = Object.entries(x.requestHeaders)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')
  const resHeaders = Object.entries(x.responseHeaders)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')
  const jwts = decodedJwts(
    `${x.requestBody ?? ''} ${x.responseBody ?? ''} ${Object.values(x.responseHeaders).join(' ')}`,
  )
  return `<div class="x"><div class="line">${escapeHtml(x.method)} ${escapeHtml(x.url)} → ${x.status ?? escapeHtml(x.error ?? 'no response')} <span class="ms">${Math.round(x.durationMs)} ms</span></div>
<pre>${escapeHtml(reqHeaders)}${x.requestBody ? `\n\n${escapeHtml(x.requestBody)}` : ''}</pre>
<pre>${escapeHtml(resHeaders)}${x.responseBody ? `\n\n${escapeHtml(x.responseBody)}` : ''}</pre>${jwts.length ? `<pre class="jwt">${escapeHtml(jwts.join('\n\n'))}</pre>` : ''}</div>`
}

/** One self-contained HTML file: summary, verdict filters, and each check's evidence. */
export function htmlReport(report: RunReport): string {
  // failures first, then inconclusive, warnings, info, skips and passes, each in run order
  const order = ['fail', 'error', 'warn', 'info', 'skip', 'pass']
  const checks = [...report.checks].sort(
    (a, b) => order.indexOf(a.verdict) - order.indexOf(b.verdict),
  )
  const causes = groupByCause(report.checks).filter((g) => g.results.length > 1)
  const causesHtml = causes.length
    ? `<section id="causes"><h2>Causes shared by several checks</h2><ul>${causes
        .map(
          (g) =>
            `<li><span class="v ${g.verdict}">${g.verdict === 'error' ? 'ERROR' : g.verdict.toUpperCase()}</span> ${escapeHtml(g.cause)}: ${escapeHtml(groupChecks(g))}</li>`,
        )
        .join('')}</ul></section>`
    : ''
  const rows = checks
    .map(
      (
        c,
      ) => `<details id="check-${escapeHtml(c.id)}" class="check ${c.verdict}" data-verdict="${c.verdict}" ${c.verdict === 'fail' || c.verdict === 'error' ? 'open' : ''}>
<summary><span class="v">${c.verdict.toUpperCase()}</span> <b>${escapeHtml(c.id)}</b> [${c.level}] ${escapeHtml(c.title)} <span class="src">${escapeHtml(c.source)}</span></summary>
${c.message ? `<p class="msg">${escapeHtml(c.message)}</p>` : ''}${(c.more ?? []).map((m) => `<p class="msg">also: ${escapeHtml(m)}</p>`).join('')}${c.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('')}
${c.screenshots.map((s) => `<figure><img alt="${escapeHtml(s.name)}" src="data:image/png;base64,${s.png}"><figcaption>${escapeHtml(s.name)}</figcaption></figure>`).join('')}
${c.exchanges.map(exchangeHtml).join('\n')}
</details>`,
    )
    .join('\n')
  const t = timing(report.checks, 10)
  const timingHtml = `<section id="timing"><h2>Where the time went</h2>
<p>Slowest checks: ${t.slowest.map((s) => `<a href="#check-${escapeHtml(s.id)}">${escapeHtml(s.id)}</a> ${(s.durationMs / 1000).toFixed(1)} s`).join(', ')}</p>
<p>Time per area (sum of check durations; parallel checks overlap): ${t.areas.map((a) => `${escapeHtml(a.area)} ${(a.durationMs / 1000).toFixed(1)} s`).join(', ')}</p></section>`
  const c = report.counts
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conformance report: ${escapeHtml(report.target.baseUrl)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222}
h1{font-size:1.3rem}.summary span{margin-right:1rem}
.check{border:1px solid #ddd;border-radius:4px;margin:.4rem 0;padding:.3rem .6rem}
.check summary{cursor:pointer}.v{display:inline-block;width:3.2rem;font-weight:bold}
.pass .v{color:#137333}.fail .v{color:#c5221f}.warn .v{color:#b06000}.info .v{color:#1967d2}.skip .v{color:#5f6368}.error .v{color:#a142f4}
.src{color:#5f6368;font-size:.85em}.msg{color:#c5221f;white-space:pre-wrap}.note{color:#5f6368}
pre{background:#f6f8fa;padding:.4rem;overflow:auto;white-space:pre-wrap;word-break:break-all;font-size:12px}
.x{border-top:1px dashed #ccc;margin-top:.4rem}.line{font-family:monospace}.ms{color:#5f6368}
img{max-width:100%;border:1px solid #ccc}
${THREAT_CSS}
</style></head><body>
<h1>Conformance report</h1>
<p>Target <code>${escapeHtml(report.target.baseUrl)}</code>${report.target.embedded ? ' (embedded reference server)' : ''}; suite ${escapeHtml(report.suite.version)}; ${escapeHtml(report.startedAt)}.</p>
<p class="summary" id="summary"><strong>${report.passed ? 'PASSED' : 'FAILED'}</strong>
<span>${escapeHtml(countsLine(c))}</span></p>
${causesHtml}
${timingHtml}
<p id="filters">Show: ${(['pass', 'fail', 'error', 'warn', 'info', 'skip'] as const).map((v) => `<label><input type="checkbox" value="${v}" checked> ${v}</label>`).join(' ')}</p>
${report.threats ? htmlThreats(report.threats) : ''}
<section id="checks">
${rows}
</section>
<script>
for (const box of document.querySelectorAll('#filters input')) box.addEventListener('change', () => {
  for (const el of document.querySelectorAll('.check[data-verdict="' + box.value + '"]')) el.hidden = !box.checked
})
</script>
</body></html>
`
}
