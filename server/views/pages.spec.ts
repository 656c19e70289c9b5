import { createHash, randomBytes } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { test as base, expect, type Locator, type Page, type TestInfo } from '@playwright/test'
import { clients } from '../../fixtures/clients.ts'
import { users } from '../../fixtures/users.ts'

// Browser tests of the hosted login and error pages, in a real Chromium at phone and desktop
// widths (playwright.config.ts). The logged-out page does not exist yet and is not covered.

const CLIENT = clients[0]
const BRANDING = CLIENT.branding
const CALLBACK = CLIENT.redirectUris[0]
const [ALICE] = users
const LOGIN_FAILED = 'Incorrect username or password.'
const SCREENSHOT_DIR = 'reports/pages'

interface Idp {
  readonly baseUrl: string
}

/** What the fake client origins (https://*.example) saw: answered locally, never sent. */
interface ClientOrigins {
  /** Documents the browser was sent to (redirects to the client included). */
  readonly documents: string[]
}

const test = base.extend<{ clientOrigins: ClientOrigins }, { idp: Idp }>({
  idp: [
    async ({ launchOptions }, use) => {
      const baseUrl = process.env.PAGES_BASE_URL
      const pin = process.env.PAGES_SPKI_PIN
      if (!baseUrl || !pin) {
        throw new Error('run with `playwright test`: its global setup starts the reference server')
      }
      // the browser trusts exactly the verified leaf of the embedded server
      expect(launchOptions.args).toContain(`--ignore-certificate-errors-spki-list=${pin}`)
      await use({ baseUrl })
    },
    { scope: 'worker' },
  ],
  clientOrigins: async ({ page, idp }, use) => {
    const seen: ClientOrigins = { documents: [] }
    // DevTools-level interception: unlike route(), it also sees the IdP's redirect hops
    const cdp = await page.context().newCDPSession(page)
    cdp.on('Fetch.requestPaused', (event) => {
      const { requestId, resourceType, request } = event
      const reply =
        resourceType === 'Document'
          ? (seen.documents.push(request.url), { type: 'text/html', body: CLIENT_PAGE })
          : resourceType === 'Image'
            ? { type: 'image/svg+xml', body: LOGO_SVG }
            : undefined
      void cdp
        .send('Fetch.fulfillRequest', {
          requestId,
          responseCode: reply ? 200 : 404,
          responseHeaders: reply ? [{ name: 'content-type', value: reply.type }] : [],
          body: Buffer.from(reply?.body ?? '').toString('base64'),
        })
        .catch(() => undefined)
    })
    await cdp.send('Fetch.enable', {
      patterns: [{ urlPattern: 'https://*.example/*', requestStage: 'Request' }],
    })
    const stray: string[] = []
    const idpOrigin = new URL(idp.baseUrl).origin
    page.on('request', (request) => {
      const url = new URL(request.url())
      const local =
        url.origin === idpOrigin ||
        (url.protocol === 'https:' && url.hostname.endsWith('.example')) ||
        url.protocol === 'data:'
      if (!local) stray.push(request.url())
    })
    await use(seen)
    expect(stray, 'requests that would have left the machine').toEqual([])
  },
})

const CLIENT_PAGE = '<!doctype html><title>client</title><p>reached the client</p>'
const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">' +
  '<rect width="64" height="64" rx="12" fill="#1A73E8"/></svg>'

/** An authorization request of conformance-client with a fresh state and S256 challenge. */
function authorizeUrl(idp: Idp, overrides: Record<string, string> = {}) {
  const state = randomBytes(12).toString('base64url')
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)
  const url = new URL('/auth/authorize', idp.baseUrl)
  const params = {
    response_type: 'code',
    client_id: CLIENT.id,
    redirect_uri: CALLBACK,
    scope: 'openid',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  }
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return { url: url.href, state }
}

/** Opens the login page of a fresh authorization request. */
async function openLogin(page: Page, idp: Idp) {
  const request = authorizeUrl(idp)
  const response = await page.goto(request.url)
  expect(response?.status()).toBe(200)
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(
    `Sign in to ${BRANDING.application_name}`,
  )
  return { state: request.state, ...loginForm(page) }
}

function loginForm(page: Page) {
  return {
    username: page.getByLabel('Username'),
    password: page.getByLabel('Password'),
    signIn: page.getByRole('button', { name: 'Sign in' }),
    cancel: page.getByRole('button', { name: 'Cancel' }),
  }
}

/** Waits for the answer to the login form post and returns it with its Location. */
async function loginPost(page: Page, idp: Idp, submit: () => Promise<void>) {
  const [response] = await Promise.all([
    page.waitForResponse(
      (r) => r.url() === `${idp.baseUrl}/auth/login` && r.request().method() === 'POST',
    ),
    submit(),
  ])
  const location = await response.headerValue('location')
  return { status: response.status(), location: location ? new URL(location) : undefined }
}

/** Expects the redirect of a login post to the client's callback, and the browser there. */
async function expectCallback(
  page: Page,
  post: { status: number; location: URL | undefined },
  clientOrigins: ClientOrigins,
): Promise<URLSearchParams> {
  expect(post.status).toBe(303)
  const location = post.location
  if (!location) throw new Error('the login post redirected nowhere')
  expect(`${location.origin}${location.pathname}`).toBe(CALLBACK)
  await expect(page).toHaveURL(location.href)
  await expect(page.getByText('reached the client')).toBeVisible()
  expect(clientOrigins.documents).toEqual([location.href])
  return location.searchParams
}

/** A full-page screenshot per width, kept under reports/pages and attached to the result. */
async function keepScreenshot(page: Page, testInfo: TestInfo, name: string) {
  await mkdir(SCREENSHOT_DIR, { recursive: true })
  const path = `${SCREENSHOT_DIR}/${name}-${testInfo.project.name}.png`
  await page.screenshot({ path, fullPage: true })
  await testInfo.attach(`${name} (${testInfo.project.name})`, { path, contentType: 'image/png' })
}

type Box = NonNullable<Awaited<ReturnType<Locator['boundingBox']>>>

async function box(locator: Locator): Promise<Box> {
  await expect(locator).toBeVisible()
  const b = await locator.boundingBox()
  if (!b) throw new Error(`no box for ${locator.toString()}`)
  return b
}

const inside = (inner: Box, outer: Box) =>
  inner.x >= outer.x - 0.5 &&
  inner.y >= outer.y - 0.5 &&
  inner.x + inner.width <= outer.x + outer.width + 0.5 &&
  inner.y + inner.height <= outer.y + outer.height + 0.5

const overlap = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height

/**
 * The page fits the viewport's width (no horizontal scrollbar), the card lies within it, and
 * the given controls are inside the card, unobscured and do not overlap one another.
 */
async function expectLayoutIntact(page: Page, controls: Locator[]) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: (document.scrollingElement ?? document.documentElement).scrollWidth,
    innerWidth: window.innerWidth,
  }))
  expect(scrollWidth, 'horizontal overflow').toBeLessThanOrEqual(innerWidth)
  const viewport = page.viewportSize()
  if (!viewport) throw new Error('no viewport')
  const card = await box(page.locator('main.card'))
  expect(card.x).toBeGreaterThanOrEqual(0)
  expect(card.x + card.width).toBeLessThanOrEqual(viewport.width)
  const boxes: Box[] = []
  for (const control of controls) {
    const b = await box(control)
    expect(inside(b, card), `${control.toString()} inside the card`).toBe(true)
    for (const other of boxes) {
      expect(overlap(b, other), `${control.toString()} overlaps another control`).toBe(false)
    }
    boxes.push(b)
  }
  // actionability: visible, stable, enabled and not covered by another element
  for (const control of controls) await control.click({ trial: true, timeout: 2_000 })
}

test.describe('login page', () => {
  test('shows the client branding', async ({ page, idp, clientOrigins }, testInfo) => {
    await openLogin(page, idp)
    await expect(page).toHaveTitle(`Sign in to ${BRANDING.application_name}`)
    await expect(page.locator('.app-name')).toHaveText(BRANDING.application_name)
    const logo = page.locator('header.brand img.logo')
    await expect(logo).toHaveAttribute('src', BRANDING.logo_url)
    await expect(logo).toHaveAttribute('alt', `${BRANDING.application_name} logo`)
    // the logo was fetched (answered locally) and rendered
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(64)
    await expect(page.getByRole('link', { name: 'Privacy policy' })).toHaveAttribute(
      'href',
      BRANDING.privacy_policy_url,
    )
    await expect(page.getByRole('link', { name: 'Terms of service' })).toHaveAttribute(
      'href',
      BRANDING.terms_of_service_url,
    )
    // the brand colour reaches the primary button
    await expect(page.getByRole('button', { name: 'Sign in' })).toHaveCSS(
      'background-color',
      'rgb(26, 115, 232)',
    )
    expect(clientOrigins.documents).toEqual([])
    await keepScreenshot(page, testInfo, 'login')
  })

  test('has labelled fields with autocomplete hints', async ({ page, idp }) => {
    const form = await openLogin(page, idp)
    await expect(form.username).toHaveAttribute('id', 'username')
    await expect(form.username).toHaveAttribute('type', 'text')
    await expect(form.username).toHaveAttribute('autocomplete', 'username')
    await expect(form.password).toHaveAttribute('id', 'password')
    await expect(form.password).toHaveAttribute('type', 'password')
    await expect(form.password).toHaveAttribute('autocomplete', 'current-password')
    await expect(form.username).toHaveAccessibleName('Username')
    await expect(form.password).toHaveAccessibleName('Password')
  })

  test('is usable by keyboard: Tab order and Enter to submit', async ({
    page,
    idp,
    clientOrigins,
  }) => {
    const form = await openLogin(page, idp)
    await expect(form.username).toBeFocused() // autofocus
    await page.keyboard.type(ALICE.username)
    await page.keyboard.press('Tab')
    await expect(form.password).toBeFocused()
    await page.keyboard.press('Tab')
    await expect(form.signIn).toBeFocused()
    await page.keyboard.press('Tab')
    await expect(form.cancel).toBeFocused()
    await page.keyboard.press('Tab')
    await expect(page.getByRole('link', { name: 'Privacy policy' })).toBeFocused()
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Shift+Tab')
    await expect(form.password).toBeFocused()
    await page.keyboard.type(ALICE.password)
    const post = await loginPost(page, idp, () => page.keyboard.press('Enter'))
    const params = await expectCallback(page, post, clientOrigins)
    expect(params.get('code')).toBeTruthy()
    expect(params.get('error')).toBeNull()
  })

  test('signing in redirects to the callback with code and state', async ({
    page,
    idp,
    clientOrigins,
  }) => {
    const form = await openLogin(page, idp)
    await form.username.fill(ALICE.username)
    await form.password.fill(ALICE.password)
    const post = await loginPost(page, idp, () => form.signIn.click())
    const params = await expectCallback(page, post, clientOrigins)
    expect(params.get('code')).toMatch(/^\S{16,}$/)
    expect(params.get('state')).toBe(form.state)
    expect(params.get('iss')).toBe(idp.baseUrl)
  })

  test('a wrong password shows the generic error and the form stays usable', async ({
    page,
    idp,
    clientOrigins,
  }, testInfo) => {
    const form = await openLogin(page, idp)
    await form.username.fill(ALICE.username)
    await form.password.fill('not-the-password')
    const wrong = await loginPost(page, idp, () => form.signIn.click())
    expect(wrong.status).toBe(401)
    expect(wrong.location).toBeUndefined()
    const alert = page.getByRole('alert')
    await expect(alert).toHaveText(LOGIN_FAILED)
    await expect(form.username).toHaveValue(ALICE.username)
    await expect(form.username).toHaveAttribute('aria-invalid', 'true')
    await expect(form.username).toHaveAccessibleDescription(LOGIN_FAILED)
    await expect(form.password).toHaveValue('')
    await expectLayoutIntact(page, [alert, form.username, form.password, form.signIn, form.cancel])
    await keepScreenshot(page, testInfo, 'login-error')

    // an unknown user gets the very same message (no user enumeration)
    await form.username.fill('no-such-user')
    await form.password.fill('not-the-password')
    const unknown = await loginPost(page, idp, () => form.password.press('Enter'))
    expect(unknown.status).toBe(401)
    await expect(alert).toHaveText(LOGIN_FAILED)

    // the page is still usable: the right password now signs in
    await form.username.fill(ALICE.username)
    await form.password.fill(ALICE.password)
    const post = await loginPost(page, idp, () => form.signIn.click())
    const params = await expectCallback(page, post, clientOrigins)
    expect(params.get('code')).toBeTruthy()
    expect(params.get('state')).toBe(form.state)
  })

  test('cancel redirects to the callback with access_denied', async ({
    page,
    idp,
    clientOrigins,
  }) => {
    const form = await openLogin(page, idp)
    // formnovalidate: cancelling needs no username or password
    const post = await loginPost(page, idp, () => form.cancel.click())
    const params = await expectCallback(page, post, clientOrigins)
    expect(params.get('error')).toBe('access_denied')
    expect(params.get('state')).toBe(form.state)
    expect(params.get('code')).toBeNull()
  })

  test('layout is intact at this width', async ({ page, idp }) => {
    const form = await openLogin(page, idp)
    await expectLayoutIntact(page, [
      page.locator('header.brand img.logo'),
      form.username,
      form.password,
      form.signIn,
      form.cancel,
      page.getByRole('link', { name: 'Privacy policy' }),
      page.getByRole('link', { name: 'Terms of service' }),
    ])
  })
})

test.describe('error page', () => {
  test('an unknown client_id gets the error page, never a redirect', async ({
    page,
    idp,
    clientOrigins,
  }, testInfo) => {
    const request = authorizeUrl(idp, { client_id: 'no-such-client' })
    const response = await page.goto(request.url)
    expect(response?.status()).toBeGreaterThanOrEqual(400)
    expect(response?.status()).toBeLessThan(500)
    expect(await response?.headerValue('location')).toBeNull()
    expect(page.url()).toBe(request.url)
    await expect(page).toHaveTitle('Sign-in error')
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Something went wrong')
    await expect(page.getByRole('alert')).toContainText('is not registered')
    await expect(page.locator('p.code code')).toHaveText('invalid_client')
    // no branding for a client that does not exist, and no form
    await expect(page.locator('img')).toHaveCount(0)
    await expect(page.locator('form')).toHaveCount(0)
    expect(clientOrigins.documents).toEqual([])
    await expectLayoutIntact(page, [
      page.getByRole('heading', { level: 1 }),
      page.getByRole('alert'),
    ])
    await keepScreenshot(page, testInfo, 'error')
  })

  test('an unregistered redirect_uri gets the error page, never a redirect', async ({
    page,
    idp,
    clientOrigins,
  }) => {
    const request = authorizeUrl(idp, { redirect_uri: 'https://evil.example/callback' })
    const response = await page.goto(request.url)
    expect(response?.status()).toBe(400)
    expect(page.url()).toBe(request.url)
    await expect(page.getByRole('alert')).toContainText(
      "redirect_uri 'https://evil.example/callback' is not registered for client",
    )
    await expect(page.locator('p.code code')).toHaveText('invalid_request')
    expect(clientOrigins.documents).toEqual([])
  })
})

test.describe('logout pages', () => {
  test('without a hint the user confirms, then sees the logged-out page and is signed out', async ({
    page,
    idp,
    clientOrigins,
  }, testInfo) => {
    const form = await openLogin(page, idp)
    await form.username.fill(ALICE.username)
    await form.password.fill(ALICE.password)
    await expectCallback(page, await loginPost(page, idp, () => form.signIn.click()), clientOrigins)

    const confirm = await page.goto(`${idp.baseUrl}/auth/logout`)
    expect(confirm?.status()).toBe(200)
    await expect(page).toHaveTitle('Sign out')
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Sign out?')
    const signOut = page.getByRole('button', { name: 'Sign out' })
    await expectLayoutIntact(page, [page.getByRole('heading', { level: 1 }), signOut])
    await keepScreenshot(page, testInfo, 'logout-confirm')

    await signOut.click()
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('You are signed out')
    await expect(page.getByRole('status')).toHaveText(/Your session has ended/)
    await expectLayoutIntact(page, [
      page.getByRole('heading', { level: 1 }),
      page.getByRole('status'),
    ])
    await keepScreenshot(page, testInfo, 'logged-out')

    // the session really ended: authorizing again shows the login form
    await openLogin(page, idp)
  })
})
