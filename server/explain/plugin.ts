import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi'
import { invalidRequest } from '../errors.ts'
import { html } from '../views/html.ts'
import { newNonce, page } from '../views/respond.ts'
import { endpointOf, type Explain, type Finding } from './findings.ts'

/** Endpoints whose credentials belong in a header or the body, and the names that give them away. */
const SECRET_PARAMS: Readonly<Record<string, readonly string[]>> = {
  '/auth/token': ['client_secret', 'code', 'code_verifier', 'refresh_token'],
  '/auth/introspect': ['client_secret', 'token'],
  '/auth/revoke': ['client_secret', 'token'],
  '/auth/user-info': ['access_token'],
}

function filterOf(request: Request): { since?: number; clientId?: string } {
  const q = request.query as Record<string, string | string[] | undefined>
  const since = q.since
  const clientId = q.client_id
  if (Array.isArray(since) || Array.isArray(clientId))
    throw invalidRequest('a parameter is repeated')
  if (since !== undefined && !/^\d{1,15}$/.test(since))
    throw invalidRequest('since must be the seq of a finding (a non-negative integer)')
  return {
    ...(since !== undefined ? { since: Number(since) } : {}),
    ...(typeof clientId === 'string' && clientId !== '' ? { clientId } : {}),
  }
}

const findingsPage = (findings: readonly Finding[], clientId: string | undefined, nonce: string) =>
  html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Client findings</title>
        <style nonce="${nonce}">
          body {
            font:
              14px/1.4 system-ui,
              sans-serif;
            margin: 1.5rem;
            color: #202124;
          }
          table {
            border-collapse: collapse;
            width: 100%;
          }
          th,
          td {
            text-align: left;
            vertical-align: top;
            padding: 0.4rem;
            border-bottom: 1px solid #dadce0;
          }
          .error {
            color: #c5221f;
            font-weight: 600;
          }
          .warning {
            color: #b06000;
            font-weight: 600;
          }
          .info {
            color: #1967d2;
          }
          code {
            font-size: 12px;
          }
        </style>
      </head>
      <body>
        <h1>Client findings</h1>
        <p id="summary">
          ${findings.length}
          finding${findings.length === 1 ? '' : 's'}${clientId ? ` for client ${clientId}` : ''}
          (${findings.filter((f) => f.severity === 'error').length} errors,
          ${findings.filter((f) => f.severity === 'warning').length} warnings,
          ${findings.filter((f) => f.severity === 'info').length} informational), newest first. The
          same list as JSON: <a href="/dev/findings.json">/dev/findings.json</a>.
        </p>
        ${
          findings.length === 0
            ? html`<p>
                No findings yet: every request so far followed the rules this server checks.
              </p>`
            : html`<table>
                <thead>
                  <tr>
                    <th>#</th>
                    <th>Severity</th>
                    <th>Finding</th>
                    <th>Client</th>
                    <th>Request</th>
                    <th>What to change</th>
                    <th>Reference</th>
                  </tr>
                </thead>
                <tbody>
                  ${[...findings].reverse().map(
                    (f) =>
                      html`<tr data-code="${f.code}">
                        <td>${String(f.seq)}</td>
                        <td class="${f.severity}">${f.severity}</td>
                        <td>
                          <code>${f.code}</code
                          ><br />${f.title}${f.detail ? html`<br /><small>${f.detail}</small>` : ''}
                        </td>
                        <td>${f.clientId ?? '-'}</td>
                        <td>${f.endpoint}<br /><small>${f.at}</small></td>
                        <td>${f.advice}</td>
                        <td>${f.reference}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
      </body>
    </html>`

/**
 * Client-check mode's HTTP side: records credentials sent in a URL query, and serves the
 * findings at /dev/findings (HTML) and /dev/findings.json. Registered only when explain is on.
 */
export const explainPlugin = (explain: Explain): Plugin<undefined> => ({
  name: 'explain',
  register(server) {
    server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
      const names = SECRET_PARAMS[request.path]
      if (names) {
        const sent = names.filter((n) => request.url.searchParams.has(n))
        if (sent.length > 0) {
          const clientId = request.url.searchParams.get('client_id') ?? undefined
          explain.record('token.in-query', {
            clientId,
            endpoint: endpointOf(request),
            detail: `in the query: ${sent.join(', ')}`,
          })
        }
      }
      return h.continue
    })
    server.route([
      {
        method: 'GET',
        path: '/dev/findings.json',
        handler: (request, h) => {
          const findings = explain.list(filterOf(request))
          return h
            .response({ findings, last_seq: findings.at(-1)?.seq ?? filterOf(request).since ?? 0 })
            .type('application/json')
            .header('cache-control', 'no-store')
        },
      },
      {
        method: 'GET',
        path: '/dev/findings',
        handler: (request, h) => {
          const filter = filterOf(request)
          const nonce = newNonce()
          return page(h, findingsPage(explain.list(filter), filter.clientId, nonce), { nonce })
        },
      },
    ])
  },
})
