/**
 * The words by which the harness recognises the pages between the login and the client: a
 * consent page, a one-button "continue" interstitial, a logout confirmation. One list for the
 * browser driver (browser.ts, on the rendered page) and the HTTP session replay
 * (form-sign-in.ts `readApproveForm`, on the served HTML), so both answer the same pages.
 */

/**
 * Words of a control that approves or moves on (a consent page's "Allow", an interstitial's
 * "Continue as alice"), matched at the start of its visible label.
 */
export const APPROVE_LABEL =
  /^\W*(allow|approve|accept|authori[sz]e|agree|grant|yes|continue|proceed|confirm|ok|okay|next)\b/i
/** Words that make a control a refusal, a way out or a sign-out: never pressed by default. */
export const REFUSE_LABEL =
  /\b(deny|denied|cancel|reject|decline|refuse|don'?t|do not|not now|no|abort|back|switch|another|different)\b/i
/**
 * Labels of a sign-out control ("Yes, sign me out", "Log out", "End session"): a page that has
 * one is a logout confirmation (or offers a way out), which the built-in answers never press
 * through; a logout confirmation is answered only when the configuration says how.
 */
export const LOGOUT_LABEL =
  /\b(sign|log)\W*(me\W*|you\W*)?(out|off)\b|\blogout\b|\bend (the |your |this )?session\b|\bstay signed in\b/i
/** Page words that make a page with an approve control a consent page (for logs). */
export const CONSENT_WORDS =
  /consent|permission|access to|authori[sz]|wants to|would like to|scope/i

/**
 * The login page's cancel control when the configuration names none (`login.cancel`): a
 * button, a submit or button input, or a link or ARIA button labelled Cancel (English only:
 * another language's is configured).
 */
export const CANCEL_CONTROL = [
  'button[value=cancel i]',
  'button:has-text("Cancel")',
  'input[type=submit][value^="cancel" i]',
  'input[type=button][value^="cancel" i]',
  'input[type=submit][name=cancel i]',
  'a:has-text("Cancel")',
  '[role=button]:has-text("Cancel")',
].join(', ')

/**
 * Words of an error page's title or heading beyond the error itself (browser.ts ERROR_WORDS):
 * an apology or an inability ("Sorry, we could not sign you in", "Oops", "Unable to continue").
 */
export const ERROR_HEADING =
  /\b(sorry|oops|unable|problem|could ?n[o']?t|can ?n[o']?t|cannot|something went wrong)\b/i

/**
 * Labels of a control that signs in or goes on with a sign-in (a passkey-first login page's
 * only button): a page with one is a login page, whatever error it also shows.
 */
export const SIGN_IN_LABEL = /\b(sign|log)\W*(me\W*)?in\b|\blogin\b|passkey|security key/i

/**
 * Labels of a control by which the user refuses the request where it is asked (a consent
 * page's "Cancel", "Deny", "Don't allow"), matched at the start of its visible label: what a
 * user who cancels presses on a page after the login (AUTHZ-16). Narrower than REFUSE_LABEL,
 * which also holds ways round ("Use another account", "Back").
 */
export const DENY_LABEL =
  /^\W*(deny|cancel|reject|decline|refuse|don'?t allow|do not allow|no,? (thanks|don'?t allow))\b/i
