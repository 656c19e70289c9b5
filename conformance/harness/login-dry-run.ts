import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from '@playwright/test'
import { browse, describeStep, launchBrowser, loginDetector } from './browser.ts'
import { createHttp } from './http.ts'
import { oidc, oidcConfig } from './oidc.ts'
import { redactUrl } from './redact.ts'
import { couldNotGetPast } from './flows.ts'
import type { Target } from './target.ts'

export interface DryRunResult {
  /** Whether the IdP redirected to the client with a code. */
  readonly signedIn: boolean
  /** What happened, one line per event (credentials never appear). */
  readonly log: readonly string[]
  /** Screenshot files written, in order. */
  readonly screenshots: readonly string[]
}

/**
 * `--login-dry-run`: signs the primary user in once, as the checks would (an authorization
 * request built by openid-client with PKCE S256, state and nonce, then the login steps), and
 * shows what it did: a log line per event and a screenshot after each step, in `dir`.
 */
export async function loginDryRun(
  target: Target,
  dir: string,
  say: (line: string) => void,
): Promise<DryRunResult> {
  mkdirSync(dir, { recursive: true })
  const log: string[] = []
  const screenshots: string[] = []
  const note = (line: string): void => {
    log.push(line)
    say(line)
  }
  const shoot = async (name: string, page: Page): Promise<void> => {
    const file = join(dir, `login-${String(screenshots.length + 1).padStart(2, '0')}-${name}.png`)
    try {
      writeFileSync(file, await page.screenshot({ fullPage: true }))
      screenshots.push(file)
      note(`  screenshot ${file}`)
    } catch (err) {
      note(`  (no screenshot: ${(err as Error).message.split('\n')[0] ?? ''})`)
    }
  }
  const http = createHttp(target)
  const client = target.clients.main
  const user = target.users.primary
  let signedIn = false
  const browser = await launchBrowser(target)
  try {
    if (!client.redirectUri) {
      note(`client ${client.id} has no redirectUri in the target configuration: cannot sign in`)
      return { signedIn, log, screenshots }
    }
    const config = await oidcConfig({ target, http }, client)
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: client.redirectUri,
      scope: 'openid',
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    })
    note(`authorization request for client ${client.id}: ${url.origin}${url.pathname}`)
    note(
      target.login?.steps
        ? `login steps from the configuration (${target.login.steps.map(describeStep).join('; ')})`
        : 'login steps: the usual username/password form (no login.steps in the configuration)',
    )
    note(`login page detected by: ${loginDetector(target.login)}`)
    for (const i of target.interactions ?? [])
      note(
        `interaction "${i.name}" (${i.kind ?? 'other'}) recognised by ${[i.url ? `url ~ /${i.url}/` : '', i.detect ? `selector ${i.detect}` : ''].filter(Boolean).join(' and ')}: ${i.steps.map((st) => `${describeStep(st)}${st.optional ? ' (if shown)' : ''}`).join('; ')}`,
      )
    note(
      'built in: a visible password form (login), an approve-like button (consent, continue), a control naming the user (account chooser)',
    )
    const context = await browser.newContext()
    try {
      const outcome = await browse(context, target, url.toString(), http, {
        user,
        onLoginPage: async (page) => {
          note(`login page shown at ${redactUrl(page.url())}`)
          await shoot('login-page', page)
        },
        onPage: async (event, page, kind) => {
          const slug = (t: string): string =>
            t
              .replace(/[^a-z]+/gi, '-')
              .replace(/^-|-$/g, '')
              .slice(0, 40)
              .toLowerCase()
          // the login page has its own lines and screenshots: the page, then each step
          if (event.startsWith('after ')) {
            if (kind === 'login') return
            note(`done: ${event.slice(6)}`)
            await shoot(`after-${slug(event.slice(6))}`, page)
            return
          }
          note(`page met: ${event}`)
          if (kind !== 'login') await shoot(slug(event.replace(/ at \S+$/, '')), page)
        },
        onLoginStep: async (step, page) => {
          note(`done: ${step}`)
          const n = /^step (\d+):/.exec(step)?.[1]
          await shoot(n ? `after-step-${n}` : 'after-login', page)
        },
      }).catch(async (err: unknown) => {
        note(`FAILED: ${(err as Error).message}`)
        const page = context.pages().at(-1)
        if (page) await shoot('failed', page)
        return undefined
      })
      if (outcome) {
        if (!outcome.loginShown)
          note('no login page was detected (a live session, or the detect selector does not match)')
        if (outcome.callback) {
          const callback = new URL(outcome.callback)
          const error = callback.searchParams.get('error')
          signedIn = !error && callback.searchParams.has('code')
          note(
            signedIn
              ? `signed in: the IdP redirected to ${callback.origin}${callback.pathname} with a code`
              : `the IdP redirected to ${callback.origin}${callback.pathname} with error=${error ?? '(none)'} ${callback.searchParams.get('error_description') ?? ''}`.trimEnd(),
          )
        } else {
          const stop = outcome.stopped
          note(
            stop && stop.kind !== 'error-page' && stop.kind !== 'login-again'
              ? `STUCK: ${couldNotGetPast(stop, url.toString())}`
              : `the IdP never redirected to ${client.redirectUri}; the browser is at ${redactUrl(outcome.page.url())}${stop ? ` (${stop.kind === 'error-page' ? 'an error page' : 'the login page again after the sign-in'}: "${stop.title}": ${stop.text.slice(0, 160)})` : ''}`,
          )
          await shoot('final', outcome.page)
        }
      }
    } finally {
      await context.close().catch(() => undefined)
    }
  } finally {
    await browser.close()
    writeFileSync(join(dir, 'login-dry-run.log'), `${log.join('\n')}\n`)
  }
  return { signedIn, log, screenshots }
}
