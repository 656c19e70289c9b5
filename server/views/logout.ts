import type { Branding } from '../store/store.ts'
import { html } from './html.ts'
import { layout } from './layout.ts'

/** The default page after logout (INTERFACE.md §4.6). */
export function loggedOutPage(options: { branding?: Branding | undefined; nonce: string }) {
  return layout({
    title: 'Signed out',
    branding: options.branding,
    nonce: options.nonce,
    body: html`<h1>You are signed out</h1>
      <p role="status">Your session has ended. You can close this window.</p>`,
  })
}

/**
 * Asked before ending a session that no valid id_token_hint vouches for (RP-Initiated Logout
 * §6: a cross-site logout request must not silently end the session).
 */
export function logoutConfirmPage(options: {
  interaction: string
  csrf: string
  branding?: Branding | undefined
  nonce: string
}) {
  return layout({
    title: 'Sign out',
    branding: options.branding,
    nonce: options.nonce,
    body: html`<h1>Sign out?</h1>
      <p>Do you want to end your session?</p>
      <form method="post" action="/auth/logout" class="login">
        <input type="hidden" name="interaction" value="${options.interaction}" />
        <input type="hidden" name="csrf" value="${options.csrf}" />
        <div class="actions">
          <button type="submit" name="action" value="confirm" class="primary">Sign out</button>
        </div>
      </form>`,
  })
}
