import { requirements, type Requirement, type RequirementId } from '../requirements.ts'
import type { Browser, BrowserContext } from '@playwright/test'
import { launchBrowser } from './browser.ts'
import { createHttp, type Http } from './http.ts'
import { redactResult, redactUrl } from './redact.ts'
import type { Target } from './target.ts'
import type { CheckResult, Level, Verdict } from './types.ts'

/** What a check body receives. */
export interface CheckContext {
  readonly target: Target
  readonly http: Http
  /** Records an observation that does not change the verdict. */
  note(message: string): void
  /** Ends the check as skipped, with the reason (never counted as a pass). */
  skip(reason: string): never
  /** Keeps a PNG screenshot as evidence. */
  screenshot(name: string, png: Buffer): void
  /** A fresh browser context (own cookies), closed when the check ends. */
  newBrowserContext(): Promise<BrowserContext>
}

/** What the checks of one run share: one browser, launched on first use. */
export interface RunResources {
  browser(): Promise<Browser>
  close(): Promise<void>
}

export function createRunResources(target: Pick<Target, 'baseUrl' | 'ca'>): RunResources {
  let browser: Promise<Browser> | undefined
  return {
    browser: () => (browser ??= launchBrowser(target)),
    async close() {
      if (browser) await (await browser.catch(() => undefined))?.close()
      browser = undefined
    },
  }
}

export type CheckBody = (ctx: CheckContext) => Promise<void>

class Skip extends Error {
  override readonly name = 'Skip'
}

export interface CheckOptions {
  /**
   * The check changes state that other checks see (the target's clock or rate limits, a
   * rate-limit budget it exhausts, a login throttle it trips): it runs alone, never beside
   * another check. Only exclusive checks may use the target's controls.
   */
  readonly exclusive?: boolean
}

const registry = new Map<RequirementId, { body: CheckBody; exclusive: boolean }>()

/**
 * Registers the check for a catalogue row. Title, level and source come from the catalogue.
 * `check(id, { exclusive: true }, body)` registers one that must run alone.
 */
export function check(id: RequirementId, body: CheckBody): void
export function check(id: RequirementId, options: CheckOptions, body: CheckBody): void
export function check(
  id: RequirementId,
  bodyOrOptions: CheckBody | CheckOptions,
  maybeBody?: CheckBody,
): void {
  if (registry.has(id)) throw new Error(`check ${id} is registered twice`)
  const [options, body] =
    typeof bodyOrOptions === 'function' ? [{}, bodyOrOptions] : [bodyOrOptions, maybeBody]
  if (!body) throw new Error(`check ${id} has no body`)
  registry.set(id, { body, exclusive: options.exclusive ?? false })
}

/** Whether the check must run alone (see CheckOptions.exclusive). */
export function isExclusive(id: RequirementId): boolean {
  return registry.get(id)?.exclusive ?? false
}

/**
 * The target as a check sees it: a check not registered as exclusive gets controls that
 * refuse to act, so a check that moves the clock cannot slip into a parallel batch unnoticed.
 */
function targetFor(id: RequirementId, target: Target, exclusive: boolean): Target {
  if (exclusive || !target.controls) return target
  const refuse = (): never => {
    throw new Error(
      `check ${id} uses the target's controls but is not registered with { exclusive: true }`,
    )
  }
  return {
    ...target,
    controls: { advanceClock: refuse, setRateLimit: refuse, reset: () => undefined },
  }
}

/** Every registered check ID, in catalogue order. */
export function registeredChecks(): RequirementId[] {
  return (Object.keys(requirements) as RequirementId[]).filter((id) => registry.has(id))
}

const failedVerdict: Record<Level, Verdict> = { MUST: 'fail', SHOULD: 'warn', MAY: 'info' }

/** How long one check may take before it fails as timed out. */
export const CHECK_TIMEOUT_MS = 60_000

/** Runs one check against a target and returns its result; never throws. */
export async function runCheck(
  id: RequirementId,
  target: Target,
  resources: RunResources,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<CheckResult> {
  const entry = registry.get(id)
  const req: Requirement = requirements[id]
  const http = createHttp(target)
  const notes: string[] = []
  const screenshots: { name: string; png: string }[] = []
  const contexts: BrowserContext[] = []
  const started = performance.now()
  const result = (verdict: Verdict, message: string | undefined): CheckResult =>
    redactResult({
      id,
      ...req,
      verdict,
      message,
      notes,
      exchanges: http.exchanges,
      screenshots,
      durationMs: Math.round(performance.now() - started),
    })
  if (!entry) return result('skip', 'no check is registered for this requirement')
  const ctx: CheckContext = {
    target: targetFor(id, target, entry.exclusive),
    http,
    note: (m) => notes.push(m),
    skip: (reason) => {
      throw new Skip(reason)
    },
    screenshot: (name, png) => screenshots.push({ name, png: png.toString('base64') }),
    async newBrowserContext() {
      const context = await (await resources.browser()).newContext({ ignoreHTTPSErrors: false })
      contexts.push(context)
      return context
    },
  }
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      entry.body(ctx),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs)
      }),
    ])
    return result('pass', undefined)
  } catch (err) {
    if (err instanceof Skip) return result('skip', err.message)
    // what the browser showed when the check failed is often the quickest explanation
    for (const context of contexts)
      for (const page of context.pages()) {
        const png = await page.screenshot({ fullPage: true, timeout: 5000 }).catch(() => undefined)
        if (png) ctx.screenshot(`page when the check failed: ${redactUrl(page.url())}`, png)
      }
    return result(failedVerdict[req.level], describe(err))
  } finally {
    clearTimeout(timer)
    await Promise.all(contexts.map((c) => c.close().catch(() => undefined)))
    if (entry.exclusive) target.controls?.reset()
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const cause = (err as Error & { cause?: unknown }).cause
  const base = err.message.length > 2000 ? `${err.message.slice(0, 2000)}…` : err.message
  return cause instanceof Error ? `${base} (${cause.message})` : base
}
