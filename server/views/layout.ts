import type { Branding } from '../store/store.ts'
import { html, safeUrl, type SafeHtml } from './html.ts'

/** The colour used when a branding record has none or an invalid one. */
const DEFAULT_COLOR = '#1A73E8'

/** The page frame shared by the login, error and logged-out pages; styles come from /assets. */
export function layout(options: {
  title: string
  branding?: Branding | undefined
  body: SafeHtml
  /** CSP nonce of the one inline style block (the brand colour). */
  nonce: string
}): SafeHtml {
  const { branding } = options
  const color =
    branding && /^#[0-9A-Fa-f]{6}$/.test(branding.brand_color)
      ? branding.brand_color
      : DEFAULT_COLOR
  const logo = safeUrl(branding?.logo_url)
  const privacy = safeUrl(branding?.privacy_policy_url)
  const terms = safeUrl(branding?.terms_of_service_url)
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${options.title}</title>
        <link rel="stylesheet" href="/assets/idp.css" />
        <style nonce="${options.nonce}">
          :root {
            --brand: ${color};
          }
        </style>
      </head>
      <body>
        <main class="card">
          <header class="brand">
            ${logo ? html`<img class="logo" src="${logo}" alt="${branding?.application_name ?? ''} logo" width="64" height="64" />` : ''}
            ${branding ? html`<p class="app-name">${branding.application_name}</p>` : ''}
          </header>
          ${options.body}
          ${
            privacy || terms
              ? html`<footer class="links">
                  ${privacy ? html`<a href="${privacy}" rel="noopener noreferrer">Privacy policy</a>` : ''}
                  ${terms ? html`<a href="${terms}" rel="noopener noreferrer">Terms of service</a>` : ''}
                </footer>`
              : ''
          }
        </main>
      </body>
    </html> `
}
