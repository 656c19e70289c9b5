import type { Branding } from '../store/store.ts'
import { html } from './html.ts'
import { layout } from './layout.ts'

/**
 * The error page shown where a redirect would be unsafe (unknown client, unregistered
 * redirect_uri, expired sign-in): RFC 6749 §4.1.2.1 forbids redirecting then.
 */
export function errorPage(options: {
  error: string
  description: string
  branding?: Branding | undefined
  nonce: string
  /** The page title: a sign-out's errors are not sign-in errors. */
  title?: 'Sign-in error' | 'Sign-out error'
}) {
  return layout({
    title: options.title ?? 'Sign-in error',
    branding: options.branding,
    nonce: options.nonce,
    body: html`<h1>Something went wrong</h1>
      <p class="error" role="alert">${options.description}</p>
      <p class="code">Error code: <code>${options.error}</code></p>
      <p>Return to the application you came from and try again.</p>`,
  })
}
