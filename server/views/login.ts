import type { Branding } from '../store/store.ts'
import { html, type SafeHtml } from './html.ts'
import { layout } from './layout.ts'

export interface LoginView {
  readonly interaction: string
  readonly csrf: string
  readonly branding: Branding | undefined
  /** Escaped when it is a string; SafeHtml only from the self-test's broken server. */
  readonly username?: string | SafeHtml | undefined
  /** A generic failure message: the same for an unknown user and a wrong password. */
  readonly error?: string | undefined
  readonly nonce: string
}

/** The hosted login page: labelled fields, keyboard order, a cancel action. */
export function loginPage(view: LoginView) {
  const name = view.branding?.application_name
  return layout({
    title: name ? `Sign in to ${name}` : 'Sign in',
    branding: view.branding,
    nonce: view.nonce,
    body: html`<h1>Sign in${name ? html` to <span class="app">${name}</span>` : ''}</h1>
      ${view.error ? html`<p class="error" role="alert" id="login-error">${view.error}</p>` : ''}
      <form method="post" action="/auth/login" class="login" autocomplete="on">
        <input type="hidden" name="interaction" value="${view.interaction}" />
        <input type="hidden" name="csrf" value="${view.csrf}" />
        <label for="username">Username</label>
        <input
          id="username"
          name="username"
          type="text"
          autocomplete="username"
          autocapitalize="none"
          spellcheck="false"
          required
          autofocus
          value="${view.username ?? ''}"
          ${view.error ? html` aria-describedby="login-error" aria-invalid="true"` : ''}
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
        />
        <div class="actions">
          <button type="submit" name="action" value="login" class="primary">Sign in</button>
          <button type="submit" name="action" value="cancel" class="secondary" formnovalidate>
            Cancel
          </button>
        </div>
      </form>`,
  })
}
