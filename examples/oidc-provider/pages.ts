import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * The example deployments' own interaction pages (node-oidc-provider leaves them to the
 * deployment): the plain login form, and the pages that ProviderFeatures turn on.
 */

export const esc = (s: string): string => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Writes an HTML page with the headers a deployment's interaction pages carry. */
export function html(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    // same-origin posts keep their Origin header (no-referrer would make it "null")
    'referrer-policy': 'strict-origin',
    // scripts only from the example's own origin (the script login's file), none inline
    'content-security-policy': "default-src 'self'; frame-ancestors 'none'",
  })
  res.end(body)
}

const head = (title: string): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>`

const cancelForm = (uid: string, label = 'Cancel'): string =>
  `<form method="post" action="/interaction/${esc(uid)}/abort">
<button type="submit" value="cancel">${esc(label)}</button>
</form>`

/** The server-rendered login form. */
export const loginPage = (uid: string, error?: string): string => `${head('Sign in')}
<body><main><h1>Sign in</h1>
${error ? `<p role="alert">${esc(error)}</p>` : ''}
<form method="post" action="/interaction/${esc(uid)}/login">
<label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>
${cancelForm(uid)}</main></body></html>`

/**
 * A login page as a single-page application serves it: no form in the HTML, only a script
 * (LOGIN_SCRIPT) that builds one, posts the credentials as JSON with fetch and then moves the
 * window to where the answer says.
 */
export const scriptLoginPage = (uid: string): string => `${head('Sign in')}
<body><main id="app" data-uid="${esc(uid)}"><h1>Sign in</h1>
<p id="loading">Loading…</p><noscript>Signing in needs JavaScript.</noscript></main>
<script src="/interaction-assets/login.js" defer></script></body></html>`

/** The script that builds the login form of scriptLoginPage (served from the same origin). */
export const LOGIN_SCRIPT = `'use strict'
;(function () {
  var app = document.getElementById('app')
  var uid = app.getAttribute('data-uid')
  // the form appears a moment after the page has loaded, as an application's bundle renders it
  setTimeout(function () {
    var form = document.createElement('form')
    form.setAttribute('novalidate', '')
    var alert = document.createElement('p')
    alert.setAttribute('role', 'alert')
    alert.hidden = true
    function field(label, name, type, autocomplete) {
      var l = document.createElement('label')
      l.textContent = label + ' '
      var input = document.createElement('input')
      input.name = name
      input.type = type
      input.autocomplete = autocomplete
      input.required = true
      l.appendChild(input)
      form.appendChild(l)
      return input
    }
    var username = field('Username', 'username', 'text', 'username')
    var password = field('Password', 'password', 'password', 'current-password')
    var button = document.createElement('button')
    button.type = 'submit'
    button.textContent = 'Sign in'
    form.appendChild(button)
    var cancel = document.createElement('form')
    cancel.method = 'post'
    cancel.action = '/interaction/' + encodeURIComponent(uid) + '/abort'
    var no = document.createElement('button')
    no.type = 'submit'
    no.textContent = 'Cancel'
    cancel.appendChild(no)
    form.addEventListener('submit', function (event) {
      event.preventDefault()
      button.disabled = true
      fetch('/interaction/' + encodeURIComponent(uid) + '/login-json', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ username: username.value, password: password.value }),
      })
        .then(function (res) {
          return res.json().then(function (body) {
            if (res.ok && body.location) return window.location.assign(body.location)
            alert.textContent = body.error || 'Sign-in failed.'
            alert.hidden = false
            button.disabled = false
          })
        })
        .catch(function () {
          alert.textContent = 'Sign-in failed, try again.'
          alert.hidden = false
          button.disabled = false
        })
    })
    var loading = document.getElementById('loading')
    if (loading) loading.remove()
    app.appendChild(alert)
    app.appendChild(form)
    app.appendChild(cancel)
  }, 150)
})()
`

/** "Continue as …?": shown on an authorization while the user's session is alive. */
export const continuePage = (uid: string, name: string): string => `${head('Continue')}
<body><main><h1>Welcome back</h1>
<p>You are signed in as <strong>${esc(name)}</strong>.</p>
<form method="post" action="/interaction/${esc(uid)}/continue">
<button type="submit">Continue</button>
</form>
<p><a href="/interaction/${esc(uid)}?switch=1">Use another account</a></p>
${cancelForm(uid)}</main></body></html>`

/** The consent page: what the client asks for, Allow or Deny. */
export const consentPage = (
  uid: string,
  client: string,
  scopes: readonly string[],
): string => `${head('Allow access')}
<body><main><h1>Allow ${esc(client)} to access your account?</h1>
<ul>${scopes.map((s) => `<li>${esc(s)}</li>`).join('')}</ul>
<form method="post" action="/interaction/${esc(uid)}/confirm">
<button type="submit">Allow</button>
</form>
${cancelForm(uid, 'Deny')}</main></body></html>`

/** A request body of at most 64 KiB, as text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > 64 * 1024) throw new Error('body too large')
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
